"""Arena tournaments: a fixed window of time in which players race again and again. Pure.

Whenever a joined player is free they wait in the arena's line and are paired, 2 to 4 by
rating, as quick match pairs (:mod:`server.competition.matchmaking`), on a fresh deal. A race
counts if it ends before the arena does. Points for a race, by place:

==========================  ======  ==============================================
place                       points  note
==========================  ======  ==============================================
1st (a **win**)             2       doubled (4) on a streak
2nd, in a race of 3 or 4    1       doubled (2) on a streak
any other                   0       ends a streak
==========================  ======  ==============================================

A player is **on a streak** when their last two arena races were wins; a race that is not a
win ends it. The standings rank by points, then by who reached them first (the earlier
race's end), then by player id. Everything here is decided from the stored facts, so every
node computes the same standings.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from typing import Final

import msgspec

from protocol.messages import Variant

#: Points by place, when not on a streak (a place beyond the table scores 0).
PLACE_POINTS: Final = {1: 2, 2: 1}
#: Wins in a row that put a player on a streak.
STREAK_WINS: Final = 2
#: Seconds of an arena's window the standings' tie-break counts (more than any arena lasts).
_TIE_SPAN: Final = 10**7


class ArenaState(enum.Enum):
    UPCOMING = "upcoming"
    LIVE = "live"
    OVER = "over"


class Arena(msgspec.Struct, frozen=True):
    """An arena: its game and window (``starts``/``ends``, Unix ms)."""

    id: str
    variant: Variant
    name: str
    starts: int
    ends: int


class Record(msgspec.Struct, frozen=True):
    """One player's arena so far."""

    name: str
    points: int = 0
    races: int = 0
    wins: int = 0
    #: Wins in a row, up to the last race.
    run: int = 0


def race_tag(arena: Arena) -> str:
    """The tag a room of ``arena``'s race keeps as its arena: ``<id>/<name>`` (ids never hold
    a ``/``), so its view can name the arena without reading it; :func:`read_race_tag`
    reads it back."""
    return f"{arena.id}/{arena.name}"


def read_race_tag(tag: str) -> tuple[str, str | None]:
    """A race's tag (:func:`race_tag`), or a bare arena id: (the arena's id, its name or None)."""
    arena, slash, name = tag.partition("/")
    return arena, name if slash else None


def arena_state(arena: Arena, now: int) -> ArenaState:
    if now < arena.starts:
        return ArenaState.UPCOMING
    return ArenaState.LIVE if now < arena.ends else ArenaState.OVER


def counts(arena: Arena, finished: int) -> bool:
    """Whether a race that ended at ``finished`` (Unix ms) counts: inside the window."""
    return arena.starts <= finished < arena.ends


def points(place: int, racers: int, on_streak: bool) -> int:
    """The points of ``place`` in a race of ``racers`` (see the module's table)."""
    earned = PLACE_POINTS.get(place, 0) if place == 1 or racers >= 3 else 0
    return earned * 2 if on_streak else earned


def score(records: Mapping[str, Record], places: Sequence[tuple[str, str, int]]) -> dict[str, Record]:
    """Every racer's record after a race: ``places`` are (player, name, place) of all its
    racers; ``records`` their records before it (a missing one: a first race)."""
    racers = len(places)
    after: dict[str, Record] = {}
    for player, name, place in places:
        before = records.get(player, Record(name))
        won = place == 1
        gained = points(place, racers, before.run >= STREAK_WINS)
        after[player] = Record(
            name=name,
            points=before.points + gained,
            races=before.races + 1,
            wins=before.wins + won,
            run=before.run + 1 if won else 0,
        )
    return after


def standing_score(record: Record, arena: Arena, reached: int) -> int:
    """A sorted-set score that ranks by points, then who reached them first (``reached``,
    Unix ms): higher is better; exact in a double."""
    seconds = min(max(0, (reached - arena.starts) // 1000), _TIE_SPAN - 1)
    return record.points * _TIE_SPAN + (_TIE_SPAN - 1 - seconds)


def on_streak(record: Record) -> bool:
    return record.run >= STREAK_WINS
