"""The race server's storage: every method round-trips through a real Redis, keys follow the documented layout."""

from __future__ import annotations

import asyncio
import os
import signal
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from redis.asyncio import Redis
from server.store import FINISHED_ROOM_TTL, Store, StoreUnavailable

from server.storage.embedded import EmbeddedRedis

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def raw(redis_url: str) -> AsyncIterator[Redis]:
    """A plain client, to look at the keys the store wrote."""
    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        yield client
    finally:
        await client.aclose()


async def test_server_secret_is_created_once_and_kept(store: Store, redis_url: str) -> None:
    secret = await store.server_secret()
    assert len(secret) == 32
    assert await store.server_secret() == secret
    other_process = await Store.connect(redis_url, prefix=store.prefix)
    try:
        assert await other_process.server_secret() == secret
    finally:
        await other_process.close()


async def test_players_are_saved_renamed_and_looked_up(store: Store) -> None:
    assert await store.player_name("p1") is None
    await store.save_player("p1", "Ada")
    await store.save_player("p2", "Grace Hopper ✓")
    assert await store.player_name("p1") == "Ada"
    assert await store.player_name("p2") == "Grace Hopper ✓"
    await store.save_player("p1", "Ada L.")
    assert await store.player_name("p1") == "Ada L."


async def test_rooms_are_saved_loaded_and_listed_while_active(store: Store) -> None:
    assert await store.load_room("ABCD") is None
    assert not await store.room_exists("ABCD")
    assert await store.active_rooms() == []

    await store.save_room("ABCD", b"\x81\xa4seat\x00", active=True)
    await store.save_room("WXYZ", b"lobby", active=True)
    await store.save_room("QQQQ", b"waiting", active=False)
    assert await store.load_room("ABCD") == b"\x81\xa4seat\x00"
    assert await store.room_exists("QQQQ")
    assert await store.active_rooms() == ["ABCD", "WXYZ"]

    await store.save_room("WXYZ", b"closed", active=False)
    assert await store.active_rooms() == ["ABCD"]
    assert await store.load_room("WXYZ") == b"closed"


async def test_moves_are_logged_per_seat_in_order_with_the_room_version(store: Store) -> None:
    assert await store.log_version("ROOM") is None
    assert await store.move_log("ROOM", 0) == []
    moves = [(0, "deal"), (1, "QS>5"), (0, "7H>c"), (1, "AS>h"), (0, "stock>3"), (2, "KD>1")]
    for version, (seat, entry) in enumerate(moves, start=1):
        await store.append_move("ROOM", seat, entry, version)
        assert await store.log_version("ROOM") == version

    assert await store.move_log("ROOM", 0) == ["deal", "7H>c", "stock>3"]
    assert await store.move_log("ROOM", 1) == ["QS>5", "AS>h"]
    assert await store.move_logs("ROOM", 4) == [["deal", "7H>c", "stock>3"], ["QS>5", "AS>h"], ["KD>1"], []]
    assert await store.move_logs("ROOM", 0) == []


async def test_concurrent_appends_to_different_rooms_all_land(store: Store) -> None:
    async def play(code: str) -> None:
        for version in range(1, 21):
            await store.append_move(code, version % 2, f"m{version}", version)

    await asyncio.gather(*(play(f"R{n}") for n in range(5)))
    for n in range(5):
        logs = await store.move_logs(f"R{n}", 2)
        assert logs == [[f"m{v}" for v in range(2, 21, 2)], [f"m{v}" for v in range(1, 21, 2)]]
        assert await store.log_version(f"R{n}") == 20


async def test_reset_logs_empties_every_seat_for_a_rematch(store: Store) -> None:
    await store.append_move("ROOM", 0, "deal", 1)
    await store.append_move("ROOM", 1, "deal", 2)
    await store.reset_logs("ROOM", 2)
    assert await store.move_logs("ROOM", 2) == [[], []]
    assert await store.log_version("ROOM") is None
    await store.append_move("ROOM", 1, "QS>5", 3)
    assert await store.move_logs("ROOM", 2) == [[], ["QS>5"]]


async def test_finish_room_keeps_the_final_record_for_a_while_and_ends_the_race(store: Store, raw: Redis) -> None:
    await store.save_room("ROOM", b"racing", active=True)
    await store.append_move("ROOM", 0, "deal", 1)
    await store.append_move("ROOM", 1, "deal", 2)
    await store.append_move("ROOM", 7, "deal", 3)
    await store.finish_room("ROOM", b"final", ttl_seconds=600)

    assert await store.load_room("ROOM") == b"final"
    assert await store.active_rooms() == []
    assert await store.move_logs("ROOM") == [["deal"], ["deal"], [], [], [], [], [], ["deal"]]
    p = store.prefix
    logs = [f"{p}room:ROOM:log:{seat}" for seat in (0, 1, 7)]
    for key in (f"{p}room:ROOM", *logs, f"{p}room:ROOM:version"):
        assert 0 < await raw.ttl(key) <= 600, key


async def test_finished_rooms_are_kept_seven_days_by_default(store: Store, raw: Redis) -> None:
    await store.save_room("ROOM", b"racing", active=True)
    await store.finish_room("ROOM", b"final")
    assert FINISHED_ROOM_TTL == 7 * 24 * 3600
    assert FINISHED_ROOM_TTL - 60 < await raw.ttl(f"{store.prefix}room:ROOM") <= FINISHED_ROOM_TTL


async def test_saving_a_finished_room_as_inactive_keeps_its_expiry(store: Store, raw: Redis) -> None:
    await store.save_room("ROOM", b"racing", active=True)
    await store.finish_room("ROOM", b"final", 600)
    await store.save_room("ROOM", b"final, a racer left", active=False)
    assert await store.load_room("ROOM") == b"final, a racer left"
    assert 0 < await raw.ttl(f"{store.prefix}room:ROOM") <= 600
    assert await store.active_rooms() == []


async def test_a_rematch_after_finishing_makes_the_room_permanent_again(store: Store, raw: Redis) -> None:
    await store.append_move("ROOM", 0, "deal", 1)
    await store.finish_room("ROOM", b"final", 600)
    await store.save_room("ROOM", b"rematch", active=True)
    await store.reset_logs("ROOM", 1)
    await store.append_move("ROOM", 0, "deal", 2)
    p = store.prefix
    for key in (f"{p}room:ROOM", f"{p}room:ROOM:log:0", f"{p}room:ROOM:version"):
        assert await raw.ttl(key) == -1, key  # exists, no expiry
    assert await store.active_rooms() == ["ROOM"]


async def test_keys_follow_the_documented_layout(store: Store, raw: Redis) -> None:
    await store.server_secret()
    await store.save_player("p1", "Ada")
    await store.save_room("ROOM", b"record", active=True)
    await store.append_move("ROOM", 1, "deal", 7)
    p = store.prefix
    keys = {key: await raw.type(key) async for key in raw.scan_iter(match=f"{p}*")}
    assert keys == {
        f"{p}secret": "string",
        f"{p}player:p1": "hash",
        f"{p}room:ROOM": "string",
        f"{p}rooms:active": "set",
        f"{p}room:ROOM:log:1": "list",
        f"{p}room:ROOM:version": "string",
    }
    assert await raw.hgetall(f"{p}player:p1") == {"name": "Ada"}
    assert await raw.get(f"{p}room:ROOM:version") == "7"


async def test_another_server_process_can_take_a_room_over(store: Store, redis_url: str) -> None:
    await store.save_player("p1", "Ada")
    await store.save_room("ROOM", b"record", active=True)
    await store.append_move("ROOM", 0, "deal", 1)
    successor = await Store.connect(redis_url, prefix=store.prefix)
    try:
        assert await successor.active_rooms() == ["ROOM"]
        assert await successor.load_room("ROOM") == b"record"
        assert await successor.move_logs("ROOM", 1) == [["deal"]]
        assert await successor.log_version("ROOM") == 1
        assert await successor.player_name("p1") == "Ada"
    finally:
        await successor.close()


async def test_prefixes_keep_stores_apart(store: Store, redis_url: str) -> None:
    await store.save_room("ROOM", b"record", active=True)
    neighbour = await Store.connect(redis_url, prefix=store.prefix + "other:")
    try:
        assert await neighbour.active_rooms() == []
        assert await neighbour.load_room("ROOM") is None
        assert await neighbour.server_secret() != await store.server_secret()
    finally:
        await neighbour.close()


async def test_codes_and_ids_that_could_collide_are_rejected(store: Store) -> None:
    with pytest.raises(ValueError, match="no ':'"):
        await store.save_room("AB:log:0", b"record", active=True)
    with pytest.raises(ValueError, match="non-empty"):
        await store.save_player("", "nobody")
    with pytest.raises(ValueError, match="seats are numbered 0 to 7"):
        await store.append_move("ROOM", 8, "deal", 1)


async def test_connecting_to_nothing_raises_store_unavailable(tmp_path: Path) -> None:
    url = f"unix://{tmp_path}/nothing.sock"
    with pytest.raises(StoreUnavailable, match="storage unavailable: cannot reach the storage") as failure:
        await Store.connect(url)
    assert str(tmp_path / "nothing.sock") in str(failure.value)


async def test_unavailable_messages_do_not_reveal_the_password() -> None:
    with pytest.raises(StoreUnavailable) as failure:
        await Store.connect("redis://racer:hunter2@127.0.0.1:1/0")
    assert "hunter2" not in str(failure.value)
    assert "127.0.0.1:1" in str(failure.value)


async def test_every_operation_raises_store_unavailable_once_redis_is_gone(tmp_path: Path) -> None:
    redis = EmbeddedRedis(tmp_path)
    store = await Store.connect(await redis.start())
    try:
        await store.save_room("ROOM", b"record", active=True)
        await redis.stop()
        with pytest.raises(StoreUnavailable, match="cannot save a move in room ROOM: no answer from Redis"):
            await store.append_move("ROOM", 0, "deal", 1)
        operations: list[Callable[[], Awaitable[object]]] = [
            store.ping,
            store.server_secret,
            lambda: store.save_player("p1", "Ada"),
            lambda: store.player_name("p1"),
            lambda: store.save_room("ROOM", b"record", active=False),
            lambda: store.load_room("ROOM"),
            lambda: store.room_exists("ROOM"),
            store.active_rooms,
            lambda: store.log_version("ROOM"),
            lambda: store.move_log("ROOM", 0),
            lambda: store.move_logs("ROOM", 2),
            lambda: store.reset_logs("ROOM", 2),
            lambda: store.finish_room("ROOM", b"final"),
        ]
        for operation in operations:
            with pytest.raises(StoreUnavailable, match="storage unavailable"):
                await operation()
    finally:
        await store.close()
        await redis.stop()


async def test_the_store_carries_on_after_the_embedded_redis_is_restarted(tmp_path: Path) -> None:
    async with EmbeddedRedis(tmp_path) as redis:
        store = await Store.connect(redis.url)
        try:
            await store.append_move("ROOM", 0, "deal", 1)
            pid = redis.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            deadline = asyncio.get_running_loop().time() + 5
            while redis.restarts == 0:
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.02)
            # The pooled connection died with the old server; the next command reconnects.
            assert await store.move_log("ROOM", 0) == ["deal"]
            await store.append_move("ROOM", 0, "QS>5", 2)
            assert await store.move_log("ROOM", 0) == ["deal", "QS>5"]
        finally:
            await store.close()
