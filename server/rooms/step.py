"""What deciding a room command gives: the step to store, then apply, and its events."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import msgspec

from protocol.messages import Result, RoomEvent
from server.games import Move
from server.rooms.entries import LogEntry
from server.rooms.errors import RoomError as RoomError
from server.rooms.record import RoomRecord

if TYPE_CHECKING:
    from server.rooms.draft import Draft


class Emission(msgspec.Struct, frozen=True):
    """One room event at ``version``. Racers still racing, other than ``owner``, get
    ``redacted`` instead of ``full`` when it is set; everyone else gets ``full``."""

    version: int
    full: RoomEvent
    redacted: RoomEvent | None = None
    owner: int | None = None


@dataclass(slots=True)
class Outcome:
    """What a step asks of the layer that runs the room, in this order: store ``log``
    entries (seat, entry) and the record (if ``save``; ``finished`` when the race ended,
    so it expires), then acknowledge, then send ``emissions``, then fresh snapshots to the
    racers in ``refresh``."""

    emissions: list[Emission] = field(default_factory=list)
    log: list[tuple[int, LogEntry]] = field(default_factory=list)
    save: bool = False
    finished: bool = False
    refresh: set[int] = field(default_factory=set)
    move: str | None = None
    #: With ``finished``: the places (ratings are added by :meth:`Room.rate`).
    results: list[Result] = field(default_factory=list)

    @property
    def saves_record(self) -> bool:
        """Whether the record is stored with this step (a race's end always is). Seats change
        hands only in such steps: a move or an undo leaves every seat's holder as it was."""
        return self.save or self.finished


#: An engine operation a step replays on apply: a move (push) or an undo (None), by seat.
EngineOp = tuple[int, Move | None]


@dataclass(slots=True)
class Step:
    """A decided command: the room after it (``next``), and what to store and send.
    Apply it with :meth:`Room.apply` to the room it was decided on, once stored."""

    base: int
    next: Draft
    outcome: Outcome
    engine: list[EngineOp]

    @property
    def version(self) -> int:
        return self.next.record.version

    @property
    def record(self) -> RoomRecord:
        return self.next.record
