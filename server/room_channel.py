"""A live room: the sans-I/O :class:`Room` plus who follows it, storage and timers.

Every command runs under the room's lock, in this order: the room decides (no I/O);
its log entries and record are written to Redis; only then is the request
acknowledged and the events sent. If storage fails, the command is taken back and
the player told, so an acknowledged move is always a stored move.

Each event is encoded once per form (full, and redacted for racers still racing),
and the same bytes go to every recipient of that form. Spectators get the full form
after the room's spectator delay; a delayed mirror of the room (a
:class:`RoomMirror`, fed the same frames) answers their snapshots, so a late
spectator sees exactly what the others saw at that moment.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable

import msgspec

from protocol.codec import encode
from protocol.messages import Ack, Snapshot, StateChanged, Update
from protocol.mirror import RoomMirror
from server.client_link import ClientLink, send_to_all
from server.rooms.lifecycle import LifecycleError, State
from server.rooms.record import encode_record
from server.rooms.room import Emission, Outcome, Room, RoomError
from server.store import Store, StoreUnavailable

logger = logging.getLogger("server.rooms")


def now_ms() -> int:
    return int(time.time() * 1000)


class RoomChannel:
    """A room and its audience. Create it, then :meth:`start` it inside the event loop."""

    def __init__(
        self,
        room: Room,
        store: Store,
        finished_ttl: int,
        seated: dict[str, set[str]] | None = None,
        on_empty: Callable[[RoomChannel], Awaitable[None]] | None = None,
        on_outcome: Callable[[RoomChannel, Outcome], Awaitable[None]] | None = None,
    ) -> None:
        """``seated`` is the hub's index (player -> codes of the rooms they race in), kept
        current by the channel; ``on_empty`` is called once the last racer is gone;
        ``on_outcome`` sees every stored outcome before it is sent (statistics, ratings)."""
        self.room = room
        self.store = store
        self.finished_ttl = finished_ttl
        self._seated = {} if seated is None else seated
        self._on_empty = on_empty
        self._on_outcome = on_outcome
        self._members: set[str] = set()
        self.lock = asyncio.Lock()
        self.racers: dict[int, list[ClientLink]] = {}
        self.spectators: list[ClientLink] = []
        self._mirror = RoomMirror(self._snapshot(None))
        self._delayed: deque[tuple[float, bytes, Update]] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._release: asyncio.TimerHandle | None = None
        self.closed = False
        self._sync_seats()

    @property
    def code(self) -> str:
        return self.room.code

    def _snapshot(self, seat: int | None, request_id: int | None = None) -> Snapshot:
        return Snapshot(room=self.code, version=self.room.version, view=self.room.view(seat, now_ms()), id=request_id)

    def snapshot_for(self, link: ClientLink, request_id: int | None = None) -> Snapshot:
        """What ``link`` may see now: its racer's view, or the delayed spectator view."""
        seat = link.rooms.get(self.code)
        if seat is not None:
            return self._snapshot(seat, request_id)
        view = self._mirror.view()
        view = msgspec.structs.replace(view, clock=msgspec.structs.replace(view.clock, now=now_ms()))
        return Snapshot(room=self.code, version=self._mirror.version, view=view, id=request_id)

    # -- commands -------------------------------------------------------------------

    async def run(
        self, link: ClientLink | None, request_id: int | None, command: Callable[[], Outcome], ack: bool = True
    ) -> bool:
        """Run ``command`` on the room, persist, acknowledge ``link``'s request (unless not
        ``ack``: the caller answers), broadcast. Errors go to ``link`` with ``request_id``.
        Returns whether the command succeeded.
        """
        async with self.lock:
            try:
                outcome = command()
            except RoomError as error:
                if link is not None:
                    link.error(error.code, str(error), request_id, error.rule)
                return False
            except LifecycleError as error:
                if link is not None:
                    link.error("not-allowed", str(error), request_id)
                return False
            try:
                await self._persist(outcome)
            except StoreUnavailable as error:
                logger.error("room %s: storage failed, command taken back: %s", self.code, error)
                if outcome.revert is not None:
                    outcome.revert()
                    if link is not None:
                        link.error("storage-unavailable", "storage is unavailable; try again", request_id)
                    return False
                # Not a move: the room goes on in memory; the record is saved with the next write.
            if self._on_outcome is not None:
                try:
                    await self._on_outcome(self, outcome)
                except StoreUnavailable as error:
                    logger.error("room %s: statistics or ratings not recorded: %s", self.code, error)
            if link is not None and request_id is not None and ack:
                link.send(Ack(id=request_id, room=self.code, version=self.room.version, move=outcome.move))
            self.deliver(outcome)
            self._sync_seats()
            if self.room.is_empty() and not self.closed and self._on_empty is not None:
                await self._on_empty(self)
            return True

    def _sync_seats(self) -> None:
        """Follow the room's seats: connections of a seat whose racer left or was removed stop
        following it, and the hub's index of who races where is brought up to date."""
        members = self.room.members()
        for seat, links in self.racers.items():
            for link in [link for link in links if members.get(seat) != link.player]:
                links.remove(link)
                link.rooms.pop(self.code, None)
        players = set(members.values())
        for player in self._members - players:
            codes = self._seated.get(player)
            if codes is not None:
                codes.discard(self.code)
                if not codes:
                    del self._seated[player]
        for player in players - self._members:
            self._seated.setdefault(player, set()).add(self.code)
        self._members = players

    async def _persist(self, outcome: Outcome) -> None:
        room = self.room
        if outcome.reset_logs:
            await self.store.reset_logs(self.code, outcome.reset_logs)
        for seat, entry in outcome.log:
            await self.store.append_move(self.code, seat, entry, room.version)
        if outcome.finished:
            await self.store.finish_room(self.code, encode_record(room.record), self.finished_ttl)
            logger.info("race finished in room %s (race %d)", self.code, room.record.race)
        elif outcome.save:
            await self.store.save_room(self.code, encode_record(room.record), active=room.state is not State.FINISHED)

    def deliver(self, outcome: Outcome) -> None:
        """Send an outcome's events to everyone who follows the room, then fresh snapshots."""
        for emission in outcome.emissions:
            self._send(emission)
        for seat in outcome.refresh:
            for link in self.racers.get(seat, []):
                link.send(self._snapshot(seat))
        if any(isinstance(e.full, StateChanged) for e in outcome.emissions):
            logger.info("room %s is %s", self.code, self.room.state.value)
        self.schedule()

    def _send(self, emission: Emission) -> None:
        base = emission.version - 1
        full_update = Update(room=self.code, base=base, version=emission.version, events=[emission.full])
        full = encode(full_update)
        redacted = None
        if emission.redacted is not None:
            redacted = encode(Update(room=self.code, base=base, version=emission.version, events=[emission.redacted]))
        for seat, links in self.racers.items():
            hide = redacted is not None and seat != emission.owner and self.room.is_racing(seat)
            send_to_all(links, redacted if hide and redacted is not None else full)
        delay = self.room.spectator_delay
        if delay <= 0 and not self._delayed:
            self._mirror.apply(full_update)
            send_to_all(self.spectators, full)
        else:
            self._delayed.append((time.monotonic() + delay, full, full_update))
            self._schedule_release()

    def _schedule_release(self) -> None:
        if self._release is None and self._delayed:
            loop = asyncio.get_running_loop()
            self._release = loop.call_at(loop.time() + max(0.0, self._delayed[0][0] - time.monotonic()), self._flush)

    def _flush(self) -> None:
        self._release = None
        now = time.monotonic()
        while self._delayed and self._delayed[0][0] <= now:
            _, frame, update = self._delayed.popleft()
            self._mirror.apply(update)
            send_to_all(self.spectators, frame)
        self._schedule_release()

    # -- timers -------------------------------------------------------------------------

    def schedule(self) -> None:
        """Arm the timer for the room's next deadline (countdown, time limit, grace)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        deadline = self.room.next_deadline()
        if deadline is None or self.closed:
            return
        loop = asyncio.get_running_loop()
        delay = max(0.0, (deadline - now_ms()) / 1000)
        self._timer = loop.call_at(loop.time() + delay, lambda: asyncio.ensure_future(self._tick()))

    async def _tick(self) -> None:
        self._timer = None
        await self.run(None, None, lambda: self.room.tick(now_ms()))

    # -- audience ------------------------------------------------------------------------

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

    def close(self) -> None:
        self.closed = True
        for handle in (self._timer, self._release):
            if handle is not None:
                handle.cancel()
