"""Who follows a room, and the sending of what each of them is sent.

What goes to whom is decided by a :class:`~server.live.delivery.Delivery`; the audience
executes it without reading the room: it finds each seat's connections, encodes each frame
once and sends the same bytes to all its recipients. Spectators get the full form after the
room's spectator delay; a delayed mirror of the room (a :class:`RoomMirror`, fed the same
frames) answers their snapshots, so a late spectator sees exactly what the others saw.
Without a delay the spectators see the room as it is: the mirror is then not fed every
event (a copy of the board per move) but taken afresh from the room when a snapshot needs it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Mapping

import msgspec

from protocol.codec import encode
from protocol.messages import Ack, Snapshot, Update
from protocol.mirror import RoomMirror
from server.connections.link import ClientLink, send_to_all
from server.live.clock import SYSTEM_CLOCK, RoomClock, Timer
from server.live.delivery import Delivery, ToLink, ToRacers, ToSeats, ToSpectators, snapshot_of
from server.rooms.room import Room


class Audience:
    """The racers' and spectators' connections of one room, and the spectator delay."""

    def __init__(
        self, room: Room, on_delivery: Callable[[int], None] | None = None, clock: RoomClock = SYSTEM_CLOCK
    ) -> None:
        """``on_delivery`` is told how many frames went to spectators (metrics); the delay is
        kept on ``clock``."""
        self.code = room.code
        self._clock = clock
        self.racers: dict[int, list[ClientLink]] = {}
        self.spectators: list[ClientLink] = []
        self._mirror = RoomMirror(snapshot_of(room, None, clock.now_ms()))
        #: Frames for spectators not yet due: (when, frame, the update or snapshot it holds).
        self._delayed: deque[tuple[float, bytes, Update | Snapshot]] = deque()
        self._release: Timer | None = None
        self._on_delivery = on_delivery
        #: The mirror missed events sent without a delay: take it from the room before use.
        self._mirror_behind = False

    def reset_mirror(self, room: Room) -> None:
        """Start the spectators' mirror afresh from ``room`` (after a restore)."""
        self._delayed.clear()
        self._mirror = RoomMirror(snapshot_of(room, None, self._clock.now_ms()))
        self._mirror_behind = False

    def _catch_up(self, room: Room) -> None:
        """Bring a mirror that missed undelayed events up to ``room`` (which they came from)."""
        if self._mirror_behind:
            self._mirror.reset(snapshot_of(room, None, self._clock.now_ms()))
            self._mirror_behind = False

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

    def keep_seats(self, members: Mapping[int, str]) -> None:
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
            return snapshot_of(room, seat, self._clock.now_ms(), request_id)
        self._catch_up(room)
        view = self._mirror.view()
        view = msgspec.structs.replace(view, clock=msgspec.structs.replace(view.clock, now=self._clock.now_ms()))
        return Snapshot(room=self.code, version=self._mirror.version, view=view, id=request_id)

    def execute(self, delivery: Delivery) -> None:
        """Send a step's frames, each encoded once, to the connections they name (spectators'
        after their delay), then let go of connections whose player lost their seat."""
        for frame in delivery.frames:
            data = encode(frame.message)
            for to in frame.to:
                match to:
                    case ToLink(link):
                        link.send_frame(data)
                    case ToSeats(seats):
                        send_to_all([link for seat in sorted(seats) for link in self.racers.get(seat, [])], data)
                    case ToRacers(but):
                        send_to_all(
                            [link for seat, links in self.racers.items() if seat not in but for link in links], data
                        )
                    case ToSpectators(delay):
                        assert not isinstance(frame.message, Ack), "acks go to their connection only"
                        self._to_spectators_after(delay, data, frame.message)
        if delivery.members is not None:
            self.keep_seats(delivery.members)

    def _to_spectators_after(self, delay: float, frame: bytes, message: Update | Snapshot) -> None:
        if delay <= 0 and not self._delayed:
            if isinstance(message, Snapshot):
                self._mirror.reset(message)
                self._mirror_behind = False
            else:
                self._mirror_behind = True  # the room itself is the spectators' view now
            self._to_spectators(frame)
        else:
            self._delayed.append((self._clock.time() + delay, frame, message))
            self._schedule_release()

    def _to_spectators(self, frame: bytes) -> None:
        send_to_all(self.spectators, frame)
        if self._on_delivery is not None and self.spectators:
            self._on_delivery(len(self.spectators))

    def _schedule_release(self) -> None:
        if self._release is None and self._delayed:
            clock = self._clock
            self._release = clock.call_later(max(0.0, self._delayed[0][0] - clock.time()), self._flush)

    def _flush(self) -> None:
        self._release = None
        now = self._clock.time()
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
