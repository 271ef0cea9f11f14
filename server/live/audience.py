"""Who follows a room, and what each of them is sent.

Each event is encoded once per form (full, and redacted for racers still racing), and the
same bytes go to every recipient of that form. Spectators get the full form after the
room's spectator delay; a delayed mirror of the room (a :class:`RoomMirror`, fed the same
frames) answers their snapshots, so a late spectator sees exactly what the others saw.
Without a delay the spectators see the room as it is: the mirror is then not fed every
event (a copy of the board per move) but taken afresh from the room when a snapshot needs it.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable

import msgspec

from protocol.codec import encode
from protocol.messages import Snapshot, Update
from protocol.mirror import RoomMirror
from server.clock import now_ms
from server.connections.link import ClientLink, send_to_all
from server.rooms.room import Room
from server.rooms.step import Emission


class Audience:
    """The racers' and spectators' connections of one room, and the spectator delay."""

    def __init__(self, room: Room, on_delivery: Callable[[int], None] | None = None) -> None:
        """``on_delivery`` is told how many frames went to spectators (metrics)."""
        self.code = room.code
        self.racers: dict[int, list[ClientLink]] = {}
        self.spectators: list[ClientLink] = []
        self._mirror = RoomMirror(_snapshot(room, None))
        #: Frames for spectators not yet due: (when, frame, the update or snapshot it holds).
        self._delayed: deque[tuple[float, bytes, Update | Snapshot]] = deque()
        self._release: asyncio.TimerHandle | None = None
        self._on_delivery = on_delivery
        #: The mirror missed events sent without a delay: take it from the room before use.
        self._mirror_behind = False

    def reset_mirror(self, room: Room) -> None:
        """Start the spectators' mirror afresh from ``room`` (after a restore)."""
        self._delayed.clear()
        self._mirror = RoomMirror(_snapshot(room, None))
        self._mirror_behind = False

    def _catch_up(self, room: Room) -> None:
        """Bring a mirror that missed undelayed events up to ``room`` (which they came from)."""
        if self._mirror_behind:
            self._mirror.reset(_snapshot(room, None))
            self._mirror_behind = False

    def resynced(self, room: Room) -> None:
        """``room`` was reloaded from storage: each racer gets a snapshot of it now, the
        spectators after the spectator delay, in order with the events (so a storage fault
        never shows them what the delay still hides)."""
        for seat, links in self.racers.items():
            if links:
                send_to_all(links, encode(_snapshot(room, seat)))
        snapshot = _snapshot(room, None)
        if room.spectator_delay <= 0 and not self._delayed:
            self._mirror.reset(snapshot)
            self._mirror_behind = False
            self._to_spectators(encode(snapshot))
        else:
            self._delayed.append((time.monotonic() + room.spectator_delay, encode(snapshot), snapshot))
            self._schedule_release()

    # -- membership ------------------------------------------------------------------

    def follow_as_racer(self, link: ClientLink, seat: int) -> None:
        if link in self.spectators:
            self.spectators.remove(link)
        links = self.racers.setdefault(seat, [])
        if link not in links:
            links.append(link)
        link.rooms[self.code] = seat

    def follow_as_spectator(self, link: ClientLink) -> None:
        if link not in self.spectators:
            self.spectators.append(link)
        link.rooms[self.code] = None

    def unfollow(self, link: ClientLink) -> int | None:
        """Stop sending to ``link``; return the seat it raced in, if any."""
        seat = link.rooms.pop(self.code, None)
        if link in self.spectators:
            self.spectators.remove(link)
        if seat is not None and link in self.racers.get(seat, []):
            self.racers[seat].remove(link)
        return seat

    def keep_seats(self, members: dict[int, str]) -> None:
        """Stop sending a seat's frames to connections whose player no longer holds it."""
        for seat, links in self.racers.items():
            for link in [link for link in links if members.get(seat) != link.player]:
                links.remove(link)
                link.rooms.pop(self.code, None)

    def present_seats(self) -> set[int]:
        """Seats with at least one connection following them."""
        return {seat for seat, links in self.racers.items() if links}

    def spectator_count(self) -> int:
        """Distinct players spectating (one player's several connections count once)."""
        return len({link.player for link in self.spectators})

    def links_of(self, seat: int) -> list[ClientLink]:
        return self.racers.get(seat, [])

    # -- sending ------------------------------------------------------------------------

    def snapshot_for(self, room: Room, link: ClientLink, request_id: int | None = None) -> Snapshot:
        """What ``link`` may see now: its racer's view, or the delayed spectator view."""
        seat = link.rooms.get(self.code)
        if seat is not None:
            return _snapshot(room, seat, request_id)
        self._catch_up(room)
        view = self._mirror.view()
        view = msgspec.structs.replace(view, clock=msgspec.structs.replace(view.clock, now=now_ms()))
        return Snapshot(room=self.code, version=self._mirror.version, view=view, id=request_id)

    def refresh(self, room: Room, seat: int) -> None:
        """A fresh snapshot to the racer in ``seat`` (their view changed beyond events)."""
        links = self.racers.get(seat, [])
        if links:
            send_to_all(links, encode(_snapshot(room, seat)))

    def send(self, room: Room, emission: Emission) -> None:
        """One event to everyone who follows the room, each in the form they may see."""
        base = emission.version - 1
        full_update = Update(room=self.code, base=base, version=emission.version, events=[emission.full])
        full = encode(full_update)
        redacted = None
        if emission.redacted is not None:
            redacted = encode(Update(room=self.code, base=base, version=emission.version, events=[emission.redacted]))
        for seat, links in self.racers.items():
            hide = redacted is not None and seat != emission.owner and room.is_racing(seat)
            send_to_all(links, redacted if hide and redacted is not None else full)
        delay = room.spectator_delay
        if delay <= 0 and not self._delayed:
            self._mirror_behind = True  # the room itself is the spectators' view now
            self._to_spectators(full)
        else:
            self._delayed.append((time.monotonic() + delay, full, full_update))
            self._schedule_release()

    def _to_spectators(self, frame: bytes) -> None:
        send_to_all(self.spectators, frame)
        if self._on_delivery is not None and self.spectators:
            self._on_delivery(len(self.spectators))

    def _schedule_release(self) -> None:
        if self._release is None and self._delayed:
            loop = asyncio.get_running_loop()
            self._release = loop.call_at(loop.time() + max(0.0, self._delayed[0][0] - time.monotonic()), self._flush)

    def _flush(self) -> None:
        self._release = None
        now = time.monotonic()
        while self._delayed and self._delayed[0][0] <= now:
            _, frame, update = self._delayed.popleft()
            if isinstance(update, Snapshot):
                self._mirror.reset(update)
            else:
                self._mirror.apply(update)
            self._to_spectators(frame)
        self._schedule_release()

    def close(self) -> None:
        if self._release is not None:
            self._release.cancel()
            self._release = None


def _snapshot(room: Room, seat: int | None, request_id: int | None = None) -> Snapshot:
    return Snapshot(room=room.code, version=room.version, view=room.view(seat, now_ms()), id=request_id)
