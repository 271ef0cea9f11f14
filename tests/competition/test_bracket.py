"""Bracket rules (server/competition/bracket.py): registration until the start and the size,
one run a round, forfeits after the show-up time, the better half of those who played goes
on, the last one left wins, and the final standings."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.competition.bracket import (
    SHOW_UP_MS,
    Bracket,
    BracketState,
    Run,
    bracket_state,
    close_round,
    current,
    final_standings,
    is_due,
    may_play,
    may_register,
    open_round,
)

T0 = 1_800_000_000_000
PLAYERS = [f"p{n}" for n in range(8)]


def bracket(players: int = 4, size: int = 8) -> Bracket:
    names = {p: p.upper() for p in PLAYERS[:players]}
    return Bracket("BR", "antares", "Friday", T0, size, 10, names=names)


def played(found: Bracket, times: dict[str, int | None]) -> Bracket:
    """Every player in ``times`` ran the open round: a win in that many ms, or (None) home 10."""
    round_ = current(found)
    assert round_ is not None
    runs = {p: Run(f"R{p}", t, 50, 52 if t is not None else 10, 0, done=True) for p, t in times.items()}
    return msgspec.structs.replace(found, rounds=[*found.rounds[:-1], msgspec.structs.replace(round_, runs=runs)])


def test_registration_closes_at_the_start_or_when_full() -> None:
    assert may_register(bracket(), "new", T0 - 1) is None
    assert "closed" in (may_register(bracket(), "new", T0) or "")
    assert "full" in (may_register(bracket(8, 8), "new", T0 - 1) or "")
    assert may_register(bracket(8, 8), "p1", T0 - 1) is None  # already in


def test_a_round_halves_the_field_and_the_last_one_left_wins() -> None:
    found = open_round(bracket(4), PLAYERS[:4], "617", "salt", T0)
    assert bracket_state(found) is BracketState.PLAYING
    found = played(found, {"p0": 90_000, "p1": 80_000, "p2": None, "p3": 70_000})
    found, survivors = close_round(found)
    assert survivors == ["p3", "p1"]
    found = played(open_round(found, survivors, "618", "salt", T0 + 1), {"p3": 95_000, "p1": 60_000})
    found, survivors = close_round(found)
    assert (survivors, found.winner, bracket_state(found)) == ([], "p1", BracketState.OVER)
    assert final_standings(found) == ["p1", "p3", "p0", "p2"]


def test_a_forfeit_never_goes_on_and_nobody_playing_ends_it_without_a_winner() -> None:
    found = played(open_round(bracket(4), PLAYERS[:4], "617", "s", T0), {"p2": None})
    _, survivors = close_round(found)
    assert survivors == []  # one played: the winner
    nobody = open_round(bracket(4), PLAYERS[:4], "617", "s", T0)
    closed, survivors = close_round(nobody)
    assert (survivors, closed.winner) == ([], "")


def test_a_run_is_started_once_and_only_in_time() -> None:
    found = open_round(bracket(4), PLAYERS[:4], "617", "s", T0)
    assert may_play(found, "p0", T0 + 1) is None
    assert "forfeited" in (may_play(found, "p0", T0 + SHOW_UP_MS) or "")
    assert "no round" in (may_play(found, "p7", T0) or "")
    assert "played" in (may_play(played(found, {"p0": None}), "p0", T0) or "")


@pytest.mark.parametrize(
    ("runs", "at", "due"),
    [
        ({}, T0 + 1, False),
        ({"p0": True}, T0 + 1, False),  # the others may still come
        ({"p0": True, "p1": True, "p2": True, "p3": True}, T0 + 1, True),
        ({"p0": True}, T0 + SHOW_UP_MS, True),  # nobody else can start
        ({"p0": False}, T0 + SHOW_UP_MS, False),  # a run still under way
        ({"p0": False}, T0 + 10 * 60_000 + 60_000, True),  # long past the window
    ],
)
def test_a_round_is_due_when_nothing_more_can_happen(runs: dict[str, bool], at: int, due: bool) -> None:
    found = open_round(bracket(4), PLAYERS[:4], "617", "s", T0)
    round_ = current(found)
    assert round_ is not None
    round_ = msgspec.structs.replace(round_, runs={p: Run(f"R{p}", None, done=d) for p, d in runs.items()})
    assert is_due(round_, at) is due


@given(st.integers(2, 16), st.data())
def test_the_better_half_of_those_who_played_goes_on(players: int, data: st.DataObject) -> None:
    names = [f"q{n:02d}" for n in range(players)]
    found = open_round(Bracket("B", "scorpion", "B", T0, 16, 10, names={n: n for n in names}), names, "1", "s", T0)
    times = {n: data.draw(st.none() | st.integers(1, 10**6)) for n in names if data.draw(st.booleans())}
    closed, survivors = close_round(played(found, times))
    assert set(survivors) <= set(times)  # a forfeit never goes on
    assert len(survivors) <= (players + 1) // 2
    if survivors:
        assert len(survivors) >= 2
        assert closed.winner is None
    else:  # over: one who played is the winner, or nobody played
        assert closed.winner in times if times else closed.winner == ""
