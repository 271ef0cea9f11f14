"""Running one live room: every command under the room's lock, stored before it is acknowledged.

A command goes one way: the room *decides* (no I/O, no change), storage *stores* the step
(one version-checked script), the room *applies* it, and only then is the request
acknowledged and the events sent. If storage fails (:class:`StoreUnavailable`, an outage) or
refuses a step decided on a stale room (:class:`VersionConflict`), the command is refused and
the room keeps the state it had; because a write whose answer was lost may still have landed,
the room then resynchronises from Redis before it takes another command. Timers (countdown end,
time limit, grace periods) run commands like any other, and retry with backoff when storage
fails: nothing ever happens only in memory.

Ownership: a runner acts only while its node holds the room's lease (checked before every
command, locally while the lease is known valid, else in Redis; the commit script checks it
again). A runner that learns it was fenced (another node took the room over) takes no more
commands and hands its connections to ``on_fenced``, which sends them to the new owner.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Final, Protocol

from protocol.errors import ErrorCode
from protocol.messages import Snapshot
from server.connections.link import ClientLink
from server.live.audience import Audience
from server.live.clock import SYSTEM_CLOCK, RoomClock, Timer
from server.live.delivery import delivery_of, resync_delivery
from server.live.loading import load_room
from server.rooms.commands import Command, SetSpectators, Tick
from server.rooms.draft import DealPicker
from server.rooms.entries import entry_text
from server.rooms.errors import RoomError
from server.rooms.lifecycle import State
from server.rooms.record import RoomRecord, encode_record
from server.rooms.room import Room
from server.rooms.step import Step
from server.rooms.timing import RoomTiming
from server.storage.connection import StoreUnavailable
from server.storage.rooms import Expiry, Fenced, RoomStorePort, RoomWrite, VersionConflict
from server.storage.unrecorded import Noted

if TYPE_CHECKING:
    from server.cluster.cluster import Cluster
    from server.cluster.leases import RoomLeases

logger = logging.getLogger("server.rooms")

#: Spectator counts go out at most this often per room (seconds), as one coalesced event.
SPECTATOR_COUNT_INTERVAL: Final = 1.0
#: Backoff of a timer whose command could not be stored (seconds, doubling).
_RETRY_FIRST, _RETRY_MAX = 0.2, 5.0


class RaceRecording(Protocol):
    """What a room needs recorded of its races (:class:`~server.live.recording.RaceRecorder`)."""

    async def rate(self, room: Room, step: Step) -> None:
        """Add the racers' new ratings to ``step``, which finishes the race, before it is stored."""

    async def note(self, room: Room, step: Step) -> Noted:
        """Note the finishing ``step`` as unrecorded, before it is stored."""

    async def record(self, room: Room, noted: Noted | None = None) -> None:
        """Everything the finished race leaves behind, then clear ``noted``."""

    async def started(self, room: Room) -> None:
        """Count a race started."""


class RoomRunner:
    """A live room: the sans-I/O :class:`Room`, its audience, its storage and its timers."""

    def __init__(
        self,
        room: Room,
        store: RoomStorePort,
        recorder: RaceRecording,
        finished_ttl: Callable[[RoomRecord], int],
        deal_picker: DealPicker,
        timing: RoomTiming,
        on_delivery: Callable[[int], None] | None = None,
        leases: RoomLeases | None = None,
        seats: Cluster | None = None,
        on_fenced: Callable[[RoomRunner], None] | None = None,
        clock: RoomClock = SYSTEM_CLOCK,
    ) -> None:
        """``finished_ttl`` says how long a finished room is kept (seconds); ``deal_picker``
        and ``timing`` are needed to rebuild the room on a resync. ``leases``: this node's
        leases (None: no lease is checked, for a room alone on its Redis); ``seats`` (the
        cluster) keeps the service-wide index of who races where; ``on_fenced`` is told when
        another node took over; ``clock`` gives the room its time and timers."""
        self.room = room
        self._clock = clock
        self.audience = Audience(room, on_delivery, clock)
        self.lock = asyncio.Lock()
        self.closed = False
        self._store = store
        self._recorder = recorder
        self._finished_ttl = finished_ttl
        self._pick_deal = deal_picker
        self._timing = timing
        self._stale = False
        self._timer: Timer | None = None
        #: The deadline (room clock, ms) ``_timer`` fires at, when it was armed for one.
        self._armed_for: int | None = None
        self._retry = _RETRY_FIRST
        self._heal_timer: Timer | None = None
        self._heal_retry = _RETRY_FIRST
        self._count_timer: Timer | None = None
        self._count_sent = float("-inf")
        self._tasks: set[asyncio.Task[None]] = set()
        self._leases = leases
        self._seats = seats
        self._on_fenced = on_fenced

    @property
    def code(self) -> str:
        return self.room.code

    # -- commands ----------------------------------------------------------------------

    async def run(
        self, command: Command, link: ClientLink | None = None, request_id: int | None = None, ack: bool = True
    ) -> Step:
        """Decide, store, apply, then acknowledge ``link``'s request (unless not ``ack``: the
        caller answers) and send the events. Raises :class:`RoomError` if the room refuses the
        command, :class:`StoreUnavailable` if it could not be stored (an outage, or the room
        moved to another node) and :class:`VersionConflict` if it was decided on a room that
        storage has moved on: either way the room is as it was, and resynchronises before
        its next command (by itself as soon as it can)."""
        async with self.lock:
            if self.closed:
                raise RoomError(ErrorCode.NO_SUCH_ROOM, f"room {self.code} is closed")
            try:
                if self._leases is not None:
                    await self._leases.confirm(self.code)
                if self._stale:
                    try:
                        await self._resync()
                    except StoreUnavailable:
                        self._heal_later()
                        raise
                now = self._clock.now_ms()
                step = self.room.decide(command, now)
                noted = None
                if step.outcome.finished:
                    await self._recorder.rate(self.room, step)
                    # Before the step is stored: if this node dies before the results are
                    # recorded, another node records them.
                    noted = await self._recorder.note(self.room, step)
                try:
                    await self._store_step(step, now)
                except (StoreUnavailable, VersionConflict):
                    self._stale = True
                    self._heal_later()
                    raise
            except Fenced as error:
                self.fenced(str(error))
                raise StoreUnavailable(f"room {self.code} moved to another server: reconnect") from error
            seats_change = step.outcome.saves_record  # else no seat changes hands
            racing_before = self._racing() if seats_change else set()
            before_state, before_start = self.room.record.state, self.room.record.started
            self.room.apply(step)
            if seats_change:
                self._note_seats(racing_before)
            if step.record.state != before_state:
                logger.debug("room %s is %s", self.code, step.record.state)
            reply = (link, request_id) if link is not None and request_id is not None and ack else None
            self.audience.execute(delivery_of(self.room, step, self._clock.now_ms(), reply))
            self.schedule()
            if step.outcome.finished:
                self._background(self._recorder.record(self.room.as_of_now(), noted))
            elif step.record.state == "racing" and step.record.started != before_start:
                self._background(self._recorder.started(self.room))
            if self.room.is_empty():
                await self._close_for_good()
            return step

    async def store_first(self, step: Step) -> None:
        """Store and apply a new room's first step (its creator's seat), sending nothing:
        nobody follows the room yet."""
        async with self.lock:
            await self._store_step(step, self._clock.now_ms())
            self.room.apply(step)
            self._note_seats(set())
            self.audience.reset_mirror(self.room)
            self.schedule()

    def _racing(self) -> set[str]:
        """Players holding a seat in the room while it is not finished."""
        return set() if self.finished else set(self.room.members().values())

    def _note_seats(self, before: set[str]) -> None:
        """Keep the shared index of who races where in step with the room (in the
        background: the room's keys and the players' are in different Cluster slots)."""
        if self._seats is None:
            return
        after = self._racing()
        changed = before ^ after
        if changed:  # one round trip for the whole step (a race's end frees every seat)
            self._background(self._note_seat_changes({player: player in after for player in sorted(changed)}))

    async def _note_seat_changes(self, changes: dict[str, bool]) -> None:
        assert self._seats is not None
        try:
            await self._seats.seat_changes(self.code, changes)
        except StoreUnavailable as error:
            logger.warning("room %s: seat index of %s not updated: %s", self.code, ", ".join(changes), error)

    def fenced(self, why: str) -> None:
        """Another node owns the room now: take no more commands, hand the clients over."""
        if self.closed:
            return
        logger.warning("room %s: fenced (%s); letting it go", self.code, why)
        self.close()
        if self._leases is not None:
            self._leases.forget(self.code)
        if self._on_fenced is not None:
            self._on_fenced(self)

    async def _store_step(self, step: Step, decided_ms: int) -> None:
        """Store ``step``, decided at ``decided_ms`` on the room's clock (the time its log
        entries are stored with)."""
        outcome = step.outcome
        if not outcome.emissions and not outcome.log and not outcome.save:
            return  # nothing changed
        record = step.record
        if outcome.finished:
            expiry = self._finished_ttl(record)
        elif record.state == "finished":
            expiry = Expiry.KEEP
        else:
            expiry = Expiry.NONE
        if record.race != self.room.record.race:  # a rematch: in progress again
            await self._store.mark_active(self.code, True)
        write = RoomWrite(
            code=self.code,
            race=record.race,
            base=step.base,
            version=step.version,
            entries=[(seat, entry_text(entry)) for seat, entry in outcome.log],
            record=encode_record(record) if outcome.saves_record else None,
            expiry=expiry,
            lease=self._lease(),
            at_ms=decided_ms,
        )
        await self._store.commit(write)
        if outcome.finished:
            try:
                await self._store.mark_active(self.code, False)
            except StoreUnavailable as error:
                # The record says finished: a restore skips it and tidies the set.
                logger.warning("room %s: could not take it off the active rooms: %s", self.code, error)

    async def _resync(self) -> None:
        """Rebuild the room from Redis, the truth after a failed write (raises
        :class:`StoreUnavailable` while Redis is still away)."""
        room = await load_room(
            self._store,
            self.code,
            self._pick_deal,
            lambda record: self._timing,
            present=frozenset(self.audience.present_seats()),
            spectators=self.room.spectators,
            now=self._clock.now_ms,
        )
        if room is None:
            raise StoreUnavailable(f"room {self.code} is gone from storage")
        self.room = room
        self._stale = False
        logger.info("room %s resynchronised from storage at version %d", self.code, self.room.version)
        # Everyone sees the room as storage has it (spectators after their delay).
        self.audience.execute(resync_delivery(self.room, self.audience.present_seats(), self._clock.now_ms()))
        self.schedule()

    def _heal_later(self) -> None:
        """Resynchronise a stale room as soon as Redis answers again, retrying with backoff,
        without waiting for its next command: a command that was not stored may be one
        nobody repeats (a racer's drop, which starts their grace period), and the clients
        whose requests failed learn the truth from the snapshots the resync sends."""
        if self._heal_timer is None and not self.closed:
            self._heal_timer = self._clock.call_later(self._heal_retry, lambda: self._background(self._heal()))

    async def _heal(self) -> None:
        self._heal_timer = None
        async with self.lock:
            if not self._stale or self.closed:
                self._heal_retry = _RETRY_FIRST
                return
            try:
                await self._resync()
            except StoreUnavailable as error:
                retry = self._heal_retry
                logger.warning("room %s: not resynchronised yet, retrying in %.1f s: %s", self.code, retry, error)
                self._heal_retry = min(_RETRY_MAX, self._heal_retry * 2)
                self._heal_later()
                return
        self._heal_retry = _RETRY_FIRST

    # -- reading ---------------------------------------------------------------------------

    def snapshot_for(self, link: ClientLink, request_id: int | None = None) -> Snapshot:
        return self.audience.snapshot_for(self.room, link, request_id)

    # -- timers ----------------------------------------------------------------------------

    def schedule(self) -> None:
        """Arm the timer for the room's next deadline (countdown, time limit, grace). A timer
        armed for that deadline already is kept: most moves leave it where it was."""
        deadline = self.room.next_deadline()
        if self._timer is not None and deadline is not None and deadline == self._armed_for and not self.closed:
            return
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if deadline is None or self.closed:
            return
        self._arm(max(0.0, (deadline - self._clock.now_ms()) / 1000))
        self._armed_for = deadline

    def _arm(self, delay: float) -> None:
        self._timer = self._clock.call_later(delay, lambda: self._background(self._tick()))
        self._armed_for = None  # a retry's delay, not a deadline (schedule() says which)

    async def _tick(self) -> None:
        self._timer = None
        try:
            await self.run(Tick())
        except (StoreUnavailable, VersionConflict) as error:
            logger.warning("room %s: timer not stored, retrying in %.1f s: %s", self.code, self._retry, error)
            self._arm(self._retry)
            self._retry = min(_RETRY_MAX, self._retry * 2)
            return
        except RoomError:
            return  # closed meanwhile
        self._retry = _RETRY_FIRST

    def spectators_changed(self) -> None:
        """The spectators changed: their count goes out at once if none went out in the last
        second, else at the end of that second, once, however many joined or left meanwhile."""
        if self._count_timer is None and not self.closed:
            wait = max(0.0, self._count_sent + SPECTATOR_COUNT_INTERVAL - self._clock.time())
            self._count_timer = self._clock.call_later(wait, self._send_count)

    def _send_count(self) -> None:
        self._count_timer = None
        self._count_sent = self._clock.time()
        self._background(self._count())

    async def _count(self) -> None:
        try:
            await self.run(SetSpectators(self.audience.spectator_count()))
        except (StoreUnavailable, VersionConflict):
            self.spectators_changed()  # try again in a second
        except RoomError:
            pass

    def _background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- closing -----------------------------------------------------------------------------

    async def _close_for_good(self) -> None:
        """The last racer is gone (left, or dropped for good): out of the rooms in progress and
        expiring, so nobody joins a room nobody can start."""
        self.close()
        write = RoomWrite(
            code=self.code,
            race=self.room.record.race,
            base=self.room.version,
            version=self.room.version + 1,
            entries=[],
            record=encode_record(self.room.record),
            expiry=self._finished_ttl(self.room.record),
            lease=self._lease(),
        )
        try:
            await self._store.commit(write)
            await self._store.mark_active(self.code, False)
            if self._leases is not None:
                await self._leases.release(self.code)
        except Fenced as error:
            self.fenced(str(error))
        except (StoreUnavailable, VersionConflict) as error:
            logger.warning("room %s: emptied, but not yet marked finished: %s", self.code, error)
        logger.debug("room %s closed: every racer is gone", self.code)

    def _lease(self) -> str:
        return "" if self._leases is None else self._leases.lease(self.code)

    def close(self) -> None:
        """Stop the timers; the room takes no more commands."""
        self.closed = True
        for handle in (self._timer, self._count_timer, self._heal_timer):
            if handle is not None:
                handle.cancel()
        self._timer = self._count_timer = self._heal_timer = None
        self.audience.close()

    @property
    def finished(self) -> bool:
        return self.room.state is State.FINISHED
