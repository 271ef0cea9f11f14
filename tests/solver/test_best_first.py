"""Best-first search: legal winning lines, verdicts that agree with the depth-first search,
budgets honoured, and only safe foundation moves forced."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.games import Antares, Autoplay, Game, Move, Options, Scorpion
from server.solver import Budget, Solved, Unknown, Unwinnable
from server.solver.best_first import best_first
from server.solver.pruning import POLL_EVERY, forced_home
from server.solver.scorpion_search import depth_first_scorpion
from tests.games.positions import antares, play, scorpion

BUDGET = Budget(seconds=10)
#: An Antares deal that best-first search does not decide within 4 seconds.
HARD_DEAL = 19


def hard_game() -> Game:
    return Antares.new(HARD_DEAL, Options(autoplay=Autoplay.OFF))


@pytest.mark.parametrize("autoplay", list(Autoplay), ids=lambda a: a.value)
def test_line_found_is_legal_and_wins_and_the_game_is_left_unchanged(autoplay: Autoplay) -> None:
    game = Antares.new(2, Options(autoplay=autoplay))
    before = game.full_view(), game.moves
    result = best_first(game, BUDGET)
    assert (game.full_view(), game.moves) == before
    assert isinstance(result, Solved)
    assert result.found == len(result.moves)
    play(game, *result.moves)
    assert game.is_won()


def test_won_position_is_solved_with_no_move() -> None:
    result = best_first(antares("home: KC KS KH KD"), BUDGET)
    assert isinstance(result, Solved)
    assert result.moves == ()


def test_stuck_position_is_unwinnable_after_no_node() -> None:
    # Aces under nines, nothing builds on anything, the cells are full.
    game = antares(
        "s1: AC 9D\ns2: AS 9H\ns3: AH 9S\ns4: AD 9C\nf1: 5C\nf2: 5S\nf3: 5H\nf4: 5D\nc1: 2C\nc2: 2S\nc3: 2H\nc4: 2D"
    )
    assert game.legal_moves() == []
    result = best_first(game, BUDGET)
    assert isinstance(result, Unwinnable)
    assert result.stats.nodes == 0


# -- agreement with the depth-first Scorpion search -------------------------------------------------


@pytest.mark.parametrize("deal", [4, 8])
def test_both_searches_prove_a_lost_scorpion_deal_lost(deal: int) -> None:
    game = Scorpion.new(deal)
    ours, theirs = best_first(game, BUDGET), depth_first_scorpion(game, BUDGET)
    assert isinstance(ours, Unwinnable)
    assert isinstance(theirs, Unwinnable)
    # The Scorpion search also prunes positions its lost-position test proves lost.
    assert theirs.stats.nodes <= ours.stats.nodes


@pytest.mark.parametrize("deal", [5, 33])
def test_both_searches_win_a_winnable_scorpion_deal(deal: int) -> None:
    game = Scorpion.new(deal)
    for result in (best_first(game, BUDGET), depth_first_scorpion(game, BUDGET)):
        assert isinstance(result, Solved)
        replay = game.copy()
        play(replay, *result.moves)
        assert replay.is_won()


@pytest.mark.parametrize(
    "text",
    [
        "1: <QS> KS\n2: <JS> 4S\n3: <TS> 3S\n4: <9S> 2S\n5: <8S> AS\n6: <7S> 6S\n7: 5S",
        "1: KH\n4: 5C\n5: 6D\n6: 7S\n7: 8H\nstock: 2S 3S 4S",
        "1: <QS> KS\n2: JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS",
    ],
    ids=["seven-under-six", "cycling-king", "queen-under-king"],
)
def test_both_searches_agree_on_small_scorpion_positions(text: str) -> None:
    game = scorpion(text)
    ours, theirs = best_first(game, BUDGET), depth_first_scorpion(game, BUDGET)
    assert type(ours) is type(theirs)
    if isinstance(ours, Unwinnable):
        assert theirs.stats.nodes <= ours.stats.nodes  # it also prunes positions proved lost


# -- budgets -------------------------------------------------------------------------------------------


def test_node_budget_stops_within_one_poll() -> None:
    result = best_first(hard_game(), Budget(nodes=500))
    assert isinstance(result, Unknown)
    assert result.reason == "nodes"
    assert 500 <= result.stats.nodes <= 500 + POLL_EVERY


def test_time_budget_is_honoured() -> None:
    start = time.perf_counter()
    result = best_first(hard_game(), Budget(seconds=0.2))
    assert isinstance(result, Unknown)
    assert result.reason == "seconds"
    assert time.perf_counter() - start < 1.0


def test_position_cap_gives_memory() -> None:
    result = best_first(hard_game(), Budget(max_positions=1000))
    assert isinstance(result, Unknown)
    assert result.reason == "memory"


def test_interrupt_gives_interrupted() -> None:
    result = best_first(hard_game(), Budget(interrupt=lambda: True))
    assert isinstance(result, Unknown)
    assert result.reason == "interrupted"
    assert result.stats.nodes == POLL_EVERY


# -- forced safe foundation moves ------------------------------------------------------------------------


def safe_to_send_home(game: Game, move: Move) -> bool:
    """The safe rule: rank 1 or 2, or both foundations of the other colour at rank - 1 or more."""
    card = game.piles[move.source][-1]
    rank = card % 13 + 1
    other_colour = (2, 3) if card < 26 else (0, 1)
    return rank <= 2 or all(len(game.piles[Antares.FOUNDATION + suit]) >= rank - 1 for suit in other_colour)


@settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.integers(1, 10**6), data=st.data())
def test_forced_moves_are_safe_foundation_moves(deal: int, data: st.DataObject) -> None:
    game = Antares.new(deal, Options(autoplay=Autoplay.OFF))
    for _ in range(data.draw(st.integers(0, 150), label="steps")):
        moves = game.legal_moves()
        if not moves:
            break
        forced = forced_home(game, moves)
        safe = [move for move in moves if move.target >= Antares.FOUNDATION and safe_to_send_home(game, move)]
        if safe:
            assert len(forced) == 1
            assert forced[0] in safe
        else:
            assert forced == moves
        # Play on as the search does (forced moves first), so foundations grow and the
        # rule's other-colour condition gets tested, not only Aces and twos.
        game.push(forced[data.draw(st.integers(0, len(forced) - 1), label="move")])


def test_an_unsafe_foundation_move_is_not_forced() -> None:
    # 3H could go home, but 2C and 2S (which could lie on it in a FreeCell pile) are not home.
    game = antares("f1: 3H\nf2: 2C\nf3: 2S\nhome: 2H")
    moves = game.legal_moves()
    assert Move(4, 1, Antares.FOUNDATION + 2) in moves
    assert forced_home(game, moves) == moves
