"""Anti-cheat signals from a ranked daily attempt's move log: never a verdict, only evidence
for a person to look at (``python -m server admin flags``).

The model is lichess's move-time consistency check: people think for uneven times, so a
long game whose gaps between moves are all tiny, or all nearly the same (a low coefficient
of variation, standard deviation over mean), looks played by a program. A line that is
exactly the solver's par line (published only after the day) is a third signal.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Sequence
from typing import Final

#: Gaps looked at only in games of at least this many moves: short games say little.
MIN_MOVES: Final = 15
#: A median gap below this (ms) is faster than people read a board.
FAST_MEDIAN_MS: Final = 300
#: Gaps whose coefficient of variation is below this are too regular for a person.
REGULAR_CV: Final = 0.2


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


def signals(entries: Sequence[str], times_ms: Sequence[int], par_line: Sequence[str]) -> list[str]:
    """Why this attempt looks machine-played, in words (empty: nothing to see)."""
    reasons = []
    between = gaps(times_ms)
    if len(between) + 1 >= MIN_MOVES:
        median = statistics.median(between)
        if median < FAST_MEDIAN_MS:
            reasons.append(f"fast: median {median:.0f} ms between moves over {len(between) + 1} moves")
        mean = statistics.fmean(between)
        if mean > 0:
            variation = statistics.pstdev(between) / mean
            if variation < REGULAR_CV:
                reasons.append(f"regular: move times vary by {variation:.2f} of their mean ({mean:.0f} ms)")
    if par_line and played_line(entries) == list(par_line):
        reasons.append(f"line: the {len(par_line)} moves are exactly the solver's par line")
    return reasons
