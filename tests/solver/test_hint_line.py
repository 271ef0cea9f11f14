"""The line winning hints follow (issue 31): following it, cards go home every few moves; it is
never longer than the solver's first-found line, still wins, and keeps no card's detours."""

from __future__ import annotations

import functools
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.games import Antares, Autoplay, Game, IllegalMove, Move, Options, PileKind
from server.solver import Budget, Solved, solve_position
from server.solver.hint_line import (
    card_moves,
    drop_repeats,
    drop_undone,
    hint_line,
    longest_stretch_without_home,
)
from server.solver.keys import antares_key
from server.solver.winning_hint import WinningHints
from tests.games.positions import play, random_play
from tests.known_deals import ANTARES_DEAL

ROOT = Path(__file__).resolve().parents[2]
#: The golden Antares deals (seeds/deals/): every one is won by the solver within a second.
GOLDEN = sorted(path.stem.removeprefix("antares-") for path in (ROOT / "seeds" / "deals").glob("antares-*.txt"))
#: The most moves in a row without a card going home, following the hints. The lines hints
#: follow now stay at 19 or under on every golden deal and autoplay mode (ms4294967296 with
#: autoplay off is the 19); the first-found lines they followed before go past it on 13 of
#: the 24 (up to 231 in a row, on 32000 with autoplay "all"; 78 on ms8589934591 with safe
#: autoplay, the rooms' default).
MOST_WITHOUT_HOME = 20
#: Counted on this process's CPU time: the machine the tests run on is shared.
HINT_BUDGET = Budget(seconds=3, clock=time.process_time)


@functools.cache
def first_found(deal: str, autoplay: Autoplay) -> tuple[Move, ...]:
    """The solver's first-found line from the deal: what hints followed before issue 31."""
    result = solve_position(Antares.new(deal, Options(autoplay=autoplay)), Budget(seconds=10), par_seconds=0.0)
    assert isinstance(result, Solved)
    return result.moves


def follow_the_hints(game: Game) -> list[Move]:
    """Play every winning hint until there is none; the moves played."""
    hints = WinningHints(HINT_BUDGET)
    played = []
    while (move := hints.next_move(game)) is not None:
        play(game, move)
        played.append(move)
        assert len(played) < 1000, "the hints never ran out"
    return played


@pytest.mark.sampled
@pytest.mark.parametrize("autoplay", list(Autoplay), ids=lambda a: a.value)
@pytest.mark.parametrize("deal", GOLDEN)
def test_following_the_hints_sends_a_card_home_at_least_every_20_moves(deal: str, autoplay: Autoplay) -> None:
    start = Antares.new(deal, Options(autoplay=autoplay))
    game = start.copy()
    played = follow_the_hints(game)
    assert game.is_won()
    assert longest_stretch_without_home(start, played) <= MOST_WITHOUT_HOME
    assert len(played) <= len(first_found(deal, autoplay))


def test_the_first_found_lines_go_longer_without_a_card_home() -> None:
    """What the bound of the test above rules out: hints following the solver's first line."""
    stretches = {
        (deal, autoplay.value): longest_stretch_without_home(
            Antares.new(deal, Options(autoplay=autoplay)), first_found(deal, autoplay)
        )
        for deal in GOLDEN
        for autoplay in Autoplay
    }
    over = {case: stretch for case, stretch in stretches.items() if stretch > MOST_WITHOUT_HOME}
    assert len(over) >= 10, over
    assert over[("ms8589934591", "safe")] > 3 * MOST_WITHOUT_HOME


@settings(deadline=None, max_examples=8, suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.sampled_from(GOLDEN), autoplay=st.sampled_from(list(Autoplay)), data=st.data())
def test_the_hint_line_wins_and_is_never_longer_than_the_first_found(
    deal: str, autoplay: Autoplay, data: st.DataObject
) -> None:
    game = Antares.new(deal, Options(autoplay=autoplay))
    for _ in random_play(game, data, 12):
        pass
    found = solve_position(game, Budget(seconds=5), par_seconds=0.0)
    if not isinstance(found, Solved):
        return  # random play lost the deal (or hid the win): nothing to follow
    before = game.full_view(), game.moves
    line = hint_line(game, found.moves, 0.5, time.process_time)
    assert (game.full_view(), game.moves) == before
    assert len(line) <= len(found.moves)
    replay = game.copy()
    play(replay, *line)
    assert replay.is_won()


# -- detours: a card sent away and brought back ------------------------------------------------------


def with_detour(game: Game, line: tuple[Move, ...], between: int) -> tuple[tuple[Move, ...], int]:
    """``line`` with a detour added where one fits: a card goes to a cell, ``between`` moves
    of the line are played (0 or 1), and it comes back where it was; and where it starts."""
    walker = game.copy(history=False)
    for at, move in enumerate(line[: len(line) - between]):
        for away in walker.legal_moves():
            if walker.PILES[away.target].kind is not PileKind.CELL:
                continue
            trial = walker.copy(history=False)
            trial.push(away)
            if not trial.piles[away.target]:
                continue  # autoplay sent it home
            try:
                for step in line[at : at + between]:
                    trial.check(step)
                    trial.push(step)
            except IllegalMove:
                continue
            for back in trial.legal_moves():
                if back.source == away.target:
                    after = trial.copy(history=False)
                    after.push(back)
                    reached = walker.copy(history=False)
                    for step in line[at : at + between]:
                        reached.push(step)
                    if antares_key(after) == antares_key(reached):
                        detour = (away, *line[at : at + between], back)
                        return (*line[:at], *detour, *line[at + between :]), at
        walker.push(move)
    raise AssertionError("no detour fits")


def test_a_card_sent_to_a_cell_and_straight_back_leaves_no_trace() -> None:
    game = Antares.new(ANTARES_DEAL, Options(autoplay=Autoplay.SAFE))
    line = first_found(str(ANTARES_DEAL), Autoplay.SAFE)
    detoured, _ = with_detour(game, line, between=0)
    assert len(detoured) == len(line) + 2
    assert drop_repeats(*card_moves(game, detoured)) == drop_repeats(*card_moves(game, line))


def test_a_card_sent_to_a_cell_and_back_with_a_move_between_leaves_no_trace() -> None:
    game = Antares.new(ANTARES_DEAL, Options(autoplay=Autoplay.SAFE))
    line = first_found(str(ANTARES_DEAL), Autoplay.SAFE)
    detoured, _ = with_detour(game, line, between=1)
    assert len(detoured) == len(line) + 2
    far = time.perf_counter() + 60
    assert drop_undone(game, *card_moves(game, detoured), far) == drop_undone(game, *card_moves(game, line), far)
    tidy, _ = drop_undone(game, *card_moves(game, line), far)
    assert len(tidy) < len(line)  # the first-found line has such detours of its own
