"""The pipelined connection of room commits: replies in order, failures that never shift a
reply to the wrong call, reconnection, credentials, and transactions through Storage.send_all."""

from __future__ import annotations

import asyncio
import os
import signal
import uuid
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

from server.storage.connection import Storage, StoreUnavailable
from server.storage.embedded import EmbeddedRedis
from server.storage.pipelined import PipelinedConnection, supports

pytestmark = pytest.mark.asyncio


def line_to(url: str, reply_timeout: float = 2.0) -> PipelinedConnection:
    return PipelinedConnection(url, reply_timeout, connect_timeout=2.0)


async def test_many_calls_at_once_each_get_their_own_reply(redis_url: str) -> None:
    line = line_to(redis_url)
    key = f"test:{uuid.uuid4().hex}:counter"
    try:
        replies = await asyncio.gather(*(line.call("INCR", key) for _ in range(500)))
        assert replies == list(range(1, 501))
        echoed = await asyncio.gather(*(line.call("ECHO", f"call {n}") for n in range(200)))
        assert echoed == [f"call {n}".encode() for n in range(200)]
    finally:
        line.close()


async def test_an_error_reply_is_returned_to_its_call_and_the_next_calls_go_on(redis_url: str) -> None:
    line = line_to(redis_url)
    try:
        wrong, right = await asyncio.gather(line.call("NO-SUCH-COMMAND"), line.call("PING"))
        assert isinstance(wrong, ResponseError)
        assert right == b"PONG"
    finally:
        line.close()


async def test_a_cancelled_call_does_not_shift_the_replies_of_the_others(redis_url: str) -> None:
    line = line_to(redis_url)
    try:
        first = asyncio.ensure_future(line.call("ECHO", "first"))
        second = asyncio.ensure_future(line.call("ECHO", "second"))
        await asyncio.sleep(0)  # both sent
        first.cancel()
        assert await second == b"second"
        assert await line.call("ECHO", "third") == b"third"
    finally:
        line.close()


async def test_a_redis_that_stops_answering_fails_every_waiting_call_then_is_reached_again(tmp_path: Path) -> None:
    async with EmbeddedRedis(tmp_path) as redis:
        line = line_to(redis.url, reply_timeout=0.5)
        try:
            assert await line.call("SET", "k", "before") == b"OK"
            pid = redis.pid
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)
            try:
                calls = [asyncio.ensure_future(line.call("GET", "k")) for _ in range(3)]
                results = await asyncio.gather(*calls, return_exceptions=True)
                assert all(isinstance(result, RedisTimeoutError) for result in results), results
            finally:
                os.kill(pid, signal.SIGCONT)
            # The late replies went with the closed connection: a new one answers this call.
            assert await line.call("ECHO", "after") == b"after"
        finally:
            line.close()


async def test_a_closed_connection_fails_its_waiting_calls(redis_url: str) -> None:
    line = line_to(redis_url)
    await line.call("PING")
    waiting = asyncio.ensure_future(line.call("BLPOP", f"test:{uuid.uuid4().hex}:nothing", "5"))
    await asyncio.sleep(0.05)
    line.close()
    with pytest.raises(RedisConnectionError):
        await waiting


async def test_the_url_user_password_and_database_are_used(redis_url: str) -> None:
    admin = Redis.from_url(redis_url)
    user, password = f"test-{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    key = f"test:{uuid.uuid4().hex}:where"
    await admin.acl_setuser(
        user, enabled=True, passwords=[f"+{password}"], keys=["*"], channels=["*"], commands=["+@all"]
    )
    path = urlsplit(redis_url).path
    try:
        line = line_to(f"unix://{user}:{password}@{quote(path)}?db=3")
        try:
            assert await line.call("SET", key, "db3") == b"OK"
        finally:
            line.close()
        await admin.select(3)
        assert await admin.get(key) == b"db3"
        await admin.delete(key)
        wrong = line_to(f"unix://{user}:wrong@{quote(path)}")
        with pytest.raises(ResponseError, match="WRONGPASS"):
            await wrong.call("PING")
        storage = Storage(admin, "test:", "here", line=wrong)
        with pytest.raises(StoreUnavailable, match="cannot say hello: Redis at here refused it"):
            await storage.send_all("say hello", [("PING",)])
    finally:
        await admin.acl_deluser(user)
        await admin.aclose()


async def test_send_all_runs_a_transaction_and_reports_an_error_inside_it(store: Storage) -> None:
    key = store.prefix + "tx"
    assert await store.send_all("count", [("INCR", key), ("INCR", key)], transaction=True) == [1, 2]
    with pytest.raises(StoreUnavailable, match=r"cannot count wrongly: Redis .* refused it"):
        await store.send_all("count wrongly", [("INCR", key), ("HSET", key, "a", "1")], transaction=True)


async def test_only_plain_redis_urls_take_the_pipelined_road() -> None:
    assert supports("unix:///run/redis.sock")
    assert supports("redis://127.0.0.1:6379/0")
    assert not supports("rediss://example.org:6380")
    assert not supports("redis+cluster://127.0.0.1:7000")
    with pytest.raises(ValueError, match="speaks only"):
        PipelinedConnection("rediss://example.org:6380", 1.0, 1.0)
