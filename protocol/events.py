"""Room events: the changes an ``update`` carries (a tagged union, ``kind`` names each)."""

from __future__ import annotations

import msgspec

from protocol.values import Clock, Patch, Progress, Racer, Result, Reveal, RoomState


class _Event(msgspec.Struct, tag_field="kind", omit_defaults=True):
    """Base of room events inside an :class:`~protocol.replies.Update`."""


class BoardChanged(_Event, tag="board"):
    """A racer's board changed: the patches turn the old public board into the new."""

    seat: int
    patches: list[Patch]
    progress: Progress


class ProgressChanged(_Event, tag="progress"):
    """A rival's progress, without cards: what a racer sees of a rival during a race."""

    seat: int
    progress: Progress


class RacerJoined(_Event, tag="joined"):
    racer: Racer


class RacerLeft(_Event, tag="left"):
    """The racer in ``seat`` left before the race; ``creator`` names the new creator if the
    one who left had created the room."""

    seat: int
    creator: str | None = None


class RacerReady(_Event, tag="ready"):
    seat: int
    ready: bool


class RacerConnection(_Event, tag="connection"):
    seat: int
    connected: bool


class SpectatorsChanged(_Event, tag="spectators"):
    count: int


class StateChanged(_Event, tag="state"):
    """The room moved to ``state``; a new race publishes its ``commitment`` here."""

    state: RoomState
    clock: Clock
    race: int = 1
    commitment: str | None = None
    #: As ``view.certified``: whether the race's deal is certified winnable.
    certified: bool | None = None


class RacerFinished(_Event, tag="finished"):
    seat: int
    time_ms: int
    moves: int


class RacerResigned(_Event, tag="resigned"):
    seat: int
    reason: str = "resigned"


class RaceOver(_Event, tag="race_over"):
    """The race is over. ``reveal`` is absent for a daily challenge, whose deal stays secret
    until the day ends."""

    results: list[Result]
    reveal: Reveal | None = None


class Rematched(_Event, tag="rematch"):
    """A new race in the same room: every board and result is cleared, ready flags too."""

    race: int


RoomEvent = (
    BoardChanged
    | ProgressChanged
    | RacerJoined
    | RacerLeft
    | RacerReady
    | RacerConnection
    | SpectatorsChanged
    | StateChanged
    | RacerFinished
    | RacerResigned
    | RaceOver
    | Rematched
)
