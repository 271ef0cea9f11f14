"""Weeks and seasons of the period leaderboards, and the rule those boards rank by (pure code).

A **week** is an ISO 8601 week in UTC: Monday 00:00 to the end of Sunday, named by its ISO
year and number, ``2026-W49``. The ISO year is the year of the week's Thursday, so around
New Year it may differ from the calendar year of a day: 2026-12-28 to 2027-01-03 is
``2026-W53``, and 2027-01-04 starts ``2027-W01``. A year has 52 or 53 weeks.

A **season** is a calendar quarter in UTC, named ``2026-Q4``: Q1 is January to March, Q2
April to June, Q3 July to September, Q4 October to December.

Each period has one spelling (four-digit year, two-digit week), since names are parts of
storage keys. Periods exist for the years 1 to 9998, so every period's days are real dates.

The rule
--------
A weekly or season board ranks the players by the **daily challenges won** in the period
(the ranked attempts finished, counted by the day of the challenge), more first, then by the
**total time of those wins**, lower first. Both are one integer score, read lowest first::

    score = sum over the wins of (-WIN_WEIGHT + min(time_ms, TIME_CAP))
          = -wins * WIN_WEIGHT + total

A season has at most 92 days, so at most 92 wins, and ``total`` stays below
``92 * TIME_CAP < WIN_WEIGHT``: the wins decide first and the total second, exactly, and
``|score| <= 92 * WIN_WEIGHT < 2**53`` is exact in the double Redis keeps. A win's time counts
up to ``TIME_CAP`` ms (more than three years): every real attempt counts in full.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

PeriodBoard = Literal["weekly", "season"]
"""The boards of a period: ``"weekly"`` (ISO weeks) and ``"season"`` (calendar quarters)."""

PERIOD_BOARDS: Final[tuple[PeriodBoard, ...]] = ("weekly", "season")

FIRST_YEAR: Final = 1
LAST_YEAR: Final = 9998

#: What one win weighs in a score (see the module docstring).
WIN_WEIGHT: Final = 10**13
#: A win's time counts up to this many ms in the total.
TIME_CAP: Final = 10**11 - 1

#: How long a period board is kept after its latest win, in seconds (each win renews it): a
#: weekly board 53 weeks, so the past year's weeks can be browsed; a season board 1,200 days,
#: so the past three years' seasons can.
KEPT_SECONDS: Final[Mapping[PeriodBoard, int]] = {"weekly": 53 * 7 * 86_400, "season": 1_200 * 86_400}

_NAMES: Final[Mapping[PeriodBoard, re.Pattern[str]]] = {
    "weekly": re.compile(r"([0-9]{4})-W([0-9]{2})"),
    "season": re.compile(r"([0-9]{4})-Q([0-9])"),
}
_WHAT: Final[Mapping[PeriodBoard, str]] = {"weekly": "a week written YYYY-Www", "season": "a season written YYYY-Qn"}
_ONE_DAY: Final = dt.timedelta(days=1)


@dataclass(frozen=True, slots=True, order=True)
class Period:
    """One week (``board`` ``"weekly"``, ``number`` the ISO week) or season (``"season"``,
    ``number`` the quarter, 1 to 4) of ``year`` (the ISO year of a week). ValueError if there
    is no such period."""

    board: PeriodBoard
    year: int
    number: int

    def __post_init__(self) -> None:
        if self.board not in PERIOD_BOARDS:
            raise ValueError(f"the period boards are {', '.join(PERIOD_BOARDS)}, not {self.board!r}")
        last = _weeks_in(self.year) if self.board == "weekly" and FIRST_YEAR <= self.year <= LAST_YEAR else 4
        if not (FIRST_YEAR <= self.year <= LAST_YEAR and 1 <= self.number <= last):
            raise ValueError(f"no {self.board} period {self.number} in the year {self.year}")

    @property
    def name(self) -> str:
        """``2026-W49`` or ``2026-Q4``."""
        if self.board == "weekly":
            return f"{self.year:04d}-W{self.number:02d}"
        return f"{self.year:04d}-Q{self.number}"

    @property
    def first_day(self) -> dt.date:
        if self.board == "weekly":
            return dt.date.fromisocalendar(self.year, self.number, 1)
        return dt.date(self.year, 3 * self.number - 2, 1)

    @property
    def last_day(self) -> dt.date:
        if self.board == "weekly":
            return self.first_day + dt.timedelta(days=6)
        if self.number == 4:
            return dt.date(self.year, 12, 31)
        return dt.date(self.year, 3 * self.number + 1, 1) - _ONE_DAY

    def __contains__(self, day: dt.date) -> bool:
        return self.first_day <= day <= self.last_day

    def previous(self) -> Period | None:
        """The period before this one; None before the first (year 1)."""
        try:
            return period_of(self.board, self.first_day - _ONE_DAY)
        except (OverflowError, ValueError):
            return None

    def next(self) -> Period | None:
        """The period after this one; None after the last (year 9998)."""
        try:
            return period_of(self.board, self.last_day + _ONE_DAY)
        except (OverflowError, ValueError):
            return None


def period_of(board: PeriodBoard, day: dt.date | str) -> Period:
    """The week or season (by ``board``) the UTC day ``day`` (a date or ``YYYY-MM-DD``) is in.
    ValueError for a day outside the years that have periods, or a text that is no day."""
    if isinstance(day, str):
        day = dt.date.fromisoformat(day)
    if board == "weekly":
        iso = day.isocalendar()
        return Period(board, iso.year, iso.week)
    return Period(board, day.year, (day.month - 1) // 3 + 1)


def parse_period(board: PeriodBoard, name: str) -> Period:
    """The period named ``name`` (``2026-W49`` for ``"weekly"``, ``2026-Q4`` for ``"season"``);
    ValueError if it names none (a malformed name, or a week 53 of a year of 52)."""
    pattern = _NAMES.get(board)
    found = pattern.fullmatch(name) if pattern is not None and isinstance(name, str) else None
    if found is None:
        raise ValueError(f"{name!r} is not {_WHAT.get(board, 'a period')}")
    try:
        return Period(board, int(found[1]), int(found[2]))
    except ValueError:
        raise ValueError(f"{name!r} is not {_WHAT[board]}: there is no such {board} period") from None


def win_score(time_ms: int) -> int:
    """What one win in ``time_ms`` adds to its period boards' scores."""
    if isinstance(time_ms, bool) or not isinstance(time_ms, int) or time_ms < 0:
        raise ValueError(f"a win's time must be an integer of ms, 0 or more, not {time_ms!r}")
    return -WIN_WEIGHT + min(time_ms, TIME_CAP)


def standing(score: int) -> tuple[int, int]:
    """The wins and their total time in ms that a period board's ``score`` stands for."""
    wins = -(score // WIN_WEIGHT)
    return wins, score + wins * WIN_WEIGHT


def _weeks_in(year: int) -> int:
    """The number of ISO weeks of ``year`` (52 or 53): the week of 28 December is its last."""
    return dt.date(year, 12, 28).isocalendar().week
