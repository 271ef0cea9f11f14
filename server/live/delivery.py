"""What a stored step sends, and to whom: a :class:`Delivery`, built in one place.

:func:`delivery_of` reads the room once, right after the step is applied, and says every
frame and its recipients: the acknowledgement to the requesting connection, then each event
in the form each racer may see (a racer still racing sees only their own board; the others'
moves as progress), the same events to the spectators after the room's delay, then fresh
snapshots to the racers whose view changed beyond the events. The sending side
(:class:`~server.live.audience.Audience`) only executes it: it finds the connections of each
seat, holds spectator frames for their delay, and sends; it never reads the room back.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import msgspec

from protocol.messages import Ack, Snapshot, Update
from server.connections.link import ClientLink
from server.rooms.room import Room
from server.rooms.step import Step

# Frozen msgspec Structs rather than frozen dataclasses: a step makes several of these, and a
# frozen dataclass's __init__ (object.__setattr__ per field) costs several times as much.


class ToLink(msgspec.Struct, frozen=True):
    """One connection (the one whose request this answers)."""

    link: ClientLink


class ToSeats(msgspec.Struct, frozen=True):
    """The connections following these seats."""

    seats: frozenset[int]


class ToRacers(msgspec.Struct, frozen=True):
    """Every racer's connections, but those of the seats in ``but``."""

    but: frozenset[int] = frozenset()


class ToSpectators(msgspec.Struct, frozen=True):
    """The spectators, ``delay`` seconds from now (in order with the frames before)."""

    delay: float


Recipient = ToLink | ToSeats | ToRacers | ToSpectators


class Frame(msgspec.Struct, frozen=True):
    """One message, encoded once, for each of its recipients."""

    message: Ack | Update | Snapshot
    to: tuple[Recipient, ...]


class Delivery(msgspec.Struct, frozen=True):
    """The frames of one step in the order they go out, and the seats' holders after it
    (a connection whose player no longer holds its seat stops getting that seat's frames;
    None: the connections are kept as they are)."""

    frames: tuple[Frame, ...]
    members: Mapping[int, str] | None = None


def delivery_of(room: Room, step: Step, now: int, reply: tuple[ClientLink, int] | None = None) -> Delivery:
    """What ``step``, just applied to ``room`` at ``now`` (the room's clock), sends: the ack of
    request ``reply`` (link, id) first, if any, then its events, then the snapshots of the
    seats it refreshes."""
    frames: list[Frame] = []
    if reply is not None:
        link, request_id = reply
        frames.append(
            Frame(Ack(id=request_id, room=room.code, version=room.version, move=step.outcome.move), (ToLink(link),))
        )
    spectators = ToSpectators(room.spectator_delay)
    racing: frozenset[int] | None = None  # found once, and only for an event with hidden cards
    for emission in step.outcome.emissions:
        base = emission.version - 1
        full = Update(room=room.code, base=base, version=emission.version, events=[emission.full])
        hidden: frozenset[int] = frozenset()
        if emission.redacted is not None:
            if racing is None:
                racing = room.racing_seats()
            hidden = racing - {emission.owner}
        frames.append(Frame(full, (ToRacers(but=hidden), spectators)))
        if emission.redacted is not None and hidden:
            redacted = Update(room=room.code, base=base, version=emission.version, events=[emission.redacted])
            frames.append(Frame(redacted, (ToSeats(hidden),)))
    for seat in sorted(step.outcome.refresh):
        frames.append(Frame(snapshot_of(room, seat, now), (ToSeats(frozenset({seat})),)))
    members = room.members() if step.outcome.saves_record else None
    return Delivery(tuple(frames), members)


def resync_delivery(room: Room, followed: Iterable[int], now: int) -> Delivery:
    """``room`` was reloaded from storage: a snapshot of it to each ``followed`` seat now, and
    to the spectators after the delay (so a storage fault never shows them what the delay
    hides); the seats' holders as storage has them."""
    frames = [Frame(snapshot_of(room, seat, now), (ToSeats(frozenset({seat})),)) for seat in sorted(followed)]
    frames.append(Frame(snapshot_of(room, None, now), (ToSpectators(room.spectator_delay),)))
    # Storage may hold a seat another player took meanwhile: its old holder's connections go.
    return Delivery(tuple(frames), room.members())


def snapshot_of(room: Room, seat: int | None, now: int, request_id: int | None = None) -> Snapshot:
    """The room as the racer in ``seat`` (None: a spectator, undelayed) may see it at ``now``
    (the room's clock)."""
    return Snapshot(room=room.code, version=room.version, view=room.view(seat, now), id=request_id)
