"""The anti-cheat verdict on a ranked daily attempt: does it look like a studied run, a line
known before the attempt (from a second account's look at the deal, say) replayed? Pure.

Four parts, each from 0 (what people do) to 1 (what a replay does):

=========  ======  ===========================================================================
part       weight  1 when ...
=========  ======  ===========================================================================
``line``   0.50    the standing choices follow a solver's line (:mod:`.line_play`): 0 at a
                   share of :data:`LINE_LOW` or less, 1 at :data:`LINE_HIGH` or more; 0 below
                   :data:`MIN_CHOICES` choices (too few to tell)
``clean``  0.15    nothing was explored: each move undone, move back to a position seen
                   before or dead end takes a third off, so three make it 0
``pace``   0.20    the gaps are far faster or steadier than the player's own norm, or the
                   population's (:func:`.move_timing.pace_part`)
``start``  0.15    the first move came as quickly as any other (:func:`.move_timing.start_part`)
=========  ======  ===========================================================================

The score is the weighted sum. An attempt is :attr:`Verdict.FLAGGED` (hidden from the board
until a moderator clears it) at :data:`FLAG_AT` or more, which neither the line alone can
reach nor everything but the line: a replay of the solver's line with at most one move
undone is flagged however it is paced, and a clean, fast, quick-starting game off the line
(a strong player) is not. Attempts of fewer than :data:`~.move_timing.MIN_MOVES` moves score
0. Whatever the score, an attempt at machine speed (:func:`.move_timing.machine_speed`) is
:attr:`Verdict.REFUSED`: never on the board.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from server.competition.line_play import Play, replay
from server.competition.move_timing import (
    MIN_MOVES,
    PaceNorm,
    gaps,
    machine_speed,
    norm_of,
    pace_part,
    play_times,
    start_part,
)
from server.games import Deal, Game, Options

#: The parts' weights (they add up to 1) and the score from which an attempt is flagged.
WEIGHTS: Final = {"line": 0.50, "clean": 0.15, "pace": 0.20, "start": 0.15}
FLAG_AT: Final = 0.6
#: Fewer choices than this say nothing about the line (openings can look alike).
MIN_CHOICES: Final = 10
#: The line part: 0 at this share of choices on the line or less, 1 at ``LINE_HIGH`` or more.
LINE_LOW: Final = 0.5
LINE_HIGH: Final = 0.9
#: Exploration events that take the clean part from 1 to 0.
CLEAN_EVENTS: Final = 3


class Verdict(enum.Enum):
    CLEAR = "clear"  # ranked as usual
    FLAGGED = "flagged"  # hidden from the board until a moderator clears it
    REFUSED = "refused"  # machine speed: never on the board


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict, the score (0 to 1), each part of it (see the module docstring), the
    evidence in words (one line a part) and the replay's counts."""

    verdict: Verdict
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    play: Play = field(default_factory=Play)


def line_part(play: Play) -> tuple[float, str]:
    """The line part of ``play`` (0 to 1) and the evidence in words."""
    if play.choices < MIN_CHOICES:
        return 0.0, f"line: {play.choices} choices, too few to tell"
    part = min(1.0, max(0.0, (play.line_share - LINE_LOW) / (LINE_HIGH - LINE_LOW)))
    return part, f"line: {play.on_line} of {play.choices} choices on the solver's par line ({play.line_share:.2f})"


def clean_part(play: Play) -> tuple[float, str]:
    """The clean part of ``play`` (0 to 1) and the evidence in words."""
    words = f"explored: {play.undos} undone, {play.revisits} back to a position seen, {play.dead_ends} dead ends"
    return max(0.0, 1.0 - play.exploration / CLEAN_EVENTS), words


def judge(
    play: Play, entries: Sequence[str], times_ms: Sequence[int], started_ms: int | None, norm: PaceNorm
) -> Judgement:
    """The verdict on an attempt whose log ``entries`` (stored at ``times_ms``, empty if
    unknown) replayed to ``play``, in a race started at ``started_ms``, for a player whose
    pace norm is ``norm``."""
    timed = play_times(entries, times_ms)
    between = gaps(timed)
    machine = machine_speed(timed, started_ms)
    if play.moves < MIN_MOVES:
        verdict = Verdict.CLEAR if machine is None else Verdict.REFUSED
        return Judgement(verdict, 0.0, dict.fromkeys(WEIGHTS, 0.0), [machine] if machine else [], play)
    first = timed[0] - started_ms if timed and started_ms is not None else None
    found = {
        "line": line_part(play),
        "clean": clean_part(play),
        "pace": pace_part(between, norm),
        "start": start_part(first, between),
    }
    parts = {name: round(part, 3) for name, (part, _) in found.items()}
    score = round(sum(WEIGHTS[name] * part for name, part in parts.items()), 3)
    reasons = [words for _, words in found.values() if words]
    if play.broken:
        reasons.append("log: an entry did not replay; counted up to it")
    if machine is not None:
        return Judgement(Verdict.REFUSED, score, parts, [machine, *reasons], play)
    verdict = Verdict.FLAGGED if score >= FLAG_AT else Verdict.CLEAR
    return Judgement(verdict, score, parts, [f"score {score:.2f} (flagged from {FLAG_AT})", *reasons], play)


def assess(
    variant: type[Game],
    deal: Deal | str,
    options: Options,
    entries: Sequence[str],
    times_ms: Sequence[int],
    started_ms: int | None,
    lines: Sequence[Sequence[str]],
    history: Sequence[Sequence[int]],
) -> Judgement:
    """The whole check of one attempt: its log replayed against the solver's ``lines``
    (:func:`.line_play.replay`), judged against the player's norm from the gaps of their
    earlier races, ``history`` (one list a race; empty for the population's norm)."""
    play = replay(variant, deal, options, entries, lines)
    return judge(play, entries, times_ms, started_ms, norm_of(history))
