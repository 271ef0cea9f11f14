"""Rooms in Redis, what only Redis shows: commits to many rooms at once, one hash tag a room,
logs stored before move times, the commands a move costs, the public rooms counted per client
address. The store's contract (commits, versions, expiry, fencing, logs) is
tests/storage/test_room_store_contract.py's, on Redis and in memory alike."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest
import pytest_asyncio
from redis.asyncio import Redis

from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis
from server.storage.keys import Keys
from server.storage.nodes import NodeStore
from server.storage.rooms import (
    PUBLIC_PENDING_MS,
    PUBLIC_TTL,
    RoomStore,
)
from tests.in_process_server import fresh_prefix
from tests.storage.test_room_store_contract import write

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture(params=["pipelined", "redis-py"])
async def store(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[Storage]:
    """The shared fixture's storage, once with its pipelined connection (a plain Redis) and
    once without it (as over TLS: commits go as group commits through redis-py)."""
    connected = await Storage.connect(redis_url, prefix=fresh_prefix())
    if request.param == "redis-py":
        assert connected.line is not None
        connected.line.close()
        connected.line = None
    try:
        yield connected
    finally:
        await connected.close()


@pytest_asyncio.fixture
async def raw(redis_url: str) -> AsyncIterator[Redis]:
    """A plain client, to look at the keys the store wrote."""
    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        yield client
    finally:
        await client.aclose()


async def test_concurrent_commits_to_different_rooms_all_land(store: Storage) -> None:
    rooms = RoomStore(store)
    codes = [f"R{n}" for n in range(20)]
    await asyncio.gather(*(rooms.commit(write(0, 1, [(0, "deal")], b"r", code=c)) for c in codes))
    for code in codes:
        assert await rooms.logs(code, 1) == {0: ["deal"]}


async def test_a_room_keys_share_one_hash_tag(store: Storage, raw: Redis) -> None:
    """One Cluster slot per room: every key of the room carries ``{code}``."""
    rooms = RoomStore(store)
    await rooms.commit(write(0, 1, [(3, "deal")], b"r", expiry=60))
    keys = sorted(await raw.keys(f"{store.prefix}room:*"))
    assert keys
    assert all("{ROOM}" in key for key in keys)


async def test_a_log_with_an_entry_stored_without_its_time_has_no_move_times(store: Storage, raw: Redis) -> None:
    """A race in progress across the upgrade to times beside the moves: its log reads as
    always, and its anti-cheat check gets no times rather than times out of step."""
    rooms = RoomStore(store)
    await raw.rpush(Keys(store.prefix).log("ROOM", 1, 0), "QS>5")
    await rooms.commit(write(0, 1, [(0, "7H>c")], b"created"))
    assert await rooms.logs("ROOM", 1) == {0: ["QS>5", "7H>c"]}
    assert (await rooms.seat_log("ROOM", 1, 0))[1] == []


async def test_a_move_costs_redis_one_script_of_two_commands(tmp_path: Path) -> None:
    """The lease check, the version check and the new version are one INCRBY; the move and
    its time one RPUSH (INFO commandstats counts the commands a script runs)."""
    async with EmbeddedRedis(tmp_path) as redis:
        storage = await Storage.connect(redis.url)
        try:
            rooms, nodes = RoomStore(storage), NodeStore(storage)
            claim = await nodes.claim("ROOM", "node-a", 60_000, must_exist=False)
            assert claim.lease is not None
            await rooms.commit(msgspec.structs.replace(write(0, 1, record=b"created"), lease=claim.lease))
            before = await _calls(storage)
            for version in range(1, 11):
                await rooms.commit(
                    msgspec.structs.replace(write(version, version + 1, [(0, f"m{version}")]), lease=claim.lease)
                )
            spent = {name: n - before.get(name, 0) for name, n in (await _calls(storage)).items()}
        finally:
            await storage.close()
    assert {name: n for name, n in spent.items() if n and name != "info"} == {"evalsha": 10, "incrby": 10, "rpush": 10}


NOW = 1_800_000_000_000


async def test_public_rooms_count_per_address_up_to_the_cap_even_all_at_once(store: Storage, raw: Redis) -> None:
    rooms = RoomStore(store)
    counts = await asyncio.gather(*(rooms.count_public("192.0.2.7", f"R{n}", 10, NOW) for n in range(25)))
    assert sorted(counted for counted, _ in counts) == [False] * 15 + [True] * 10
    assert max(total for _, total in counts) == 10
    # Another address has a count of its own (an IPv6 address: a key part made safe).
    assert await rooms.count_public("2001:db8::1", "OTHER", 10, NOW) == (True, 1)
    key = Keys(store.prefix).public_rooms("192.0.2.7")
    assert 0 < await raw.ttl(key) <= PUBLIC_TTL
    counted = next(f"R{n}" for n, (done, _) in enumerate(counts) if done)
    await rooms.uncount_public("192.0.2.7", counted)  # its room was not created after all
    assert await rooms.count_public("192.0.2.7", "AGAIN", 10, NOW) == (True, 10)


async def test_a_public_room_counts_until_it_is_stored_and_no_longer_in_progress(store: Storage, raw: Redis) -> None:
    rooms, keys = RoomStore(store), Keys(store.prefix)
    for code in ("LIVE", "OVER", "NEW", "LOST"):
        assert (await rooms.count_public("192.0.2.7", code, 4, NOW))[0]
    for code in ("LIVE", "OVER"):
        await raw.set(keys.room(code), "record")
    await rooms.mark_active("LIVE", True)  # racing; OVER finished (or closed): stored, not in progress
    # NEW and LOST were never stored: NEW is being created, LOST's creation failed long ago.
    await raw.zadd(keys.public_rooms("192.0.2.7"), {"LOST": NOW - PUBLIC_PENDING_MS})
    assert await rooms.count_public("192.0.2.7", "NEXT", 4, NOW) == (True, 3)
    assert sorted(await raw.zrange(keys.public_rooms("192.0.2.7"), 0, -1)) == ["LIVE", "NEW", "NEXT"]
    # A room is listed in progress before its record is stored: it counts in between too.
    await rooms.mark_active("SOON", True)
    assert await rooms.count_public("192.0.2.7", "SOON", 4, NOW) == (True, 4)
    assert await rooms.count_public("192.0.2.7", "NONE", 4, NOW + PUBLIC_PENDING_MS - 1) == (False, 4)


async def _calls(storage: Storage) -> dict[str, int]:
    stats = await storage.redis.info("commandstats")
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}
