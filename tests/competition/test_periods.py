"""Weeks and seasons of the period boards: every UTC day in exactly one week (Monday to Sunday,
ISO numbered) and one season (a calendar quarter), names that read back, neighbours that
meet, and a score that ranks more wins first, then the lower total time."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.competition.periods import (
    PERIOD_BOARDS,
    TIME_CAP,
    WIN_WEIGHT,
    Period,
    PeriodBoard,
    parse_period,
    period_of,
    standing,
    win_score,
)

#: Days whose week and season have neighbours on both sides.
DAYS = st.dates(dt.date(1, 4, 1), dt.date(9998, 9, 30))
BOARDS = st.sampled_from(PERIOD_BOARDS)
#: The wins one player can have in a period: one a day, at most 92 days (a season).
WINS = st.lists(st.integers(0, 10**12 - 1), max_size=92)


def test_weeks_start_on_monday_and_are_named_by_their_iso_year() -> None:
    week = period_of("weekly", "2026-12-05")  # a Saturday
    assert (week.name, week.first_day, week.last_day) == ("2026-W49", dt.date(2026, 11, 30), dt.date(2026, 12, 6))
    assert period_of("weekly", "2026-11-30") == week == period_of("weekly", "2026-12-06")
    assert period_of("weekly", "2026-12-07").name == "2026-W50"
    # Around New Year the week's year is its Thursday's: 2026 has 53 weeks, 2027 starts on the 4th.
    assert period_of("weekly", "2027-01-03").name == "2026-W53"
    assert period_of("weekly", "2027-01-04").name == "2027-W01"
    assert period_of("weekly", "2025-12-29").name == "2026-W01"


def test_seasons_are_calendar_quarters() -> None:
    assert [period_of("season", day).name for day in ("2026-01-01", "2026-03-31", "2026-04-01", "2026-12-31")] == [
        "2026-Q1",
        "2026-Q1",
        "2026-Q2",
        "2026-Q4",
    ]
    q1 = parse_period("season", "2026-Q1")
    assert (q1.first_day, q1.last_day) == (dt.date(2026, 1, 1), dt.date(2026, 3, 31))
    assert parse_period("season", "2024-Q1").last_day == dt.date(2024, 3, 31)
    assert parse_period("season", "2026-Q3").last_day == dt.date(2026, 9, 30)


def test_neighbours_cross_the_year() -> None:
    week = parse_period("weekly", "2026-W53")
    assert [p.name for p in (week.previous(), week.next()) if p is not None] == ["2026-W52", "2027-W01"]
    season = parse_period("season", "2026-Q4")
    assert [p.name for p in (season.previous(), season.next()) if p is not None] == ["2026-Q3", "2027-Q1"]
    # The calendar's ends: nothing before the first period, nor after the last.
    assert Period("weekly", 1, 1).previous() is None
    assert Period("season", 9998, 4).next() is None


@pytest.mark.parametrize(
    ("board", "name"),
    [
        ("weekly", "2027-W53"),  # 2027 has 52 weeks
        ("weekly", "2026-W00"),
        ("weekly", "2026-W7"),  # one spelling: two digits
        ("weekly", "2026-w07"),
        ("weekly", "2026-Q1"),  # a season is no week
        ("weekly", "0000-W01"),
        ("weekly", "9999-W01"),
        ("weekly", "٢٠٢٦-W01"),  # digits, but not ASCII ones
        ("season", "2026-Q0"),
        ("season", "2026-Q5"),
        ("season", "2026-W01"),
        ("season", "26-Q1"),
        ("season", " 2026-Q1"),
    ],
)
def test_malformed_names_are_refused(board: PeriodBoard, name: str) -> None:
    with pytest.raises(ValueError):
        parse_period(board, name)


@given(BOARDS, DAYS)
def test_every_day_is_in_its_period(board: PeriodBoard, day: dt.date) -> None:
    period = period_of(board, day)
    assert day in period
    assert period.first_day <= day <= period.last_day
    assert parse_period(board, period.name) == period
    assert period_of(board, day.isoformat()) == period


@given(BOARDS, DAYS)
def test_periods_tile_the_calendar(board: PeriodBoard, day: dt.date) -> None:
    period = period_of(board, day)
    after, before = period.next(), period.previous()
    assert after is not None
    assert before is not None
    assert after.first_day == period.last_day + dt.timedelta(days=1)
    assert before.last_day == period.first_day - dt.timedelta(days=1)
    assert after.previous() == period == before.next()
    length = (period.last_day - period.first_day).days + 1
    if board == "weekly":
        assert period.first_day.weekday() == 0  # Monday
        assert length == 7
    else:
        assert (period.first_day.month, period.first_day.day) in {(1, 1), (4, 1), (7, 1), (10, 1)}
        assert 90 <= length <= 92


@given(WINS)
def test_a_score_stands_for_its_wins_and_total(times: list[int]) -> None:
    score = sum(win_score(time) for time in times)
    assert standing(score) == (len(times), sum(min(time, TIME_CAP) for time in times))
    assert abs(score) < 2**53  # exact in the double Redis keeps


@given(WINS, WINS)
def test_more_wins_rank_first_then_the_lower_total(mine: list[int], theirs: list[int]) -> None:
    """The board is read lowest score first."""
    a, b = sum(map(win_score, mine)), sum(map(win_score, theirs))
    totals = sum(min(t, TIME_CAP) for t in mine), sum(min(t, TIME_CAP) for t in theirs)
    if len(mine) != len(theirs):
        assert (a < b) == (len(mine) > len(theirs))
    else:
        assert (a < b, a == b) == (totals[0] < totals[1], totals[0] == totals[1])


def test_the_weights_keep_a_season_exact() -> None:
    assert 92 * TIME_CAP < WIN_WEIGHT
    assert 92 * WIN_WEIGHT < 2**53
    with pytest.raises(ValueError):
        win_score(-1)
