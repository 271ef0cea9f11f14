"""solve / solve_position: verdicts a player can rely on.

A Solved line must replay move by move through the engine's checks to a win; an
Unwinnable verdict must hold for positions built to be lost; budgets must stop
the search with Unknown and the limit that ran out.
"""

from __future__ import annotations

import time

import pytest

from server.games import Antares, Autoplay, Game, Options, Scorpion
from server.solver import Budget, Solved, Unknown, Unwinnable, solve, solve_position
from server.solver.pruning import POLL_EVERY
from tests.games.positions import antares, play, scorpion

BUDGET = Budget(seconds=10, clock=time.process_time)
#: Deals the budgets stop long before a verdict: Antares 6525 takes some 400,000 positions and
#: Scorpion 6963 some 4.6 million (seconds of CPU each, seeds/winnability.md), so no machine
#: is fast enough to decide them within the small budgets.
HARD = {Antares: 6525, Scorpion: 6963}
HARD_OPTIONS = {Antares: Options(), Scorpion: Options()}


def assert_wins(game: Game, result: Solved) -> None:
    """The line replays with every engine check from ``game``'s position to a win."""
    replay = game.copy()
    play(replay, *result.moves)
    assert replay.is_won()


# -- dealt games -------------------------------------------------------------------------


@pytest.mark.parametrize("autoplay", list(Autoplay), ids=lambda a: a.value)
@pytest.mark.parametrize("deal", [2, 24])
def test_antares_solution_replays_to_a_win(deal: int, autoplay: Autoplay) -> None:
    options = Options(autoplay=autoplay)
    result = solve(Antares, deal, options, BUDGET)
    assert isinstance(result, Solved)
    assert_wins(Antares.new(deal, options), result)
    assert 0 < result.par <= result.found


@pytest.mark.parametrize("deal", [5, 33, 37, 100])
def test_scorpion_solution_replays_to_a_win(deal: int) -> None:
    result = solve(Scorpion, deal, budget=BUDGET)
    assert isinstance(result, Solved)
    assert_wins(Scorpion.new(deal), result)
    assert 0 < result.par <= result.found


@pytest.mark.parametrize("deal", [4, 8])
def test_lost_scorpion_deals_are_unwinnable(deal: int) -> None:
    assert isinstance(solve(Scorpion, deal, budget=BUDGET), Unwinnable)


def test_solving_a_game_in_progress_starts_from_its_position_and_leaves_it_unchanged() -> None:
    game = Antares.new(24, Options(autoplay=Autoplay.SAFE))
    first = solve_position(game, BUDGET)
    assert isinstance(first, Solved)
    play(game, *first.moves[:10])
    before = game.full_view(), game.moves
    result = solve_position(game, BUDGET)
    assert (game.full_view(), game.moves) == before
    assert isinstance(result, Solved)
    assert_wins(game, result)


# -- tiny positions with a known answer -----------------------------------------------------------


@pytest.mark.parametrize("autoplay", list(Autoplay), ids=lambda a: a.value)
def test_antares_already_won_needs_no_move(autoplay: Autoplay) -> None:
    result = solve_position(antares("home: KC KS KH KD", autoplay), BUDGET)
    assert isinstance(result, Solved)
    assert result.moves == ()
    assert result.found == 0


def test_scorpion_already_won_needs_no_move() -> None:
    result = solve_position(scorpion("home: KC KS KH KD"), BUDGET)
    assert isinstance(result, Solved)
    assert result.moves == ()


@pytest.mark.parametrize("autoplay", list(Autoplay), ids=lambda a: a.value)
def test_antares_one_card_to_send_home_has_par_1(autoplay: Autoplay) -> None:
    game = antares("s1: KD\nhome: KC KS KH QD", autoplay)
    result = solve_position(game, BUDGET)
    assert isinstance(result, Solved)
    assert result.par == 1
    assert_wins(game, result)


def test_antares_two_cards_to_send_home_by_hand_have_par_2() -> None:
    game = antares("s1: KH QH\nhome: KC KS KD JH")
    result = solve_position(game, BUDGET)
    assert isinstance(result, Solved)
    assert result.par == 2
    assert_wins(game, result)


@pytest.mark.parametrize("autoplay", [Autoplay.SAFE, Autoplay.ALL], ids=lambda a: a.value)
def test_antares_with_autoplay_one_move_sends_both_last_cards_home(autoplay: Autoplay) -> None:
    game = antares("s1: KH QH\nhome: KC KS KD JH", autoplay)
    result = solve_position(game, BUDGET)
    assert isinstance(result, Solved)
    assert result.par == 1
    assert_wins(game, result)


def test_scorpion_ace_onto_its_suit_wins_in_one_move() -> None:
    game = scorpion("1: KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S\n2: AS")
    result = solve_position(game, BUDGET)
    assert isinstance(result, Solved)
    assert result.par == 1
    assert_wins(game, result)


ANTARES_NO_MOVE = """
s1: AC KD
s2: AS KH
s3: AH KS
s4: AD KC
f1: 5C
f2: 5S
f3: 5H
f4: 5D
c1: 2C
c2: 2S
c3: 2H
c4: 2D
"""


def test_antares_with_full_cells_and_no_legal_move_is_unwinnable() -> None:
    game = antares(ANTARES_NO_MOVE)
    assert game.legal_moves() == []
    assert isinstance(solve_position(game, BUDGET), Unwinnable)


def test_antares_position_whose_moves_only_shuffle_cards_around_is_unwinnable() -> None:
    # 5H can go back and forth between the black sixes and the cells, but hearts and
    # diamonds lack their low cards, so they never go home.
    game = antares("f1: 6S\nf2: 6C\nf3: 5H\nf4: 9D\ns1: KC\nhome: 4S 5C")
    assert game.legal_moves()
    assert isinstance(solve_position(game, BUDGET), Unwinnable)


# 7S lies face down under 6S, the one card that can go onto it: however the other spades
# are played (and they can all be played), 6S can never leave, so 7S never turns up.
SEVEN_UNDER_SIX = """
1: <QS> KS
2: <JS> 4S
3: <TS> 3S
4: <9S> 2S
5: <8S> AS
6: <7S> 6S
7: 5S
"""


def test_scorpion_card_face_down_under_its_only_taker_is_unwinnable() -> None:
    game = scorpion(SEVEN_UNDER_SIX)
    assert game.legal_moves()
    result = solve_position(game, BUDGET)
    assert isinstance(result, Unwinnable)  # the lost-position test sees it at once


def test_the_same_scorpion_position_with_that_card_face_up_is_solved() -> None:
    game = scorpion(SEVEN_UNDER_SIX.replace("<7S>", "7S"))
    result = solve_position(game, BUDGET)
    assert isinstance(result, Solved)
    assert_wins(game, result)


def test_scorpion_position_whose_only_moves_cycle_is_unwinnable() -> None:
    # Before the deal KH may wander between columns 1, 2 and 3 for ever; the deal then
    # leaves no useful move, and spades and hearts cannot be completed anyway.
    game = scorpion("1: KH\n4: 5C\n5: 6D\n6: 7S\n7: 8H\nstock: 2S 3S 4S")
    result = solve_position(game, BUDGET)
    assert isinstance(result, Unwinnable)


def test_the_solver_uses_face_down_cards_it_knows() -> None:
    # Winnable only because the solver knows QS is the face-down card under KS.
    game = scorpion("1: <QS> KS\n2: JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS")
    result = solve_position(game, BUDGET)
    assert isinstance(result, Solved)
    assert_wins(game, result)


# -- budgets ---------------------------------------------------------------------------------------


def hard_game(variant: type[Game]) -> Game:
    return variant.new(HARD[variant], HARD_OPTIONS[variant])


VARIANTS = pytest.mark.parametrize("variant", [Antares, Scorpion], ids=lambda v: v.VARIANT)


#: Searches solve_position runs one after the other, each polling the budget at least every
#: POLL_EVERY nodes: Antares runs its scans interleaved in one search, Scorpion one depth-first search.
SEARCH_PHASES = {Antares: 1, Scorpion: 1}


@VARIANTS
def test_node_budget_stops_the_search_within_one_poll_per_search(variant: type[Game]) -> None:
    result = solve_position(hard_game(variant), Budget(nodes=500))
    assert isinstance(result, Unknown)
    assert result.reason == "nodes"
    assert 500 <= result.stats.nodes <= 500 + SEARCH_PHASES[variant] * POLL_EVERY


@VARIANTS
def test_time_budget_stops_the_search_on_time(variant: type[Game]) -> None:
    start = time.perf_counter()
    result = solve_position(hard_game(variant), Budget(seconds=0.2))
    elapsed = time.perf_counter() - start
    assert isinstance(result, Unknown)
    assert result.reason == "seconds"
    # Generous above: the budget is polled every POLL_EVERY nodes, and CI machines are busy.
    assert 0.2 <= result.stats.seconds <= elapsed < 2.0


@VARIANTS
def test_position_cap_stops_the_search_with_memory(variant: type[Game]) -> None:
    result = solve_position(hard_game(variant), Budget(max_positions=1000))
    assert isinstance(result, Unknown)
    assert result.reason == "memory"
    assert result.stats.nodes <= 1000 + POLL_EVERY


@VARIANTS
def test_interrupt_callback_stops_the_search(variant: type[Game]) -> None:
    calls: list[None] = []

    def interrupt() -> bool:
        calls.append(None)
        return len(calls) >= 3

    result = solve_position(hard_game(variant), Budget(interrupt=interrupt))
    assert isinstance(result, Unknown)
    assert result.reason == "interrupted"
    assert len(calls) == 3
    assert result.stats.nodes <= 3 * POLL_EVERY
