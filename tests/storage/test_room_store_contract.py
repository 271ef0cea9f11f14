"""The same cases against room storage on a real Redis (:class:`RoomStore`) and in memory
(tests/doubles/rooms.py, what the unit tests of live rooms run on): version-checked commits,
fencing by lease, logs by race, expiry, the rooms in progress. The double cannot drift from
Redis's behaviour without one of these failing."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import msgspec
import pytest
import pytest_asyncio

from server.storage.connection import Storage
from server.storage.keys import Keys
from server.storage.nodes import NodeStore
from server.storage.rooms import Committed, Expiry, Fenced, RoomStore, RoomStorePort, RoomWrite, VersionConflict
from tests.doubles.clock import ManualClock
from tests.doubles.rooms import MemoryRoomStore
from tests.in_process_server import fresh_prefix

pytestmark = pytest.mark.asyncio


class Rooms(RoomStorePort, Protocol):
    """The port, and the reads these cases check it with."""

    async def seat_log(self, code: str, race: int, seat: int) -> tuple[list[str], list[int]]: ...

    async def finished_race(self, code: str, race: int) -> bytes | None: ...

    async def exists(self, code: str) -> bool: ...

    async def active(self) -> list[str]: ...


@dataclass
class Subject:
    """A room store, and what other stores do to a room's keys, for either implementation."""

    rooms: Rooms
    #: A new lease on a room for a node, expired at once (the epoch stays its token).
    grant: Callable[[str, str], Awaitable[str]]
    #: The room record's TTL in seconds, as Redis's TTL command answers it.
    ttl: Callable[[str], Awaitable[int]]


@pytest_asyncio.fixture(params=["memory", "redis"])
async def subject(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[Subject]:
    if request.param == "memory":
        memory = MemoryRoomStore(ManualClock())

        async def grant_in_memory(code: str, node: str) -> str:
            return memory.grant(code, node)

        async def ttl_in_memory(code: str) -> int:
            return memory.ttl(code)

        yield Subject(memory, grant_in_memory, ttl_in_memory)
        return
    storage = await Storage.connect(redis_url, prefix=fresh_prefix())
    keys = Keys(storage.prefix)

    async def grant_in_redis(code: str, node: str) -> str:
        claim = await NodeStore(storage).claim(code, node, 60_000)
        assert claim.lease is not None
        await storage.redis.delete(keys.room_owner(code))  # expired: nobody renewed it
        return claim.lease

    async def ttl_in_redis(code: str) -> int:
        return int(await storage.redis.ttl(keys.room(code)))

    try:
        yield Subject(RoomStore(storage), grant_in_redis, ttl_in_redis)
    finally:
        await storage.close()


def write(
    base: int,
    version: int,
    entries: list[tuple[int, str]] | None = None,
    record: bytes | None = None,
    expiry: int = Expiry.NONE,
    race: int = 1,
    code: str = "ROOM",
) -> RoomWrite:
    return RoomWrite(code, race, base, version, entries or [], record, expiry)


async def test_a_commit_stores_entries_version_and_record_together(subject: Subject) -> None:
    rooms = subject.rooms
    assert await rooms.load("ROOM") is None
    assert not await rooms.exists("ROOM")
    assert await rooms.commit(write(0, 1, record=b"created")) is Committed.STORED
    assert await rooms.commit(write(1, 3, [(0, "QS>5"), (1, "deal"), (0, "7H>c")])) is Committed.STORED
    stored = await rooms.load("ROOM")
    assert stored is not None
    assert (stored.record, stored.version) == (b"created", 3)
    assert await rooms.exists("ROOM")
    assert await rooms.logs("ROOM", 1) == {0: ["QS>5", "7H>c"], 1: ["deal"]}
    assert await rooms.logs("ROOM", 1, seats=1) == {0: ["QS>5", "7H>c"]}
    assert await rooms.logs("ROOM", 2) == {}


async def test_a_step_decided_on_a_stale_version_is_refused_and_changes_nothing(subject: Subject) -> None:
    rooms = subject.rooms
    await rooms.commit(write(0, 1, record=b"created"))
    await rooms.commit(write(1, 2, [(0, "QS>5")]))
    for stale in (write(1, 3, [(0, "7H>c")], record=b"stale"), write(3, 4, [(0, "8H>c")], record=b"ahead")):
        with pytest.raises(VersionConflict):
            await rooms.commit(stale)
    stored = await rooms.load("ROOM")
    assert stored is not None
    assert (stored.record, stored.version) == (b"created", 2)
    assert await rooms.logs("ROOM", 1) == {0: ["QS>5"]}


async def test_the_same_step_stored_twice_is_stored_once(subject: Subject) -> None:
    """A step whose new version is already stored is a conflict, not "already stored"."""
    rooms = subject.rooms
    await rooms.commit(write(0, 1, record=b"created"))
    step = write(1, 2, [(0, "QS>5")])
    assert await rooms.commit(step) is Committed.STORED
    with pytest.raises(VersionConflict):
        await rooms.commit(step)
    assert await rooms.logs("ROOM", 1) == {0: ["QS>5"]}


async def test_finishing_expires_the_room_and_keeps_the_race_by_number(subject: Subject) -> None:
    rooms = subject.rooms
    await rooms.commit(write(0, 1, record=b"created"))
    assert await subject.ttl("ROOM") == -1
    await rooms.commit(write(1, 2, [(0, "QS>5")]))
    await rooms.commit(write(2, 3, [(0, "resign resigned")], record=b"race 1 over", expiry=600))
    assert 0 < await subject.ttl("ROOM") <= 600
    assert await rooms.finished_race("ROOM", 1) == b"race 1 over"
    assert await rooms.finished_race("ROOM", 2) is None
    # A rematch: race 2 is in progress again (no expiry), race 1 stays readable.
    await rooms.commit(write(3, 4, record=b"race 2 waiting", race=2))
    assert await subject.ttl("ROOM") == -1
    await rooms.commit(write(4, 5, [(0, "deal")], race=2))
    assert await rooms.logs("ROOM", 2) == {0: ["deal"]}
    assert await rooms.logs("ROOM", 1) == {0: ["QS>5", "resign resigned"]}
    assert await rooms.finished_race("ROOM", 1) == b"race 1 over"


async def test_saving_a_finished_room_again_keeps_its_expiry(subject: Subject) -> None:
    rooms = subject.rooms
    await rooms.commit(write(0, 1, record=b"created"))
    await rooms.commit(write(1, 2, record=b"over", expiry=600))
    await rooms.commit(write(2, 3, record=b"over, one left", expiry=Expiry.KEEP))
    assert 0 < await subject.ttl("ROOM") <= 600
    stored = await rooms.load("ROOM")
    assert stored is not None
    assert (stored.record, stored.version) == (b"over, one left", 3)


async def test_the_active_set_lists_rooms_in_progress(subject: Subject) -> None:
    rooms = subject.rooms
    await rooms.mark_active("BBBB", True)
    await rooms.mark_active("AAAA", True)
    await rooms.mark_active("AAAA", True)
    assert await rooms.active() == ["AAAA", "BBBB"]
    await rooms.mark_active("BBBB", False)
    await rooms.mark_active("CCCC", False)
    assert await rooms.active() == ["AAAA"]


async def test_a_lease_that_expired_unclaimed_still_writes_and_one_taken_over_never_does(subject: Subject) -> None:
    rooms = subject.rooms
    await rooms.commit(write(0, 1, record=b"created"))
    first = await subject.grant("ROOM", "node-a")
    assert first.startswith("node-a:")
    assert await rooms.commit(msgspec.structs.replace(write(1, 2, [(0, "QS>5")]), lease=first)) is Committed.STORED
    assert await rooms.commit(msgspec.structs.replace(write(2, 3, [(0, "7H>c")]), lease=first)) is Committed.STORED
    second = await subject.grant("ROOM", "node-b")
    with pytest.raises(Fenced):
        await rooms.commit(msgspec.structs.replace(write(3, 4, [(0, "8H>c")]), lease=first))
    with pytest.raises(Fenced):  # fenced whatever the version it names
        await rooms.commit(msgspec.structs.replace(write(2, 3, [(0, "8H>c")]), lease=first))
    assert await rooms.commit(msgspec.structs.replace(write(3, 4, [(1, "deal")]), lease=second)) is Committed.STORED
    stored = await rooms.load("ROOM")
    assert stored is not None
    assert stored.version == 4  # the grants restamped the version, keeping it
    assert await rooms.logs("ROOM", 1) == {0: ["QS>5", "7H>c"], 1: ["deal"]}
    # A write with no lease (tools, tests) is checked for its version only.
    assert await rooms.commit(write(4, 5, [(1, "undo")])) is Committed.STORED
    with pytest.raises(VersionConflict):
        await rooms.commit(write(4, 5, [(1, "undo")]))


async def test_each_move_is_stored_with_its_server_time_beside_it(subject: Subject) -> None:
    rooms = subject.rooms
    await rooms.commit(write(0, 1, record=b"created"))
    await rooms.commit(write(1, 3, [(0, "QS>5"), (0, "7H>c")]))
    moves, times = await rooms.seat_log("ROOM", 1, 0)
    assert moves == ["QS>5", "7H>c"]
    assert len(times) == 2
    assert abs(times[0] - time.time() * 1000) < 86_400_000  # Unix ms, not some other unit
    assert await rooms.seat_log("ROOM", 1, 1) == ([], [])


async def test_a_write_made_at_a_time_of_the_rooms_clock_stores_that_time(subject: Subject) -> None:
    rooms = subject.rooms
    await rooms.commit(write(0, 1, record=b"created"))
    later = int(time.time() * 1000) + 60_000  # a room clock ahead of the store's
    await rooms.commit(msgspec.structs.replace(write(1, 3, [(0, "QS>5"), (0, "7H>c")]), at_ms=later))
    assert await rooms.seat_log("ROOM", 1, 0) == (["QS>5", "7H>c"], [later, later])


async def test_codes_that_could_collide_or_change_slot_are_rejected(subject: Subject) -> None:
    for code in ("A:B", "A{B", "A}B", ""):
        with pytest.raises(ValueError, match="key part"):
            await subject.rooms.commit(write(0, 1, code=code))
