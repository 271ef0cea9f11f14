"""Transactions on one Redis and on a Cluster: none goes through redis-py's Cluster pipeline
(whose thread stops the process's loop), the rest of the process runs while a transaction
waits for Redis, a conflicting write is caught, concurrent changes of one value all land once
each, a transaction after the storage closed or racing its close ends either way, and one on
a slot that moved fails once and then finds the slot's new primary."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import msgspec
import pytest
from redis.asyncio import Redis
from redis.asyncio import cluster as redis_cluster_module
from redis.exceptions import WatchError

from server.storage.boards import Leaderboards
from server.storage.connection import Storage, StoreUnavailable, as_bytes
from server.storage.optimistic import change_stored
from server.storage.ratings import rate_race_once
from server.storage.rooms import RoomStore
from tests.nodes.conftest import redis_cluster
from tests.storage.test_accounts import storage as storage  # on the session's Redis or a Cluster

pytestmark = pytest.mark.asyncio


def _holder(storage: Storage, key: str) -> Redis:
    """A client of its own to the Redis that holds ``key``."""
    if storage.cluster is None:
        return Redis(connection_pool=storage.redis.connection_pool)
    node = storage.cluster.get_node_from_key(key)
    assert node is not None
    return Redis(host=node.host, port=int(node.port))


async def test_the_process_runs_on_while_a_transaction_waits_for_redis(storage: Storage) -> None:
    key = f"{storage.prefix}{{t}}value"
    await storage.redis.set(key, b"1")
    holder = _holder(storage, key)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    try:
        async with storage.transaction(key) as pipe:
            await pipe.watch(key)
            await holder.client_pause(300, all=True)  # the read waits for it
            ticker = asyncio.create_task(tick())
            assert await pipe.get(key) == b"1"
            ticker.cancel()
    finally:
        await holder.client_unpause()
        if storage.cluster is not None:
            await holder.aclose()
    assert ticks > 0  # other coroutines ran while the read waited


async def test_a_write_between_the_watch_and_the_exec_is_caught(storage: Storage) -> None:
    key = f"{storage.prefix}{{t}}value"
    await storage.redis.set(key, b"1")
    async with storage.transaction(key) as pipe:
        await pipe.watch(key)
        assert await pipe.get(key) == b"1"
        await storage.redis.set(key, b"2")  # another writer comes first
        pipe.multi()  # type: ignore[no-untyped-call]
        pipe.set(key, b"3")
        with pytest.raises(WatchError):
            await pipe.execute()
    assert await storage.redis.get(key) == b"2"


async def test_concurrent_changes_of_one_value_all_land_once(storage: Storage) -> None:
    key = f"{storage.prefix}{{t}}count"
    await storage.redis.set(key, msgspec.msgpack.encode(0))

    await asyncio.gather(*(_count_one(storage, key) for _ in range(12)))
    assert _COUNT.decode(as_bytes(await storage.redis.get(key))) == 12


async def test_transactions_racing_the_storages_close_end_either_way(storage: Storage) -> None:
    """As writes still on their way when a server stops: each lands or fails, none hangs."""
    key = f"{storage.prefix}{{t}}count"
    await storage.redis.set(key, msgspec.msgpack.encode(0))

    # One round: a closed storage refuses every transaction after (its own test, below).
    writes = [asyncio.create_task(_count_one(storage, key)) for _ in range(12)]
    await asyncio.sleep(0)
    await storage.close()
    for write in writes:
        with contextlib.suppress(StoreUnavailable):
            await asyncio.wait_for(write, 10)


def _one_more(count: int) -> int:
    return count + 1


_COUNT = msgspec.msgpack.Decoder(int)


async def _count_one(storage: Storage, key: str) -> None:
    await change_stored(storage, key, _COUNT, _one_more, "count")


async def test_no_transaction_goes_through_redis_pys_cluster_pipeline(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its commands run on a private loop in a thread that the caller's loop waits for. (If
    redis-py renames the function, setting it fails here: look again at what it does.)"""

    def refused(coroutine: object) -> None:
        raise AssertionError("a command went through redis-py's thread")

    monkeypatch.setattr(redis_cluster_module, "_run_coroutine_in_thread", refused)
    key = f"{storage.prefix}{{t}}count"
    await storage.redis.set(key, msgspec.msgpack.encode(0))
    assert await change_stored(storage, key, _COUNT, _one_more, "count") == 1
    assert await storage.count("count", f"{storage.prefix}{{t}}counted", 60) == 1
    boards = Leaderboards(storage)
    assert await boards.daily_result("scorpion", "p1", "2026-12-01", True, 60_000)
    assert (await boards.stats("scorpion", "p1", "2026-12-01")).daily_wins == 1
    assert len(await rate_race_once(storage, "scorpion", "race1", ["p1", "p2"], [1, 2])) == 2
    assert await RoomStore(storage).load("NOSUCHRM") is None


async def test_a_transaction_after_the_storage_closed_is_refused(storage: Storage) -> None:
    key = f"{storage.prefix}{{t}}count"
    await storage.redis.set(key, msgspec.msgpack.encode(0))
    await storage.close()
    with pytest.raises(StoreUnavailable):
        await change_stored(storage, key, _COUNT, _one_more, "count")


async def test_a_transaction_on_a_slot_that_moved_fails_once_then_finds_it(tmp_path: Path) -> None:
    with redis_cluster(tmp_path) as url:
        storage = await Storage.connect(url, prefix="moved:")
        try:
            key = "moved:{t}count"
            decoder = msgspec.msgpack.Decoder(int)
            await storage.redis.set(key, msgspec.msgpack.encode(0))
            assert await change_stored(storage, key, decoder, _one_more, "count") == 1
            await _move_slot(storage, key)
            with pytest.raises(StoreUnavailable):
                await change_stored(storage, key, decoder, _one_more, "count")
            assert await change_stored(storage, key, decoder, _one_more, "count") == 2
        finally:
            await storage.close()


async def _move_slot(storage: Storage, key: str) -> None:
    """Move ``key``'s slot, and the key, to another primary (as a resharding does)."""
    cluster = storage.cluster
    assert cluster is not None
    slot = cluster.keyslot(key)
    source = cluster.get_node_from_key(key)
    assert source is not None
    target = next(node for node in cluster.get_primaries() if node.name != source.name)
    clients = {node.name: Redis(host=node.host, port=int(node.port)) for node in cluster.get_primaries()}
    from_, to = clients[source.name], clients[target.name]

    async def command(client: Redis, *args: str | int) -> object:
        return await client.execute_command(*args)  # type: ignore[no-untyped-call]

    try:
        source_id = as_bytes(await command(from_, "CLUSTER", "MYID")).decode()
        target_id = as_bytes(await command(to, "CLUSTER", "MYID")).decode()
        await command(to, "CLUSTER", "SETSLOT", slot, "IMPORTING", source_id)
        await command(from_, "CLUSTER", "SETSLOT", slot, "MIGRATING", target_id)
        await command(from_, "MIGRATE", target.host, int(target.port), "", 0, 5000, "KEYS", key)
        for client in clients.values():
            await command(client, "CLUSTER", "SETSLOT", slot, "NODE", target_id)
    finally:
        for client in clients.values():
            await client.aclose()
