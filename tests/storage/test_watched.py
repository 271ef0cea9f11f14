"""Optimistic transactions on one Redis and on a Cluster: the rest of the process runs while a
transaction waits for Redis, a conflicting write is caught, concurrent changes of one value
all land, once each, and transactions racing the storage's close end one way or the other."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest
import pytest_asyncio
from redis.asyncio import Redis
from redis.exceptions import WatchError

from server.storage.connection import Storage, StoreUnavailable, as_bytes
from server.storage.optimistic import change_stored
from tests.nodes.conftest import redis_cluster

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture(params=["redis", "cluster"])
async def storage(request: pytest.FixtureRequest, redis_url: str, tmp_path: Path) -> AsyncIterator[Storage]:
    """Storage on the session's Redis, or on a Redis Cluster of its own."""
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(redis_cluster(tmp_path)) if request.param == "cluster" else redis_url
        connected = await Storage.connect(url, prefix=f"test:{uuid.uuid4().hex[:12]}:")
        try:
            yield connected
        finally:
            await connected.close()


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
    decoder = msgspec.msgpack.Decoder(int)

    def one_more(count: int) -> int:
        return count + 1

    async def count_one() -> None:
        await change_stored(storage, key, decoder, one_more, "count")

    await asyncio.gather(*(count_one() for _ in range(12)))
    assert decoder.decode(as_bytes(await storage.redis.get(key))) == 12


async def test_transactions_racing_the_storages_close_end_either_way(storage: Storage) -> None:
    """As writes still on their way when a server stops: each lands or fails, none hangs."""
    key = f"{storage.prefix}{{t}}count"
    await storage.redis.set(key, msgspec.msgpack.encode(0))
    decoder = msgspec.msgpack.Decoder(int)

    def one_more(count: int) -> int:
        return count + 1

    async def count_one() -> None:
        await change_stored(storage, key, decoder, one_more, "count")

    for _ in range(30):
        writes = [asyncio.create_task(count_one()) for _ in range(4)]
        await asyncio.sleep(0)
        await storage.close()
        for write in writes:
            with contextlib.suppress(StoreUnavailable):
                await asyncio.wait_for(write, 10)
