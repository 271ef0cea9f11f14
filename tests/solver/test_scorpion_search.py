"""The compact depth-first Scorpion search: engine-legal winning lines, sound verdicts, budgets."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.games import Game, Scorpion
from server.solver import Budget, Solved, Unknown, Unwinnable
from server.solver.best_first import best_first
from server.solver.pruning import POLL_EVERY
from server.solver.scorpion_search import _encode, _moves, depth_first_scorpion
from tests.games.positions import play, scorpion
from tests.solver.naive_search import naive_search
from tests.thorough import examples

BUDGET = Budget(seconds=10)
#: A Scorpion deal that depth-first search does not decide within 4 seconds.
HARD_DEAL = 27


def assert_wins(game: Game, result: Solved) -> None:
    replay = game.copy()
    play(replay, *result.moves)
    assert replay.is_won()


@pytest.mark.parametrize("deal", [5, 33, 37, 100])
def test_line_found_replays_through_the_engine_to_a_win(deal: int) -> None:
    game = Scorpion.new(deal)
    before = game.full_view(), game.moves
    result = depth_first_scorpion(game, BUDGET)
    assert (game.full_view(), game.moves) == before
    assert isinstance(result, Solved)
    assert result.found == len(result.moves)
    assert sum(move.is_deal for move in result.moves) == 1  # the stock is dealt exactly once
    assert_wins(game, result)


@pytest.mark.parametrize("deal", [5, 33])
@pytest.mark.parametrize("played", [10, 25, 40])
def test_searching_from_a_game_in_progress_agrees_with_best_first(deal: int, played: int) -> None:
    """Positions along a winning line, and the positions one other legal move away from them."""
    game = Scorpion.new(deal)
    line = depth_first_scorpion(game, BUDGET)
    assert isinstance(line, Solved)
    play(game, *line.moves[:played])
    positions = [game]
    for move in game.legal_moves():
        if move != line.moves[played]:
            other = game.copy()
            play(other, move)
            positions.append(other)
    for position in positions:
        ours, theirs = depth_first_scorpion(position, BUDGET), best_first(position, BUDGET)
        assert type(ours) is type(theirs)
        if isinstance(ours, Solved):
            assert_wins(position, ours)
        elif isinstance(ours, Unwinnable):
            # Ours prunes lost positions and plays safe moves alone: it visits fewer positions.
            assert ours.stats.nodes <= theirs.stats.nodes
    assert isinstance(depth_first_scorpion(game, BUDGET), Solved)


@settings(deadline=None, max_examples=examples(30), suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.integers(1, 10**6), data=st.data())
def test_both_searches_agree_after_random_play(deal: int, data: st.DataObject) -> None:
    """Random play mostly ruins a deal, which makes positions both searches can exhaust."""
    game = Scorpion.new(deal)
    for _ in range(data.draw(st.integers(0, 80), label="steps")):
        moves = game.legal_moves()
        if not moves:
            break
        game.push(moves[data.draw(st.integers(0, len(moves) - 1), label="move")])
    budget = Budget(nodes=10_000)
    ours, theirs = depth_first_scorpion(game, budget), best_first(game, budget)
    if isinstance(ours, Unknown) or isinstance(theirs, Unknown):
        return
    assert type(ours) is type(theirs)
    if isinstance(ours, Unwinnable):
        assert ours.stats.nodes <= theirs.stats.nodes
    else:
        assert_wins(game, ours)


def assert_agrees_with_naive(game: Game) -> None:
    naive = naive_search(game, 200_000)
    assert naive is not None
    for native, sleep_sets in ((False, False), (True, False), (True, True)):
        result = depth_first_scorpion(game, BUDGET, native=native, sleep_sets=sleep_sets)
        assert isinstance(result, Solved) is naive.won
        if isinstance(result, Solved):
            assert_wins(game, result)


def test_a_build_whose_target_may_land_on_its_group_is_not_tried_alone() -> None:
    # 8H onto 9H and 4C onto 5C can each carry the other's target onto its own group (4C lies
    # under 9H, 5C on 8H), so neither is tried alone. 6H onto 7H can be: nothing that may
    # ever carry 7H (7H, 8H, 9H, 4C, 5C and the face-down cards they may land on) has 6H's
    # predecessor among it. The search tries only that move here and still finds the win
    # (the position is not lost at the start, so the searches must play on from it).
    game = scorpion(
        "1: <KC> <7C> 4C 9H\n2: <6C> <3H> 8H 5C\n3: <QH> <8C> <TH> <JC> 7H\n4: <JH> <4H> <KH> <2H> 6H\n"
        "5: <QC> <9C> <AC> <TC> AH 3C\n6: <5H> 2C\nhome: KS KD"
    )
    columns, stock = _encode(game)
    assert len(_moves(columns, stock, lone=False)) == 4
    assert _moves(columns, stock) == [(3, 5, 2)]
    assert_agrees_with_naive(game)


def test_a_king_that_must_move_takes_an_empty_column_alone() -> None:
    # KS lies on 4S: its suit cannot go home until it moves, and no other King waits for the
    # empty columns. Each build here can carry its target onto its own group's successors.
    game = scorpion("1: <AS> 4S KS\n2: <2S> QS\n3: <3S> 5S\n4: JS TS 9S 8S 7S 6S\nhome: KH KC KD")
    columns, stock = _encode(game)
    assert len(_moves(columns, stock, lone=False)) == 5
    assert _moves(columns, stock) == [(0, 3, 4)]
    assert_agrees_with_naive(game)


def test_won_position_is_solved_with_no_move() -> None:
    result = depth_first_scorpion(scorpion("home: KC KS KH KD"), BUDGET)
    assert isinstance(result, Solved)
    assert result.moves == ()


def test_completing_the_last_suit_wins() -> None:
    game = scorpion("1: KH QH JH TH 9H 8H 7H 6H 5H\n2: 4H 3H 2H AH\nhome: KC KS KD")
    result = depth_first_scorpion(game, BUDGET)
    assert isinstance(result, Solved)
    assert result.found == 1
    assert_wins(game, result)


def test_the_stock_deal_is_part_of_the_line_when_needed() -> None:
    # The Ace of spades is in the stock: only the deal brings it onto 2S in column 1.
    game = scorpion("1: KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S\nstock: AS\nhome: KC KH KD")
    result = depth_first_scorpion(game, BUDGET)
    assert isinstance(result, Solved)
    assert game.deal_move() in result.moves
    assert_wins(game, result)


def test_stuck_position_is_unwinnable_after_no_node() -> None:
    game = scorpion("1: <QS> KS\n2: <2S> AS\n3: <4S> 3S\n4: <6S> 5S\n5: <8S> 7S\n6: <TS> 9S\n7: JS")
    assert game.legal_moves() == []
    result = depth_first_scorpion(game, BUDGET)
    assert isinstance(result, Unwinnable)
    assert result.stats.nodes == 0


def test_node_budget_stops_within_one_poll() -> None:
    result = depth_first_scorpion(Scorpion.new(HARD_DEAL), Budget(nodes=500))
    assert isinstance(result, Unknown)
    assert result.reason == "nodes"
    assert 500 <= result.stats.nodes <= 500 + POLL_EVERY


#: A proof of some nine million positions, seconds long: never done within a fifth of one.
LONG_PROOF_DEAL = 6963


def test_time_budget_is_honoured() -> None:
    start = time.perf_counter()
    result = depth_first_scorpion(Scorpion.new(LONG_PROOF_DEAL), Budget(seconds=0.2))
    assert isinstance(result, Unknown)
    assert result.reason == "seconds"
    assert time.perf_counter() - start < 1.0


def test_position_cap_gives_memory() -> None:
    result = depth_first_scorpion(Scorpion.new(HARD_DEAL), Budget(max_positions=1000))
    assert isinstance(result, Unknown)
    assert result.reason == "memory"


def test_interrupt_gives_interrupted() -> None:
    result = depth_first_scorpion(Scorpion.new(HARD_DEAL), Budget(interrupt=lambda: True))
    assert isinstance(result, Unknown)
    assert result.reason == "interrupted"
    assert result.stats.nodes == POLL_EVERY
