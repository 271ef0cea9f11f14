"""Rooms in Redis: records, move logs by race, and the set of rooms in progress.

Every write of a room is one Lua script, :data:`_COMMIT`, conditional on the writer's lease
and the room's stored version (checked together, :mod:`server.storage.lease_rule`): it
appends the step's log entries, stores the new version and, when the step saves it, the
record, all at once, and only if the stored version is the one the step was
decided on. Applying the same step twice is then harmless (the second finds the version
moved on and writes nothing), and a step decided on a stale room is refused instead of
corrupting the log. A stored version equal to the step's *new* version is a conflict too,
not "already stored": another step may have reached that version (a write whose reply was
lost landing after a reload had read the room), and taking it for this one would
acknowledge a step that was never stored. A finished race's record is also kept under its
race number, and its logs stay keyed by race, so a rematch never hides the race before it.

Durability: Redis hands every write to its append-only file before it replies (fsync every
second), so a step stored when :meth:`RoomStore.commit` returns survives a crash of Redis.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Protocol, cast

import msgspec

from server.errors import StorageError
from server.storage.connection import Storage, as_bytes, as_int, as_list, as_text
from server.storage.keys import MAX_SEATS, Keys
from server.storage.lease_rule import VERSION_SPAN, stored_version

#: Keys: 1 record, 2 version (stamped, server/storage/lease_rule.py), 3 race archive, 4 epoch,
#: then the log key of each seat appended to (every seat when finishing, to expire them all).
#: Argv: 1 base version, 2 new version, 3 record or "" (no save), 4 ttl mode (-1 keep the
#: record's expiry, 0 no expiry, > 0 finish: expire the room's keys after that many
#: seconds), 5 the writer's lease token (or "" for tools and tests that own the Redis alone),
#: 6 entry count, then per entry its log key's index in KEYS and its text (the move's text, a
#: tab and its time in Unix ms, on the room's clock: the time stays beside the move, for
#: anti-cheat).
#: One INCRBY checks the lease and the version and stores the new version: it lands on the
#: writer's token and new version only if no lease was granted since the writer's (a lease
#: that merely expired still counts: nobody else can have owned the room meanwhile) and the
#: stored version was the base. Otherwise it is taken back and nothing is written: -1 fenced
#: (another lease was granted), 0 a version conflict. A move costs that INCRBY and one RPUSH.
_COMMIT: Final = f"""
local span = {VERSION_SPAN}
local stamped = redis.call('INCRBY', KEYS[2], ARGV[2] - ARGV[1])
local version = stamped % span
local fenced = ARGV[5] ~= '' and (stamped - version) / span ~= tonumber(ARGV[5])
if fenced or version ~= tonumber(ARGV[2]) then
  redis.call('DECRBY', KEYS[2], ARGV[2] - ARGV[1])
  return fenced and -1 or 0
end
for i = 0, tonumber(ARGV[6]) - 1 do
  redis.call('RPUSH', KEYS[tonumber(ARGV[7 + 2 * i])], ARGV[8 + 2 * i])
end
local ttl = tonumber(ARGV[4])
if ttl > 0 then
  redis.call('EXPIRE', KEYS[2], ttl)
  if ARGV[3] ~= '' then
    redis.call('SET', KEYS[1], ARGV[3], 'EX', ttl)
    redis.call('SET', KEYS[3], ARGV[3], 'EX', ttl)
  end
  for i = 4, #KEYS do redis.call('EXPIRE', KEYS[i], ttl) end
elseif ARGV[3] ~= '' then
  if ttl == 0 then
    -- A rematch brings a finished room back in progress: nothing of it expires any more.
    redis.call('SET', KEYS[1], ARGV[3])
    redis.call('PERSIST', KEYS[2])
    redis.call('PERSIST', KEYS[4])
  else
    redis.call('SET', KEYS[1], ARGV[3], 'KEEPTTL')
  end
end
return 1
"""

#: Between a stored log entry and its time (entries never hold a tab).
TIME_MARK: Final = "\t"

#: KEYS: 1 a client address's public rooms (zset: code -> Unix ms it was counted). ARGV: 1 the
#: new room's code, 2 now (Unix ms), 3 the cap, 4 the key's TTL (s), then the codes of rooms
#: over, to forget first. Counts the new room only if fewer than the cap remain, so creations
#: at once from one address never pass it. Returns {1 counted or 0 refused, rooms counted}.
_COUNT_PUBLIC: Final = """
for i = 5, #ARGV do redis.call('ZREM', KEYS[1], ARGV[i]) end
local held = redis.call('ZCARD', KEYS[1])
if held >= tonumber(ARGV[3]) then return {0, held} end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {1, held + 1}
"""
#: Ms after which a counted public room with neither a record nor a place in the rooms in
#: progress is taken for over: its creation failed (a room is counted before it is created).
PUBLIC_PENDING_MS: Final = 600_000
#: Seconds an address's public rooms are kept after the last one was counted: the count
#: would otherwise stay for every address that ever opened one.
PUBLIC_TTL: Final = 86_400


def _split_time(stored: str) -> tuple[str, int | None]:
    """A stored log entry's text and time (None for an entry stored without one)."""
    text, mark, stored_at = stored.rpartition(TIME_MARK)
    return (text, int(stored_at)) if mark else (stored, None)


class Expiry(enum.IntEnum):
    """What a commit does to the room's expiry (besides finishing, which sets one)."""

    KEEP = -1  # a finished room saved again keeps its expiry
    NONE = 0  # a room in progress never expires


class Committed(enum.Enum):
    STORED = 1


class VersionConflict(StorageError):
    """Raised by :meth:`RoomStore.commit` when the stored room is not at the version the
    step was decided on (another writer, or a write of ours whose reply was lost, moved it
    on): nothing was written, and the room must resynchronise. Redis answered: not an
    outage, so not a :class:`StoreUnavailable`."""


class Fenced(StorageError):
    """Raised by :meth:`RoomStore.commit` (and the leases' checks) when the writer's lease on
    the room is not the owner's any more (it expired and another node took the room over):
    nothing was written, and this node must let the room go."""


@dataclass(frozen=True, slots=True)
class StoredRoom:
    """A room as Redis holds it: its record (opaque bytes), version and current race's logs."""

    record: bytes
    version: int
    logs: dict[int, list[str]]


class RoomWrite(msgspec.Struct, frozen=True):
    """One step's writes: ``entries`` are (seat, text) in order; ``record`` is None when the
    step does not save it; ``expiry`` is an :class:`Expiry` or, to finish, a TTL in seconds.
    (A msgspec Struct: one is made a move, and a frozen dataclass is slow to make.)"""

    code: str
    race: int
    base: int
    version: int
    entries: list[tuple[int, str]]
    record: bytes | None
    expiry: int
    #: The writer's owner lease (``<node>:<token>``); "" skips the check (tools, tests).
    lease: str = ""
    #: The time stored with each entry, on the room's clock (Unix ms): when the step was
    #: decided (the anti-cheat check reads the pace from it); None: the store's own time.
    at_ms: int | None = None


class RoomStorePort(Protocol):
    """What a live room needs of room storage (:class:`RoomStore` on Redis; tests have one in
    memory). The semantics are :class:`RoomStore`'s, method by method."""

    async def commit(self, write: RoomWrite) -> Committed:
        """Store ``write`` (all of it, or nothing) if the writer holds the room's lease and the
        stored version is ``write.base``: else :class:`Fenced` or :class:`VersionConflict`;
        :class:`StoreUnavailable` when storage fails (the write may then have happened)."""

    async def load(self, code: str) -> StoredRoom | None:
        """The room's record and stored version (its logs left empty), or None."""

    async def logs(self, code: str, race: int, seats: int = MAX_SEATS) -> dict[int, list[str]]:
        """The log entries of race ``race`` by seat, seats without entries left out."""

    async def mark_active(self, code: str, active: bool) -> None:
        """Add the room to the rooms in progress, or take it off."""


#: (room, race)s whose key names are kept.
_KEY_CACHE: Final = 4096


@dataclass(frozen=True, slots=True)
class _RoomKeys:
    """The key names of one race of one room, as the commit script takes them: its four
    room keys (see :data:`_COMMIT`), and each seat's log key."""

    base: tuple[str, ...]
    logs: tuple[str, ...]


class RoomStore:
    """The rooms of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._keys = Keys(storage.prefix)
        self._commit = storage.script(_COMMIT)
        self._count_public = storage.script(_COUNT_PUBLIC)
        # The key names of recent (room, race)s: building them checks each part, per write.
        self._names: dict[tuple[str, int], _RoomKeys] = {}

    async def commit(self, write: RoomWrite) -> Committed:
        """Store ``write`` if the writer holds the room's lease and the stored version is
        ``write.base``; raise :class:`Fenced` if another node owns the room,
        :class:`VersionConflict` if the version is not the base (whatever else it is), and
        :class:`StoreUnavailable` if Redis fails (the write may then have happened or not).

        The write is one script run (:mod:`server.storage.scripts`): on a plain Redis it is
        sent at once on the storage's pipelined connection, whatever else is on its way; over
        TLS it goes in redis-py's next group commit; on a Cluster to its slot's node.
        """
        keys, args = self._arguments(write)  # checks the keys before anything is sent
        action = f"store room {write.code}"
        result = await self._commit.run(action, keys, args)
        if result == 1:
            return Committed.STORED
        if result == -1:
            raise Fenced(f"room {write.code}: this node's lease {write.lease} is not the owner's any more")
        if result == 0:
            raise VersionConflict(f"room {write.code} changed in storage under version {write.base}: reloading it")
        raise self._storage.failure(action, TypeError(f"unexpected reply {result!r}"))

    def _arguments(self, write: RoomWrite) -> tuple[list[str], list[str | bytes | int]]:
        """The script's keys and arguments. Only the logs the write appends to are passed
        (packing a command costs per argument), except when it finishes the race: then every
        seat's log, to expire them all."""
        room = self._room_keys(write.code, write.race)
        names = list(room.base)
        position: dict[int, int] = {}
        seats = range(MAX_SEATS) if write.expiry > 0 else sorted({seat for seat, _ in write.entries})
        for seat in seats:
            names.append(room.logs[seat])
            position[seat] = len(names)  # Lua counts KEYS from 1
        args: list[str | bytes | int] = [write.base, write.version, write.record or b"", int(write.expiry)]
        args += [write.lease.rpartition(":")[2], len(write.entries)]
        stamp = f"{TIME_MARK}{int(time.time() * 1000) if write.at_ms is None else write.at_ms}"
        for seat, text in write.entries:
            args += [position[seat], text + stamp]
        return names, args

    def _room_keys(self, code: str, race: int) -> _RoomKeys:
        names = self._names.get((code, race))
        if names is None:
            if len(self._names) >= _KEY_CACHE:
                self._names.clear()  # rooms come and go; the live ones are back at their next write
            keys = self._keys
            base = (keys.room(code), keys.room_version(code), keys.race(code, race), keys.room_epoch(code))
            logs = tuple(keys.log(code, race, seat) for seat in range(MAX_SEATS))
            names = self._names[code, race] = _RoomKeys(base, logs)
        return names

    async def load(self, code: str) -> StoredRoom | None:
        """The room's record and stored version, or None if there is no such room (its
        logs: :meth:`logs`, once the record says which race is current)."""
        keys = self._keys
        with self._storage.guard(f"load room {code}"):
            async with self._storage.transaction(keys.room(code)) as pipe:
                pipe.get(keys.room(code))
                pipe.get(keys.room_version(code))
                record, version = await pipe.execute()
        if record is None:
            return None
        return StoredRoom(as_bytes(record), 0 if version is None else stored_version(int(version)), {})

    async def logs(self, code: str, race: int, seats: int = MAX_SEATS) -> dict[int, list[str]]:
        """The log entries of race ``race``, by seat (seats without entries are left out)."""
        return {
            seat: [entry for entry, _ in timed]
            for seat, timed in (await self._timed_logs(code, race, range(seats))).items()
        }

    async def seat_log(self, code: str, race: int, seat: int) -> tuple[list[str], list[int]]:
        """The seat's log entries in race ``race``, and the time (Unix ms, on the room's clock)
        stored with each, in log order, from one read; the times are empty if any entry was
        stored without its time."""
        timed = (await self._timed_logs(code, race, [seat])).get(seat, [])
        times = [stored for _, stored in timed if stored is not None]
        return [entry for entry, _ in timed], times if len(times) == len(timed) else []

    async def _timed_logs(self, code: str, race: int, seats: Sequence[int]) -> dict[int, list[tuple[str, int | None]]]:
        keys = self._keys
        with self._storage.guard(f"read the move logs of room {code}"):
            async with self._storage.transaction(keys.room(code)) as pipe:
                for seat in seats:
                    pipe.lrange(keys.log(code, race, seat), 0, -1)
                replies = await pipe.execute()
        return {
            seat: [_split_time(as_text(e)) for e in entries]
            for seat, entries in zip(seats, replies, strict=True)
            if entries
        }

    async def finished_race(self, code: str, race: int) -> bytes | None:
        """The record of race ``race`` of the room as it finished, or None."""
        with self._storage.guard(f"read race {race} of room {code}"):
            record = await self._storage.redis.get(self._keys.race(code, race))
        return None if record is None else as_bytes(record)

    async def exists(self, code: str) -> bool:
        with self._storage.guard(f"look up room {code}"):
            return bool(await self._storage.redis.exists(self._keys.room(code)))

    async def mark_active(self, code: str, active: bool) -> None:
        """Add the room to the rooms in progress (restored at start-up), or take it off."""
        action = f"list room {code} as {'active' if active else 'finished'}"
        await self._storage.send_all(action, [("SADD" if active else "SREM", self._keys.active_rooms(), code)])

    async def active(self) -> list[str]:
        """Codes of the rooms in progress, sorted."""
        with self._storage.guard("list the rooms in progress"):
            codes = await self._storage.redis.smembers(self._keys.active_rooms())
        return sorted(as_text(code) for code in codes)

    async def count_public(self, address: str, code: str, limit: int, now: int) -> tuple[bool, int]:
        """Count room ``code``, about to be created public, for the client ``address``, unless
        ``limit`` public rooms from that address count already; whether it was counted, and
        how many count now. The count is the service's (in Redis, whichever node asks) and
        atomic: of any number of creations at once, at most ``limit`` count.

        A room counts until it is over: stored and no longer in progress (finished or closed,
        out of :meth:`active`); one never stored, :data:`PUBLIC_PENDING_MS` after it was
        counted. Rooms over are forgotten only when the count is full: a creation under the
        cap costs two round trips."""
        key = self._keys.public_rooms(address)
        redis = self._storage.redis
        with self._storage.guard("read the public rooms of an address"):
            reply = await redis.zrange(key, 0, -1, withscores=True)
        held = [(as_text(member), int(at)) for member, at in cast(list[tuple[bytes, float]], reply)]
        over: list[str] = []
        if len(held) >= limit:
            old = {room for room, at in held if now - at >= PUBLIC_PENDING_MS}
            over = await self._over([room for room, _ in held], old)
        count = await self._count_public.run("count a public room", [key], [code, now, limit, PUBLIC_TTL, *over])
        counted, total = (as_int(value) for value in as_list(count))
        return counted == 1, total

    async def _over(self, codes: list[str], old: set[str]) -> list[str]:
        """Which of ``codes`` are over (see :meth:`count_public`); ``old``: those counted long ago."""
        # The records first, then the rooms in progress: a room is listed in progress before
        # its record is stored, so one seen stored and then not in progress is over, even on
        # a Cluster, where the two reads go to different nodes (and cannot share a script).
        stored = await self._storage.send_all(
            "check the public rooms of an address", [("EXISTS", self._keys.room(code)) for code in codes]
        )
        with self._storage.guard("check the public rooms of an address"):
            active = await self._storage.redis.smismember(self._keys.active_rooms(), codes)
        return [
            code
            for code, is_stored, in_progress in zip(codes, stored, active, strict=True)
            if not in_progress and (as_int(is_stored) or code in old)
        ]

    async def uncount_public(self, address: str, code: str) -> None:
        """Take back :meth:`count_public`'s count of room ``code``, which was not created."""
        with self._storage.guard("take back a public room's count"):
            await self._storage.redis.zrem(self._keys.public_rooms(address), code)
