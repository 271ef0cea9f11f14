"""Async challenge rules (server/competition/challenges.py): the states from the stored facts,
who may take a challenge, the better run wins, and nothing of the rival shows before the end."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from protocol.fairness import verify
from server.competition.challenges import (
    RUN_GRACE_MS,
    Challenge,
    ChallengeState,
    Run,
    RunTag,
    Side,
    is_secret,
    line_of,
    may_take,
    read_run_tag,
    results,
    run_tag,
    side_of,
    state,
)

T0 = 1_800_000_000_000
HOUR = 3_600_000
ANN, BOB = Side("ann", "Ann"), Side("bob", "Bob")


def challenge(invited: str | None = "bob", **fields: object) -> Challenge:
    made = Challenge("CH", "antares", "617", "salt", True, T0, T0 + 24 * HOUR, ANN, invited=invited)
    return msgspec.structs.replace(made, **fields)


def run(room: str, finished_ms: int | None, moves: int = 100, home: int = 52) -> Run:
    return Run(room, finished_ms, moves, home if finished_ms is not None else home // 2, 0)


def test_a_challenge_is_open_then_playing_then_over() -> None:
    open_ = challenge()
    assert state(open_, T0) is ChallengeState.OPEN
    taken = msgspec.structs.replace(open_, opponent=BOB, runs={0: run("A", 90_000)})
    assert state(taken, T0) is ChallengeState.PLAYING
    over = msgspec.structs.replace(taken, runs={0: run("A", 90_000), 1: run("B", None)})
    assert state(over, T0 + 100 * HOUR) is ChallengeState.OVER  # over stays over past the window
    assert not is_secret(over, T0)


def test_a_window_that_closes_before_both_runs_expires_the_challenge() -> None:
    waiting = challenge(runs={0: run("A", 90_000)})
    assert state(waiting, T0 + 24 * HOUR - 1) is ChallengeState.OPEN
    assert state(waiting, T0 + 24 * HOUR) is ChallengeState.EXPIRED
    assert not is_secret(waiting, T0 + 24 * HOUR)
    assert results(waiting) == []  # void: no winner


def test_a_run_still_played_when_the_window_closes_keeps_the_deal_secret_until_it_ends() -> None:
    """Revealed at the close, the deal would show the racer still playing it their face-down
    cards; the run counts when it ends (up to RUN_GRACE_MS after the close)."""
    closes = T0 + 24 * HOUR
    taken = challenge(opponent=BOB, runs={0: run("A", 90_000)})  # Bob's run goes on
    assert state(taken, closes) is ChallengeState.PLAYING
    assert is_secret(taken, closes)
    assert may_take(taken, "cat", closes) is not None
    ended = msgspec.structs.replace(taken, runs={0: run("A", 90_000), 1: run("B", 80_000)})
    assert state(ended, closes + HOUR) is ChallengeState.OVER
    assert state(taken, closes + RUN_GRACE_MS) is ChallengeState.EXPIRED  # it never ended
    # The challenger's own run going on past the close: secret too, and nobody may take it.
    still = challenge(invited=None)
    assert state(still, closes) is ChallengeState.PLAYING
    assert may_take(still, "cat", closes) is not None
    assert state(msgspec.structs.replace(still, runs={0: run("A", None)}), closes) is ChallengeState.EXPIRED


@pytest.mark.parametrize(
    ("player", "found", "why"),
    [
        ("bob", challenge(), None),
        ("cat", challenge(), "another player"),
        ("cat", challenge(invited=None), None),
        ("ann", challenge(invited=None), "your own"),
        ("bob", challenge(opponent=BOB), "taken or is over"),
    ],
)
def test_who_may_take_a_challenge(player: str, found: Challenge, why: str | None) -> None:
    refusal = may_take(found, player, T0)
    assert refusal is None if why is None else why in (refusal or "")


def test_the_faster_win_places_first_and_a_rated_one_shows_the_rating_changes() -> None:
    over = challenge(opponent=BOB, runs={0: run("A", 95_000), 1: run("B", 80_000)})
    assert [(r.seat, r.place) for r in results(over)] == [(1, 1), (0, 2)]
    rated = msgspec.structs.replace(over, ratings={0: (1480.0, -20.0), 1: (1520.0, 20.0)})
    assert [(r.name, r.rating_change) for r in results(rated)] == [("Bob", 20.0), ("Ann", -20.0)]
    assert side_of(over, "ann") == 0
    assert side_of(over, "bob") == 1
    assert side_of(over, "cat") is None


@given(st.integers(0, 48 * HOUR), st.booleans(), st.booleans())
def test_an_inbox_line_shows_nothing_of_the_rival_or_the_deal_before_the_end(
    later: int, first_ran: bool, taken: bool
) -> None:
    runs = {0: run("A", 90_000)} if first_ran else {}
    found = challenge(opponent=BOB if taken else None, runs=runs)
    now = T0 + later
    for player in ("ann", "bob"):
        line = line_of(found, player, now)
        secret = is_secret(found, now)
        assert (line.reveal is None) == secret
        assert line.results is None  # never both runs here
        assert line.rooms is None
        assert line.commitment is not None  # from the start: a hash, nothing of the deal
        if line.reveal is not None:
            assert verify(line.variant, line.reveal.deal, line.reveal.salt, line.commitment)
    assert line_of(found, "ann", now).played == first_ran


def test_an_over_challenge_shows_both_runs_their_rooms_and_the_deal() -> None:
    over = challenge(opponent=BOB, runs={0: run("A", 95_000), 1: run("B", None)})
    line = line_of(over, "bob", T0)
    assert (line.state, line.side, line.played, line.rooms) == ("over", 1, True, ["A", "B"])
    assert line.reveal is not None
    assert line.reveal.deal == "617"
    assert [r.name for r in line.results or []] == ["Ann", "Bob"]


def test_a_runs_room_keeps_the_challenge_its_side_and_its_rating_in_one_tag() -> None:
    rated, unrated = challenge(), challenge(rated=False)
    assert read_run_tag(run_tag(rated, 0)) == RunTag("CH", 0, True)
    assert read_run_tag(run_tag(unrated, 1)) == RunTag("CH", 1, False)
    assert read_run_tag("CH") == RunTag("CH", None, None)  # a room an older server opened
