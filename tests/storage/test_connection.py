"""The storage connection: every Redis failure is a StoreUnavailable that says what and why."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from server.storage.connection import Storage, StoreUnavailable
from server.storage.deals import DealStore
from server.storage.embedded import EmbeddedRedis
from server.storage.players import PlayerStore
from server.storage.rooms import RoomStore, RoomWrite

pytestmark = pytest.mark.asyncio


async def test_connecting_to_nothing_raises_store_unavailable(tmp_path: Path) -> None:
    url = f"unix://{tmp_path}/nothing.sock"
    with pytest.raises(StoreUnavailable, match="storage unavailable: cannot reach the storage") as failure:
        await Storage.connect(url)
    assert str(tmp_path / "nothing.sock") in str(failure.value)


async def test_unavailable_messages_do_not_reveal_the_password() -> None:
    with pytest.raises(StoreUnavailable) as failure:
        await Storage.connect("redis://racer:hunter2@127.0.0.1:1/0")
    assert "hunter2" not in str(failure.value)
    assert "127.0.0.1:1" in str(failure.value)


async def test_every_store_raises_store_unavailable_once_redis_is_gone(tmp_path: Path) -> None:
    redis = EmbeddedRedis(tmp_path)
    storage = await Storage.connect(await redis.start())
    rooms, players, deals = RoomStore(storage), PlayerStore(storage), DealStore(storage)
    try:
        await redis.stop()
        operations: list[Callable[[], Awaitable[object]]] = [
            storage.ping,
            players.server_secret,
            lambda: players.save_name("p1", "Ada"),
            lambda: players.name("p1"),
            lambda: players.count_creation("p1", 1),
            lambda: players.start_daily_attempt("antares", "2026-12-01", "p1", "ROOMAAAA"),
            lambda: rooms.commit(RoomWrite("ROOM", 1, 0, 1, [(0, "deal")], b"r", 0)),
            lambda: rooms.load("ROOM"),
            lambda: rooms.logs("ROOM", 1),
            lambda: rooms.exists("ROOM"),
            rooms.active,
            lambda: rooms.mark_active("ROOM", True),
            lambda: deals.daily("antares", "2026-12-01"),
            lambda: deals.take_winnable("antares"),
        ]
        for operation in operations:
            with pytest.raises(StoreUnavailable, match=r"storage unavailable: cannot .*: no answer from Redis"):
                await operation()
    finally:
        await storage.close()
        await redis.stop()


async def test_storage_carries_on_after_the_embedded_redis_is_restarted(tmp_path: Path) -> None:
    async with EmbeddedRedis(tmp_path) as redis:
        storage = await Storage.connect(redis.url)
        rooms = RoomStore(storage)
        try:
            await rooms.commit(RoomWrite("ROOM", 1, 0, 1, [(0, "deal")], b"r", 0))
            pid = redis.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            deadline = asyncio.get_running_loop().time() + 5
            while redis.restarts == 0:
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.02)
            # The pooled connection died with the old server; the next command reconnects.
            assert await rooms.logs("ROOM", 1) == {0: ["deal"]}
            # So does the commits' own connection, and the new server (its data restored from
            # the append-only file, its scripts not) is given the commit script again.
            await rooms.commit(RoomWrite("ROOM", 1, 1, 2, [(0, "QS>5")], None, 0))
            assert await rooms.logs("ROOM", 1) == {0: ["deal", "QS>5"]}
        finally:
            await storage.close()
