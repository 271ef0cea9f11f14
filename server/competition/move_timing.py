"""The timing half of the anti-cheat check of a ranked daily attempt (pure: no I/O).

Every log entry is stored with its server time (Unix ms), and the race's start is known, so
an attempt has a first-move delay (start to first entry) and gaps between entries. Three
things are read from them, each relative to a norm, so that no figure depends on the
absolute pace a test or a player happens to use:

- *machine speed* (:func:`machine_speed`): faster than any person reads a board, however
  they know the line; such a run is refused outright, never ranked;
- *pace* (:func:`pace_part`): a median gap well below the norm's, or gaps far steadier
  than its (people think for uneven times: a quick run of obvious moves, then a long
  pause; a replayed line has no reason to pause);
- *start* (:func:`start_part`): a first move about as quick as any other, where a person
  meeting a deal reads it first.

The norm is the player's own (:func:`norm_of` their recent races' gaps) when there are
enough of them, else :data:`POPULATION`.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

#: A log shorter than this says nothing about timing (nor about the line: see studied.py).
MIN_MOVES: Final = 15
#: Machine speed: a median gap below this (ms) over :data:`MIN_MOVES` entries or more, or a
#: mean below it from the race's start to the last entry (the total time impossibly short).
MACHINE_GAP_MS: Final = 150
#: Gaps shorter than this (ms) count as this long in logarithms: two entries stored in the
#: same millisecond must not make the spread infinite.
FLOOR_MS: Final = 20
#: A player's own norm needs at least this many gaps from their recent races.
MIN_HISTORY_GAPS: Final = 40
#: Pace part: 0 at a median gap this share of the norm's or more, 1 at :data:`PACE_FAST` or
#: less, linear between; the same for the spread of the gaps against the norm's spread.
PACE_NORMAL: Final = 0.8
PACE_FAST: Final = 0.4
#: Start part: 1 when the first move came within this many median gaps of the start, 0
#: from :data:`START_READ` median gaps, linear between.
START_AT_ONCE: Final = 1.5
START_READ: Final = 4.0


@dataclass(frozen=True, slots=True)
class PaceNorm:
    """What a player's gaps between moves look like: the median (ms) and the spread, the
    standard deviation of their natural logarithms (a ratio: 0.7 means a typical gap is
    about twice or half another); ``source`` says whose (``own`` or ``population``)."""

    median_ms: float
    spread: float
    source: str


#: The norm without a player's own history. An assumption until measured on real logs (the
#: bench's people model, bench/lib/people.py, draws from it): people in a patience game take
#: about 1.5 s a move, and a long think now and then puts the spread near 0.9.
POPULATION: Final = PaceNorm(median_ms=1500.0, spread=0.9, source="population")


def gaps(times_ms: Sequence[int]) -> list[int]:
    """Milliseconds between consecutive log entries."""
    return [later - earlier for earlier, later in itertools.pairwise(times_ms)]


def played_line(entries: Sequence[str]) -> list[str]:
    """The moves that stood at the end: undone ones taken out, resignations ignored."""
    line: list[str] = []
    for entry in entries:
        if entry == "undo":
            if line:
                line.pop()
        elif not entry.startswith("resign "):
            line.append(entry)
    return line


def play_times(entries: Sequence[str], times_ms: Sequence[int]) -> list[int]:
    """The times of the moves and undos (a resignation may come any time later, or from a
    dropped connection: it says nothing about pace); empty if the times do not match the
    entries one for one."""
    if len(times_ms) != len(entries):
        return []
    return [time for entry, time in zip(entries, times_ms, strict=True) if not entry.startswith("resign ")]


def spread(between: Sequence[int]) -> float:
    """The standard deviation of the gaps' natural logarithms (0 for fewer than two)."""
    if len(between) < 2:
        return 0.0
    return statistics.pstdev([math.log(max(gap, FLOOR_MS)) for gap in between])


def norm_of(history: Sequence[Sequence[int]]) -> PaceNorm:
    """The player's own norm from the gaps of their earlier races (one list a race), or
    :data:`POPULATION` if they hold fewer than :data:`MIN_HISTORY_GAPS` gaps. The spread is
    each race's own, averaged: races at different paces must not look uneven together."""
    pooled = [gap for race in history for gap in race]
    if len(pooled) < MIN_HISTORY_GAPS:
        return POPULATION
    spreads = [spread(race) for race in history if len(race) >= 2]
    return PaceNorm(float(statistics.median(pooled)), statistics.fmean(spreads), "own")


def machine_speed(times_ms: Sequence[int], started_ms: int | None) -> str | None:
    """Why these move times (moves and undos only, see :func:`play_times`) are a machine's,
    or None: a median gap under :data:`MACHINE_GAP_MS` over :data:`MIN_MOVES` entries or
    more, or from ``started_ms`` (the race's start) a mean under it."""
    if len(times_ms) < MIN_MOVES:
        return None
    median = statistics.median(gaps(times_ms))
    if median < MACHINE_GAP_MS:
        return f"machine speed: median {median:.0f} ms between moves over {len(times_ms)} moves"
    if started_ms is not None:
        mean = (times_ms[-1] - started_ms) / len(times_ms)
        if mean < MACHINE_GAP_MS:
            return f"machine speed: {len(times_ms)} moves in {times_ms[-1] - started_ms} ms from the start"
    return None


def _ramp(value: float, zero_at: float, one_at: float) -> float:
    """0 at ``zero_at``, 1 at ``one_at``, linear between, clamped (either order)."""
    return min(1.0, max(0.0, (value - zero_at) / (one_at - zero_at)))


def pace_part(between: Sequence[int], norm: PaceNorm) -> tuple[float, str]:
    """How far from ``norm`` the gaps are towards a replay (0 to 1), and why in words: the
    larger of "fast" (median against the norm's) and "steady" (spread against its)."""
    if len(between) + 1 < MIN_MOVES:
        return 0.0, ""
    median = float(statistics.median(between))
    fast = _ramp(median / norm.median_ms, PACE_NORMAL, PACE_FAST)
    steady = _ramp(spread(between) / norm.spread, PACE_NORMAL, PACE_FAST) if norm.spread > 0 else 0.0
    how = " and ".join(word for word, part in (("fast", fast), ("steady", steady)) if part > 0) or "usual"
    words = (
        f"pace: {how}: median gap {median:.0f} ms, spread {spread(between):.2f}"
        f" (the {norm.source} norm: {norm.median_ms:.0f} ms, {norm.spread:.2f})"
    )
    return max(fast, steady), words


def start_part(first_ms: int | None, between: Sequence[int]) -> tuple[float, str]:
    """How much the first move's delay after the start (None: unknown) looks like a player
    who knew the deal (0 to 1), in median gaps of the same attempt, and why in words."""
    if first_ms is None or len(between) + 1 < MIN_MOVES:
        return 0.0, ""
    median = max(float(statistics.median(between)), FLOOR_MS)
    ratio = max(first_ms, 0) / median
    return _ramp(
        ratio, START_READ, START_AT_ONCE
    ), f"start: first move {first_ms} ms after the start ({ratio:.1f} gaps)"
