"""Arena rules (server/competition/arena.py): points by place, a streak after two wins that
doubles the points until a race that is not a win, races counted inside the window, and
standings by points then who reached them first."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.competition.arena import (
    Arena,
    ArenaState,
    Record,
    arena_state,
    counts,
    on_streak,
    points,
    race_tag,
    read_race_tag,
    score,
    standing_score,
)

T0 = 1_800_000_000_000
ARENA = Arena("AR", "scorpion", "Hourly", T0, T0 + 30 * 60_000)


@pytest.mark.parametrize(
    ("place", "racers", "streak", "expected"),
    [
        (1, 2, False, 2),
        (2, 2, False, 0),
        (2, 3, False, 1),
        (2, 4, False, 1),
        (3, 4, False, 0),
        (4, 4, False, 0),
        (1, 2, True, 4),
        (2, 4, True, 2),
        (3, 3, True, 0),
    ],
)
def test_points_by_place_doubled_on_a_streak(place: int, racers: int, streak: bool, expected: int) -> None:
    assert points(place, racers, streak) == expected


def test_two_wins_in_a_row_start_a_streak_and_a_loss_ends_it() -> None:
    record = Record("Ann")
    gained = []
    for place in (1, 1, 1, 1, 2, 1):
        before = record.points
        record = score({"ann": record}, [("ann", "Ann", place), ("bob", "Bob", 3 - place)])["ann"]
        gained.append(record.points - before)
    assert gained == [2, 2, 4, 4, 0, 2]
    assert (record.races, record.wins, record.run, on_streak(record)) == (6, 5, 1, False)


def test_a_race_scores_every_racer_and_a_first_race_starts_a_record() -> None:
    after = score({"ann": Record("Ann", 10, 5, 3, 2)}, [("bob", "Bob", 1), ("ann", "Ann", 2), ("cat", "Cat", 3)])
    assert after["bob"] == Record("Bob", 2, 1, 1, 1)
    assert after["ann"] == Record("Ann", 12, 6, 3, 0)  # 2nd of 3, on a streak: 1 doubled
    assert after["cat"] == Record("Cat", 0, 1, 0, 0)


def test_the_window_decides_the_state_and_which_races_count() -> None:
    assert arena_state(ARENA, T0 - 1) is ArenaState.UPCOMING
    assert arena_state(ARENA, T0) is ArenaState.LIVE
    assert arena_state(ARENA, ARENA.ends) is ArenaState.OVER
    assert counts(ARENA, T0)
    assert counts(ARENA, ARENA.ends - 1)
    assert not counts(ARENA, ARENA.ends)  # a race that ends after the arena does not count


@given(st.integers(0, 10_000), st.integers(0, 10_000), st.integers(0, 1800_000), st.integers(0, 1800_000))
def test_standings_rank_by_points_then_who_reached_them_first(p1: int, p2: int, t1: int, t2: int) -> None:
    one = standing_score(Record("A", p1), ARENA, T0 + t1)
    two = standing_score(Record("B", p2), ARENA, T0 + t2)
    if p1 != p2:
        assert (one > two) == (p1 > p2)
    elif t1 // 1000 != t2 // 1000:
        assert (one > two) == (t1 < t2)
    assert float(one) == one  # exact in a double


def test_a_races_room_keeps_the_arenas_id_and_name_in_one_tag() -> None:
    named = Arena("AR", "scorpion", "Fri/Sat: 9 PM", T0, T0 + 60_000)
    assert read_race_tag(race_tag(named)) == ("AR", "Fri/Sat: 9 PM")
    assert read_race_tag("AR") == ("AR", None)  # a room an older server opened
