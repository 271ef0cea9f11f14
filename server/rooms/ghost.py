"""Ghost races: a recorded run replayed on its own timing in a seat of a practice room.

A ghost is a finished race's seat, its log and the time of each entry after that race's
start (:class:`GhostRun`). The room that races it keeps the run in its record and plays its
entries, through the same rules as a racer's, as their times come (:func:`due`): the ghost's
moves land in the ghost seat's move log like anyone's, so a ghost race replays and restores
as every race does. The ghost is never rated and holds no player; the racer sees only its
progress until they are done (the rule for every rival, :mod:`server.rooms.views`).
"""

from __future__ import annotations

from typing import Final

import msgspec

from protocol.errors import ErrorCode
from protocol.messages import RoomOptions
from server.games import Autoplay, Game, GameError, Options, variant_class
from server.rooms.entries import BadEntry, LogEntry, Played, Resigned, Undone, parse_entry
from server.rooms.errors import RoomError

#: The ghost seat's player id: never a player's (theirs are 16 hex digits).
GHOST_PLAYER: Final = "ghost"


class GhostRun(msgspec.Struct, frozen=True, omit_defaults=True):
    """One racer's run of a finished race: what a ghost plays.

    ``entries`` are its move-log texts (moves, undos, a resignation) and ``at`` the ms after
    its race's start at which each was stored (ascending). ``ends`` is the ms after the
    start at which the run stopped (its win, resignation or the race's end); ``finished_ms``
    its winning time, if it won. ``source`` names it for people (``ROOM/race/seat``)."""

    name: str
    entries: list[str]
    at: list[int]
    ends: int
    finished_ms: int | None = None
    source: str = ""


def run_of(
    name: str,
    entries: list[str],
    times: list[int | None],
    started: int,
    finished: int,
    finished_ms: int | None,
    source: str,
) -> GhostRun:
    """The run of a finished race's seat from its stored log (``times``: each entry's server
    time, Unix ms; None for an entry stored without one, which takes its predecessor's).
    ``started``/``finished`` are the race's start and end (Unix ms)."""
    at: list[int] = []
    last = 0
    for stored in times:
        last = max(last, stored - started) if stored is not None else last
        at.append(last)
    ends = max(last, finished - started) if finished_ms is None else max(last, finished_ms)
    return GhostRun(name=name, entries=list(entries), at=at, ends=ends, finished_ms=finished_ms, source=source)


def ghost_options(options: RoomOptions, deal: str) -> RoomOptions:
    """The options of a room that races a run played with ``options`` on ``deal``: the same
    autoplay (the run's moves depend on it), hints and undo; one racer, private, on that
    deal, with no clock of its own (a run the clock stopped stops the ghost there)."""
    return RoomOptions(autoplay=options.autoplay, hints=options.hints, undo=options.undo, max_racers=1, deal=deal)


def check_run(variant: str, deal: str, autoplay: str, run: GhostRun) -> None:
    """Raise :class:`RoomError` (``invalid-options``) unless ``run`` replays on ``deal``:
    every entry parses and every move is legal where it comes. A room that races it can
    then play its entries without a refusal."""
    if len(run.at) != len(run.entries) or any(b < a for a, b in zip(run.at, run.at[1:], strict=False)):
        raise RoomError(ErrorCode.INVALID_OPTIONS, "the ghost's run has no time for each entry")
    game: Game = variant_class(variant).new(deal, Options(autoplay=Autoplay(autoplay)))
    try:
        for text in run.entries:
            match parse_entry(text):
                case Played(move):
                    game.push(game.parse_move(move))
                case Undone():
                    game.pop()
                case Resigned():
                    pass
    except (BadEntry, GameError, IndexError) as error:
        raise RoomError(ErrorCode.INVALID_OPTIONS, f"the ghost's run does not replay on its deal: {error}") from None


def due(run: GhostRun, played: int, elapsed: int) -> list[LogEntry]:
    """The run's entries to play now: those after the first ``played`` whose time has come
    ``elapsed`` ms into the race."""
    end = played
    while end < len(run.entries) and run.at[end] <= elapsed:
        end += 1
    return [parse_entry(text) for text in run.entries[played:end]]


def time_of(run: GhostRun, index: int) -> int:
    """Ms after the race's start of entry ``index``: a winning run's last entry (its winning
    move) at the run's measured winning time, which its log time may miss by a millisecond."""
    if index == len(run.entries) - 1 and run.finished_ms is not None:
        return run.finished_ms
    return run.at[index]


def next_due(run: GhostRun, played: int) -> int:
    """Ms after the race's start at which the ghost next has something to do (its next
    entry, or stopping at the run's end)."""
    return run.at[played] if played < len(run.entries) else run.ends
