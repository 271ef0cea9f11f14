"""The live rooms of this process: created, loaded on demand, restored at start, let go.

A room in progress lives in memory while it runs; a finished room is loaded on demand (for
its results, race log or spectators) while Redis keeps it, and let go when nobody follows it.
Who races where is read from the live rooms themselves, so it can never disagree with them
(the service-wide index, for players on other nodes, is :mod:`server.storage.nodes`'s seats).

With several server processes, a room lives in the one process that holds its lease
(:mod:`server.cluster.leases`): this registry creates, loads and restores a room only after
taking its lease, and lets the lease go with the room.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import logging
import secrets
from collections.abc import Callable
from typing import Final

import msgspec

from protocol.messages import RoomOptions, RoomSummary, Variant
from server.cluster.cluster import Cluster
from server.cluster.lobby import DailyLine
from server.live.clock import SYSTEM_CLOCK, RoomClock
from server.live.loading import load_room
from server.live.recording import RaceRecorder
from server.live.runner import RoomRunner
from server.rooms.draft import DealPicker
from server.rooms.ghost import GhostRun
from server.rooms.lifecycle import State
from server.rooms.record import RoomRecord
from server.rooms.room import Room
from server.rooms.timing import RoomTiming
from server.storage.connection import StoreUnavailable
from server.storage.rooms import RoomStore

logger = logging.getLogger("server.rooms")

#: Room codes: 8 characters from an alphabet without look-alikes (40 bits of chance).
CODE_ALPHABET: Final = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
CODE_LENGTH: Final = 8
#: How long a player dropped from a daily attempt keeps it (at least), in milliseconds.
DAILY_GRACE_MS: Final = 900_000
#: Seconds a finished practice room (chosen deal, one racer) is kept: they are cheap to make.
PRACTICE_TTL: Final = 24 * 3600


def new_room_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


class Registry:
    """Every live room of this process, by code."""

    def __init__(
        self,
        store: RoomStore,
        recorder: RaceRecorder,
        timing: RoomTiming,
        finished_ttl: int,
        deal_picker: DealPicker,
        cluster: Cluster,
        on_delivery: Callable[[int], None] | None = None,
        on_fenced: Callable[[RoomRunner], None] | None = None,
        clock: RoomClock = SYSTEM_CLOCK,
    ) -> None:
        """``timing``: the rooms' durations (a daily attempt's grace period is longer);
        ``cluster``: this node of the service, whose leases the rooms are run under;
        ``on_fenced`` is told of a room another node took over; ``clock``: the rooms' time."""
        self.store = store
        self.cluster = cluster
        self.leases = cluster.leases
        self.on_fenced = on_fenced
        self._store = store
        self._recorder = recorder
        self._timing = timing
        self._finished_ttl = finished_ttl
        self._pick_deal = deal_picker
        self._on_delivery = on_delivery
        self._clock = clock
        self._rooms: dict[str, RoomRunner] = {}
        #: Leases of rooms let go, on their way back to Redis, by room code.
        self._releasing: dict[str, asyncio.Task[None]] = {}
        #: Loads under way, by room: a second request for the room waits for the first's
        #: (its own claim would fail against this node's, and read as "no such room").
        self._loading: dict[str, asyncio.Task[RoomRunner | None]] = {}

    def __getitem__(self, code: str) -> RoomRunner:
        """The live room ``code`` (:class:`KeyError` if it is not in memory)."""
        return self._rooms[code]

    def live(self, code: str) -> bool:
        """Whether room ``code`` runs here (the fast path: no Redis)."""
        runner = self._rooms.get(code)
        return runner is not None and not runner.closed

    def runners(self) -> list[RoomRunner]:
        return [runner for runner in self._rooms.values() if not runner.closed]

    def _timing_of(self, daily: str | None) -> RoomTiming:
        if daily is None:
            return self._timing
        # A daily attempt is one a day: a dropped player has a quarter of an hour to come back.
        return dataclasses.replace(self._timing, grace_ms=max(self._timing.grace_ms, DAILY_GRACE_MS))

    def _ttl(self, record: RoomRecord) -> int:
        if record.options.deal is not None:
            return min(self._finished_ttl, PRACTICE_TTL)
        return self._finished_ttl

    def _runner(self, room: Room) -> RoomRunner:
        return RoomRunner(
            room,
            self._store,
            self._recorder,
            self._ttl,
            self._pick_deal,
            self._timing_of(room.record.daily),
            self._on_delivery,
            self.leases,
            self.cluster,
            self._fenced,
            self._clock,
        )

    def _fenced(self, runner: RoomRunner) -> None:
        if self._rooms.get(runner.code) is runner:
            del self._rooms[runner.code]
        if self.on_fenced is not None:
            self.on_fenced(runner)

    async def create(
        self,
        variant: Variant,
        options: RoomOptions,
        player: str,
        name: str,
        *,
        bot: bool = False,
        next_deal: str | None = None,
        next_salt: str | None = None,
        daily: str | None = None,
        ranked: bool = False,
        code: str | None = None,
        ghost: GhostRun | None = None,
        challenge: str | None = None,
        arena: str | None = None,
        bracket: str | None = None,
    ) -> RoomRunner:
        """A new room with ``player`` in seat 0, stored (and listed as in progress) before it
        is returned; under ``code`` if given (from :meth:`reserve_code`), else a new code;
        racing ``ghost`` if given (:meth:`Room.create <server.rooms.room.Room.create>`).
        Raises :class:`~server.rooms.errors.RoomError` on bad options and
        :class:`~server.storage.connection.StoreUnavailable` if it could not be stored."""
        if code is None:
            code = await self.reserve_code()
        room, step = Room.create(
            code,
            variant,
            options,
            player,
            name,
            self._clock.now_ms(),
            self._pick_deal,
            self._timing_of(daily),
            bot=bot,
            next_deal=next_deal,
            next_salt=next_salt,
            daily=daily,
            ranked=ranked,
            ghost=ghost,
            challenge=challenge,
            arena=arena,
            bracket=bracket,
        )
        runner = self._runner(room)
        try:
            # Listed first: a code in the set without a record is skipped at restore; a
            # record missing from the set would never be restored.
            await self._store.mark_active(code, True)
            await runner.store_first(step)
        except BaseException:
            await self.leases.release(code)
            raise
        self._rooms[code] = runner
        return runner

    async def reserve_code(self) -> str:
        """A fresh room code, its lease taken by this node (it expires by itself if no room
        is created under it)."""
        while True:
            code = new_room_code()
            if code in self._rooms or await self._store.exists(code):
                continue
            claim = await self.leases.claim(code, must_exist=False)
            if claim.lease is not None:
                return code

    async def get(self, code: str) -> RoomRunner | None:
        """The room ``code``, from memory or, if Redis still keeps it, from storage."""
        code = code.strip().upper()
        runner = self._rooms.get(code)
        if runner is not None and not runner.closed:
            return runner
        if not code.isascii() or not code.isalnum():
            return None
        loading = self._loading.get(code)
        if loading is None:
            loading = self._loading[code] = asyncio.ensure_future(self._load(code))
            loading.add_done_callback(lambda done: self._loaded(code, done))
        # Shielded: a request that gives up waiting does not cancel the load the others wait for.
        return await asyncio.shield(loading)

    def _loaded(self, code: str, done: asyncio.Task[RoomRunner | None]) -> None:
        if self._loading.get(code) is done:
            del self._loading[code]
        if not done.cancelled():
            done.exception()  # retrieved: every waiter that is still there gets it raised

    def _released(self, code: str, done: asyncio.Task[None]) -> None:
        if self._releasing.get(code) is done:
            del self._releasing[code]

    async def _load(self, code: str) -> RoomRunner | None:
        releasing = self._releasing.get(code)
        if releasing is not None:
            # Let go a moment ago: claimed before the release lands, it would seem another's.
            await asyncio.gather(releasing, return_exceptions=True)
        if not self.leases.holds(code):
            claim = await self.leases.claim(code)
            if claim.lease is None:
                return None  # no such room, or another node runs it (the router sends there)
        try:
            runner = await self._load_owned(code)
        except BaseException:
            await self._let_go(code)
            raise
        if runner is None:
            await self._let_go(code)
        return runner

    async def _let_go(self, code: str) -> None:
        if code not in self._rooms:
            await self.leases.release(code)

    async def _load_owned(self, code: str) -> RoomRunner | None:
        room = await load_room(
            self._store, code, self._pick_deal, lambda record: self._timing_of(record.daily), now=self._clock.now_ms
        )
        if room is None or not room.record.seats:
            return None  # no such room, or everyone left: the room is closed
        runner = self._rooms.get(code)
        if runner is not None and not runner.closed:
            return runner  # loaded by another request meanwhile
        runner = self._runner(room)
        self._rooms[code] = runner
        runner.schedule()
        logger.debug("room %s loaded (%s, version %d)", code, room.state.value, room.version)
        return runner

    async def restore(self) -> int:
        """Load every room in progress that no node runs (at start-up, after a restart, and
        from time to time: a room whose owner died is taken over here, its timers going on);
        return how many were loaded."""
        restored = 0
        codes = [code for code in await self._store.active() if not self.live(code)]
        # One round trip for every room's holder, then claims only where one may succeed:
        # this runs every half TTL on every node.
        holders = await self.cluster.owners(codes)
        alive = await self.cluster.alive({h for h in holders.values() if h is not None} - {self.leases.node})
        codes = [code for code in codes if holders.get(code) not in alive]
        for code in codes:
            if self.live(code) or self.leases.in_hand(code):
                continue  # running here, or being created or loaded here right now
            claim = await self.leases.claim(code)
            if claim.lease is None:
                if claim.holder is None:  # no record: gone
                    await self._store.mark_active(code, False)
                    continue
                # A holder that stopped beating is dead (or paused: it is fenced).
                holder = claim.holder
                mine = holder == self.leases.node  # this node before a restart (same id)
                if not mine and holder in await self.cluster.alive({holder}):
                    continue
                if not await self.leases.take_over(claim, code):
                    continue
            runner = await self.get(code)
            if runner is None or runner.finished:
                await self._store.mark_active(code, False)  # tidy: finished or gone
                if runner is not None and not runner.audience.spectators and not runner.audience.present_seats():
                    self._rooms.pop(code).close()
                    await self._let_go(code)
                continue
            restored += 1
        return restored

    async def sweep_orphans(self) -> int:
        """:meth:`restore`, logging instead of raising when Redis is away."""
        try:
            return await self.restore()
        except StoreUnavailable as error:
            logger.warning("could not look for rooms without an owner: %s", error)
            return 0

    def rooms_of(self, player: str) -> list[RoomRunner]:
        """The live rooms ``player`` holds a seat in (and has not left)."""
        return [r for r in self.runners() if player in r.room.members().values()]

    def daily_lines(self) -> list[DailyLine]:
        """This node's live daily attempts (racing), for the lobby of those who may watch."""
        return [
            DailyLine(record.daily, sorted({seat.player for seat in record.seats}), r.room.summary())
            for r in self.runners()
            if (record := r.room.record).daily is not None and r.room.state is State.RACING
        ]

    def public(self) -> list[RoomSummary]:
        # The live spectator count: the room's own goes out at most once a second.
        return [
            msgspec.structs.replace(r.room.summary(), spectators=r.audience.spectator_count())
            for r in self.runners()
            if r.room.record.options.public and not r.finished
        ]

    def lost(self, code: str) -> None:
        """Room ``code``'s lease went to another node: let the room go at once."""
        runner = self._rooms.get(code)
        if runner is not None:
            runner.fenced("its lease was taken over")

    async def let_go(self, code: str) -> None:
        """Stop running room ``code`` here and give its lease up (drain)."""
        runner = self._rooms.pop(code, None)
        if runner is not None:
            async with runner.lock:
                runner.close()
        await self.leases.release(code)

    def sweep(self, now: int, keep_finished_ms: int = 600_000) -> int:
        """Let go of rooms nobody follows that finished more than ``keep_finished_ms`` ago
        (Redis keeps them; they load again on demand). Returns how many were let go."""
        stale = [
            code
            for code, runner in self._rooms.items()
            if runner.closed
            or (
                runner.finished
                and not runner.audience.spectators
                and not runner.audience.present_seats()
                and now - (runner.room.record.finished or now) >= keep_finished_ms
            )
        ]
        for code in stale:
            self._rooms.pop(code).close()
            task = self._releasing[code] = asyncio.ensure_future(self.leases.release(code))
            task.add_done_callback(functools.partial(self._released, code))
        return len(stale)

    async def drain(self) -> None:
        """Wait until no room is in the middle of a command, then stop every room's timers
        and give every lease up, so other nodes take the rooms over at once."""
        for code in list(self._rooms):
            await self.let_go(code)
