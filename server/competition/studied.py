"""The anti-cheat verdict on a ranked daily attempt: does it look like a studied run, a line
known before the attempt (from a second account's look at the deal, say) replayed? Pure.

Four parts, each from 0 (what people do) to 1 (what a replay does):

=========  ======  ===========================================================================
part       weight  1 when ...
=========  ======  ===========================================================================
``line``   0.45    the standing choices follow a solver's line (:mod:`.line_play`): 0 at a
                   share of :data:`LINE_LOW` or less, 1 at :data:`LINE_HIGH` or more; 0 below
                   :data:`MIN_CHOICES` choices (too few to tell)
``clean``  0.25    nothing was explored besides the line the player kept (:func:`explore`):
                   0 at one position off that line per :data:`MOVES_PER_EXPLORED` moves
                   kept, or :data:`CLEAN_EVENTS` positions if that is more; linear between
``pace``   0.15    the gaps are far faster or steadier than the player's own norm, or the
                   population's (:func:`.move_timing.pace_part`)
``start``  0.15    the first move came as quickly as any other (:func:`.move_timing.start_part`)
=========  ======  ===========================================================================

The score is the weighted sum. An attempt is :attr:`Verdict.FLAGGED` (hidden from the board
until a moderator clears it) at :data:`FLAG_AT` or more, which neither the line alone can
reach nor everything but the line: a replay of the solver's line that explored at most
two fifths of what clears the clean part (one position per 10 moves kept, or one in shorter
runs) is flagged however it is paced, and a clean, fast, quick-starting game off the line
(a strong player) is not. On the line, a player who explored like a person is flagged only
if the timing says replay too: at full pace or start part, or half of both.

What counts as explored is judged on the line the player kept, not on the entries: a move
made and undone, then made again, explored nothing; one that was undone explored the
position it reached unless the kept line passes through it; moves that came back to a
position the line had been at explored the positions of that loop. So moves made and undone
only to look human count for no more than what they show, and the exploration that clears a
run grows with its length. Attempts of fewer than :data:`~.move_timing.MIN_MOVES` moves score
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
from server.games import Deal, Game, GameError, Options
from server.solver.keys import key_function

#: The parts' weights (they add up to 1) and the score from which an attempt is flagged.
WEIGHTS: Final = {"line": 0.45, "clean": 0.25, "pace": 0.15, "start": 0.15}
FLAG_AT: Final = 0.6
#: Fewer choices than this say nothing about the line (openings can look alike).
MIN_CHOICES: Final = 10
#: The line part: 0 at this share of choices on the line or less, 1 at ``LINE_HIGH`` or more.
LINE_LOW: Final = 0.5
LINE_HIGH: Final = 0.9
#: The clean part is 0 at one position explored per this many moves kept (a person finding
#: their way explores more: an assumption until fitted to real logs), or at ``CLEAN_EVENTS``
#: positions in runs too short for that to be more.
MOVES_PER_EXPLORED: Final = 4
CLEAN_EVENTS: Final = 3


class Verdict(enum.Enum):
    CLEAR = "clear"  # ranked as usual
    FLAGGED = "flagged"  # hidden from the board until a moderator clears it
    REFUSED = "refused"  # machine speed: never on the board


@dataclass(frozen=True, slots=True)
class Explored:
    """What an attempt explored besides the line it kept (see the module docstring):
    ``kept`` moves from the start to where it ended, loops taken out; ``positions`` reached
    that this line does not pass through; ``undone`` moves taken back; ``looped`` moves that
    stood but were taken out as loops (they came back to a position the line had been at)."""

    kept: int = 0
    positions: int = 0
    undone: int = 0
    looped: int = 0


def explore(variant: type[Game], deal: Deal | str, options: Options, entries: Sequence[str]) -> Explored:
    """What the log ``entries`` of ``deal`` explored besides the line it kept, positions told
    apart as the solver does (:func:`server.solver.keys.key_function`). A log that stops
    replaying counts up to there."""
    game = variant.new(deal, options)
    key_of = key_function(variant)
    path = [key_of(game)]  # the positions the standing moves went through so far
    reached: set[bytes] = set()
    undone = 0
    for entry in entries:
        if entry.startswith("resign "):
            continue
        try:
            if entry == "undo":
                game.undo()
                path.pop()
                undone += 1
                continue
            game.apply(game.parse_move(entry))
        except GameError:
            break
        path.append(key_of(game))
        reached.add(path[-1])
    kept: list[bytes] = []
    index: dict[bytes, int] = {}
    for key in path:
        if key in index:  # back where the line was: the loop since then is cut out
            for cut in kept[index[key] + 1 :]:
                del index[cut]
            del kept[index[key] + 1 :]
        else:
            index[key] = len(kept)
            kept.append(key)
    return Explored(len(kept) - 1, len(reached.difference(kept)), undone, len(path) - len(kept))


@dataclass(frozen=True, slots=True)
class Judgement:
    """The verdict, the score (0 to 1), each part of it (see the module docstring), the
    evidence in words (one line a part), the replay's counts and what it explored."""

    verdict: Verdict
    score: float
    parts: dict[str, float] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    play: Play = field(default_factory=Play)
    explored: Explored = field(default_factory=Explored)


def line_part(play: Play) -> tuple[float, str]:
    """The line part of ``play`` (0 to 1) and the evidence in words."""
    if play.choices < MIN_CHOICES:
        return 0.0, f"line: {play.choices} choices, too few to tell"
    part = min(1.0, max(0.0, (play.line_share - LINE_LOW) / (LINE_HIGH - LINE_LOW)))
    return part, f"line: {play.on_line} of {play.choices} choices on the solver's par line ({play.line_share:.2f})"


def clean_part(explored: Explored) -> tuple[float, str]:
    """The clean part of what an attempt ``explored`` (0 to 1) and the evidence in words."""
    enough = max(CLEAN_EVENTS, explored.kept / MOVES_PER_EXPLORED)
    words = (
        f"explored: {explored.positions} positions off the {explored.kept} moves kept"
        f" ({explored.undone} moves undone, {explored.looped} in loops);"
        f" clean part 0 from {enough:.0f} (one per {MOVES_PER_EXPLORED} moves kept, at least {CLEAN_EVENTS})"
    )
    return max(0.0, 1.0 - explored.positions / enough), words


def judge(
    play: Play,
    explored: Explored,
    entries: Sequence[str],
    times_ms: Sequence[int],
    started_ms: int | None,
    norm: PaceNorm,
) -> Judgement:
    """The verdict on an attempt whose log ``entries`` (stored at ``times_ms``, empty if
    unknown) replayed to ``play`` and ``explored`` that, in a race started at ``started_ms``,
    for a player whose pace norm is ``norm``."""
    timed = play_times(entries, times_ms)
    between = gaps(timed)
    machine = machine_speed(timed, started_ms)
    if play.moves < MIN_MOVES:
        verdict = Verdict.CLEAR if machine is None else Verdict.REFUSED
        return Judgement(verdict, 0.0, dict.fromkeys(WEIGHTS, 0.0), [machine] if machine else [], play, explored)
    first = timed[0] - started_ms if timed and started_ms is not None else None
    found = {
        "line": line_part(play),
        "clean": clean_part(explored),
        "pace": pace_part(between, norm),
        "start": start_part(first, between),
    }
    parts = {name: round(part, 3) for name, (part, _) in found.items()}
    score = round(sum(WEIGHTS[name] * part for name, part in parts.items()), 3)
    reasons = [words for _, words in found.values() if words]
    if play.broken:
        reasons.append("log: an entry did not replay; counted up to it")
    if machine is not None:
        return Judgement(Verdict.REFUSED, score, parts, [machine, *reasons], play, explored)
    verdict = Verdict.FLAGGED if score >= FLAG_AT else Verdict.CLEAR
    reasons = [f"score {score:.2f} (flagged from {FLAG_AT})", *reasons]
    return Judgement(verdict, score, parts, reasons, play, explored)


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
    (:func:`.line_play.replay`) and for what it explored (:func:`explore`), judged against
    the player's norm from the gaps of their earlier races, ``history`` (one list a race;
    empty for the population's norm)."""
    play = replay(variant, deal, options, entries, lines)
    explored = explore(variant, deal, options, entries)
    return judge(play, explored, entries, times_ms, started_ms, norm_of(history))
