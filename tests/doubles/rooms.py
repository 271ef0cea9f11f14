"""Room storage in memory (:class:`server.storage.rooms.RoomStorePort`), for unit tests of
what runs rooms: the semantics of :class:`~server.storage.rooms.RoomStore` on Redis, key by
key as its commit script has them (version check, fencing by lease epoch, logs by race,
expiry), held to them by tests/storage/test_room_store_contract.py. It fails on demand:
an outage (:meth:`MemoryRoomStore.go_down`), a write whose reply is lost
(:meth:`MemoryRoomStore.lose_replies`), or a pause (:meth:`MemoryRoomStore.pause`)."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Hashable, Sequence

from server.live.clock import SYSTEM_CLOCK, RoomClock
from server.storage.connection import StoreUnavailable
from server.storage.keys import MAX_SEATS, key_part
from server.storage.lease_rule import VERSION_SPAN, stored_version
from server.storage.rooms import (
    TIME_MARK,
    Committed,
    Fenced,
    RoomWrite,
    StoredRoom,
    VersionConflict,
    _split_time,
)

Key = tuple[Hashable, ...]


class MemoryRoomStore:
    """Rooms in a dict; expiry runs on ``clock`` (a test's clock moves it)."""

    def __init__(self, clock: RoomClock = SYSTEM_CLOCK) -> None:
        self._clock = clock
        self._values: dict[Key, object] = {}
        self._expires: dict[Key, float] = {}  # key -> clock.time() at which it goes
        self._active: set[str] = set()
        self._down: str | None = None
        self._lost_replies = 0
        self._open = asyncio.Event()
        self._open.set()
        #: Writes stored, in order (a lost reply's included).
        self.stored: list[RoomWrite] = []

    # -- failing on demand ----------------------------------------------------------------

    def go_down(self, why: str = "storage is down") -> None:
        """Every operation raises :class:`StoreUnavailable` (doing nothing) until :meth:`come_back`."""
        self._down = why

    def come_back(self) -> None:
        self._down = None

    def lose_replies(self, count: int = 1) -> None:
        """The next ``count`` commits happen (or are refused) as usual, then raise
        :class:`StoreUnavailable`, as when a reply times out after the write landed."""
        self._lost_replies = count

    def pause(self) -> None:
        """Operations wait, unanswered, until :meth:`resume`."""
        self._open.clear()

    def resume(self) -> None:
        self._open.set()

    async def _answer(self, operation: str) -> None:
        await asyncio.sleep(0)  # never answered within the caller's turn, as over a socket
        await self._open.wait()
        if self._down is not None:
            raise StoreUnavailable(f"{operation}: {self._down}")

    # -- the port ---------------------------------------------------------------------------

    async def commit(self, write: RoomWrite) -> Committed:
        code = key_part(write.code)
        await self._answer(f"store room {code}")
        result = self._commit(write)
        if self._lost_replies:
            self._lost_replies -= 1
            raise StoreUnavailable(f"store room {code}: no reply in time")
        if result == -1:
            raise Fenced(f"room {code}: this node's lease {write.lease} is not the owner's any more")
        if result == 0:
            raise VersionConflict(f"room {code} changed in storage under version {write.base}: reloading it")
        self.stored.append(write)
        return Committed.STORED

    def _commit(self, write: RoomWrite) -> int:
        """The commit script, step by step (see server/storage/rooms.py)."""
        code, version_key = write.code, ("version", write.code)
        step = write.version - write.base
        stamped = self._int(version_key) + step
        self._set(version_key, stamped, keep_ttl=True)
        version = stamped % VERSION_SPAN
        token = write.lease.rpartition(":")[2]
        fenced = token != "" and (stamped - version) // VERSION_SPAN != int(token)
        if fenced or version != write.version:
            self._set(version_key, stamped - step, keep_ttl=True)
            return -1 if fenced else 0
        stamp = f"{TIME_MARK}{self._clock.now_ms() if write.at_ms is None else write.at_ms}"
        for seat, text in write.entries:
            log = self._get(("log", code, write.race, seat))
            if isinstance(log, list):
                log.append(text + stamp)
            else:
                self._set(("log", code, write.race, seat), [text + stamp])
        if write.expiry > 0:
            self._expire(version_key, write.expiry)
            if write.record is not None:
                self._set(("room", code), write.record, ttl=write.expiry)
                self._set(("race", code, write.race), write.record, ttl=write.expiry)
            for key in [("epoch", code)] + [("log", code, write.race, seat) for seat in range(MAX_SEATS)]:
                self._expire(key, write.expiry)
        elif write.record is not None:
            if write.expiry == 0:
                # A rematch brings a finished room back in progress: nothing of it expires.
                self._set(("room", code), write.record)
                self._expires.pop(version_key, None)
                self._expires.pop(("epoch", code), None)
            else:
                self._set(("room", code), write.record, keep_ttl=True)
        return 1

    async def load(self, code: str) -> StoredRoom | None:
        await self._answer(f"load room {code}")
        record = self._get(("room", key_part(code)))
        if not isinstance(record, bytes):
            return None
        return StoredRoom(record, stored_version(self._int(("version", code))), {})

    async def logs(self, code: str, race: int, seats: int = MAX_SEATS) -> dict[int, list[str]]:
        timed = await self._timed_logs(code, race, range(seats))
        return {seat: [text for text, _ in entries] for seat, entries in timed.items()}

    async def mark_active(self, code: str, active: bool) -> None:
        await self._answer(f"list room {code}")
        if active:
            self._active.add(key_part(code))
        else:
            self._active.discard(key_part(code))

    # -- the rest of RoomStore's reads ----------------------------------------------------------

    async def seat_log(self, code: str, race: int, seat: int) -> tuple[list[str], list[int]]:
        timed = (await self._timed_logs(code, race, [seat])).get(seat, [])
        times = [stored for _, stored in timed if stored is not None]
        return [text for text, _ in timed], times if len(times) == len(timed) else []

    async def _timed_logs(self, code: str, race: int, seats: Sequence[int]) -> dict[int, list[tuple[str, int | None]]]:
        await self._answer(f"read the move logs of room {code}")
        found: dict[int, list[tuple[str, int | None]]] = {}
        for seat in seats:
            log = self._get(("log", key_part(code), race, seat))
            if isinstance(log, list) and log:
                found[seat] = [_split_time(entry) for entry in log]
        return found

    async def finished_race(self, code: str, race: int) -> bytes | None:
        await self._answer(f"read race {race} of room {code}")
        record = self._get(("race", key_part(code), race))
        return record if isinstance(record, bytes) else None

    async def exists(self, code: str) -> bool:
        await self._answer(f"look up room {code}")
        return self._get(("room", key_part(code))) is not None

    async def active(self) -> list[str]:
        await self._answer("list the rooms in progress")
        return sorted(self._active)

    # -- what other stores do to the room's keys ---------------------------------------------------

    def grant(self, code: str, node: str) -> str:
        """A new lease on the room for ``node`` (as the leases' grant script: the epoch goes
        up, the version is restamped with it): every lease granted before it is fenced."""
        epoch = self._int(("epoch", code)) + 1
        self._set(("epoch", code), epoch, keep_ttl=True)
        stamped = epoch * VERSION_SPAN + self._int(("version", code)) % VERSION_SPAN
        self._set(("version", code), stamped, keep_ttl=True)
        return f"{node}:{epoch}"

    def ttl(self, code: str) -> int:
        """The room record's time to live in seconds, as Redis's TTL: -2 no record, -1 none."""
        key = ("room", code)
        if self._get(key) is None:
            return -2
        expires = self._expires.get(key)
        return -1 if expires is None else math.ceil(expires - self._clock.time())

    # -- a keyspace with expiry -----------------------------------------------------------------

    def _get(self, key: Key) -> object:
        expires = self._expires.get(key)
        if expires is not None and expires <= self._clock.time():
            del self._expires[key]
            self._values.pop(key, None)
        return self._values.get(key)

    def _int(self, key: Key) -> int:
        value = self._get(key)
        return value if isinstance(value, int) else 0

    def _set(self, key: Key, value: object, ttl: int | None = None, keep_ttl: bool = False) -> None:
        if not keep_ttl or self._get(key) is None:
            self._expires.pop(key, None)
        self._values[key] = value
        if ttl is not None:
            self._expires[key] = self._clock.time() + ttl

    def _expire(self, key: Key, ttl: int) -> None:
        if self._get(key) is not None:
            self._expires[key] = self._clock.time() + ttl
