"""Scripts of the storage, on each of their roads (a plain Redis's pipelined connection,
redis-py's group commit when there is none, per-slot calls on a 3-primary Cluster): replies
as Redis gives them, a script lost by Redis loaded again without running a write twice, and
every failure a StoreUnavailable that says what could not be done."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from server.storage.connection import POOL_SIZE, Storage, StoreUnavailable
from server.storage.embedded import EmbeddedRedis
from tests.in_process_server import fresh_prefix

pytestmark = pytest.mark.asyncio

#: KEYS: a counter. ARGV: a step. The counter after adding the step, and the step as text.
_ADD: str = """
local total = redis.call('INCRBY', KEYS[1], ARGV[1])
return {total, ARGV[1]}
"""
#: KEYS: a key. The key's value, or nil (false) when it has none.
_READ: str = "return redis.call('GET', KEYS[1])"


def without_line(storage: Storage) -> Storage:
    """``storage`` with its pipelined connection closed: scripts then go through redis-py (as over TLS)."""
    assert storage.line is not None
    storage.line.close()
    storage.line = None
    return storage


@pytest_asyncio.fixture(params=["pipelined", "redis-py", "cluster"])
async def storage(request: pytest.FixtureRequest, redis_url: str) -> AsyncIterator[Storage]:
    """Storage on the session's Redis (with its pipelined connection, or without it), or on
    the session's Redis Cluster (forgetting its scripts is what a restart does: the other
    tests there load theirs again, as a server does)."""
    url = request.getfixturevalue("cluster_url") if request.param == "cluster" else redis_url
    connected = await Storage.connect(url, prefix=fresh_prefix())
    if request.param == "redis-py":
        without_line(connected)
    try:
        yield connected
    finally:
        await connected.close()


async def _flush_scripts(storage: Storage) -> None:
    """Forget every script, as a restarted Redis does (on every primary of a Cluster)."""
    if storage.cluster is not None:
        await storage.cluster.script_flush()
    else:
        await storage.redis.script_flush()


async def _script_calls(storage: Storage) -> dict[str, int]:
    """How many EVALSHA and SCRIPT LOAD calls Redis has answered (summed over a Cluster's primaries)."""
    replies: list[dict[str, Any]]
    if storage.cluster is not None:
        replies = list((await storage.cluster.info("commandstats", target_nodes="primaries")).values())
    else:
        replies = [await storage.redis.info("commandstats")]
    calls: dict[str, int] = {}
    for reply in replies:
        for name in ("evalsha", "script|load"):
            calls[name] = calls.get(name, 0) + int(reply.get(f"cmdstat_{name}", {}).get("calls", 0))
    return calls


async def test_a_script_returns_its_reply_as_redis_gives_it(storage: Storage) -> None:
    add, read = storage.script(_ADD), storage.script(_READ)
    key = storage.prefix + "{scripts}:counter"
    assert await add.run("add to a counter", [key], [5]) == [5, b"5"]
    assert await add.run("add to a counter", [key], [2]) == [7, b"2"]
    assert await read.run("read a counter", [key], []) == b"7"
    assert await read.run("read a counter", [storage.prefix + "{scripts}:nothing"], []) is None


async def test_runs_at_once_are_each_applied_once_and_each_get_their_own_reply(storage: Storage) -> None:
    add = storage.script(_ADD)
    key = storage.prefix + "{scripts}:counter"
    # More than a Cluster node's connections: the runs past them wait for one.
    runs = POOL_SIZE * 4
    replies = await asyncio.gather(*(add.run("add to a counter", [key], [1]) for _ in range(runs)))
    assert sorted(reply[0] for reply in replies if isinstance(reply, list)) == list(range(1, runs + 1))
    assert await storage.script(_READ).run("read a counter", [key], []) == str(runs).encode()


async def test_a_script_redis_forgot_is_loaded_once_and_the_write_applied_once(storage: Storage) -> None:
    add = storage.script(_ADD)
    key = storage.prefix + "{scripts}:counter"
    assert await add.run("add to a counter", [key], [1]) == [1, b"1"]
    await _flush_scripts(storage)
    before = await _script_calls(storage)
    assert await add.run("add to a counter", [key], [1]) == [2, b"1"]
    spent = {name: calls - before[name] for name, calls in (await _script_calls(storage)).items()}
    # The run refused for the missing script, the load, the run again (a load on every primary
    # of a Cluster), and no more.
    primaries = 3 if storage.cluster is not None else 1
    assert spent == {"evalsha": 2, "script|load": primaries}
    assert await add.run("add to a counter", [key], [1]) == [3, b"1"]


async def test_runs_at_once_after_redis_forgot_the_script_are_all_applied_once(storage: Storage) -> None:
    add = storage.script(_ADD)
    keys = [storage.prefix + f"{{scripts-{n}}}:counter" for n in range(20)]
    await _flush_scripts(storage)
    await asyncio.gather(*(add.run("add to a counter", [key], [1]) for key in keys for _ in range(5)))
    read = storage.script(_READ)
    assert [await read.run("read a counter", [key], []) for key in keys] == [b"5"] * 20


async def test_many_runs_at_once_each_get_their_reply_in_order_even_after_redis_forgot(storage: Storage) -> None:
    """Bulk runs (lease renewals) on many keys, one slot each: on a Cluster they go to every
    node together, and a script Redis forgot is no failure."""
    add = storage.script(_ADD)
    await _flush_scripts(storage)
    keys = [storage.prefix + f"{{bulk-{k}}}:counter" for k in range(40)]
    replies = await add.run_many("add to counters", [([key], [k + 1]) for k, key in enumerate(keys)])
    assert replies == [[k + 1, str(k + 1).encode()] for k in range(40)]
    assert await storage.script(_READ).run("read a counter", [keys[-1]], []) == b"40"


async def test_without_the_line_a_failed_reload_fails_only_the_runs_it_left_unsent(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A batch where one script ran and another was missing: the reload fails, and only the
    run that did not happen says so (the other ran: it is no failure, so nobody retries it)."""
    storage = without_line(await Storage.connect(redis_url, prefix=fresh_prefix()))
    try:
        add, read = storage.script(_ADD), storage.script(_READ)
        key = storage.prefix + "{scripts}:counter"
        assert await add.run("add to a counter", [key], [1]) == [1, b"1"]
        await storage.redis.script_flush()
        assert await add.run("add to a counter", [key], [1]) == [2, b"1"]  # loaded again

        async def refused(source: str) -> str:
            raise ConnectionError("Redis went away while loading a script")

        monkeypatch.setattr(storage.redis, "script_load", refused)
        await storage.send_all("forget scripts", [("SCRIPT", "FLUSH"), ("SCRIPT", "LOAD", _ADD)])  # not _READ
        added, missing = await asyncio.gather(
            add.run("add to a counter", [key], [1]), read.run("read a counter", [key], []), return_exceptions=True
        )
        assert added == [3, b"1"]
        assert isinstance(missing, StoreUnavailable)
        assert "read a counter" in str(missing)
    finally:
        await storage.close()


async def test_a_refused_run_is_store_unavailable_naming_it_and_the_others_go_on(storage: Storage) -> None:
    add = storage.script(_ADD)
    counter, text = storage.prefix + "{scripts}:counter", storage.prefix + "{scripts}:text"
    await storage.send_all("write a text", [("SET", text, "not a number")])
    good, refused = await asyncio.gather(
        add.run("add to a counter", [counter], [1]),
        add.run("add to the text", [text], [1]),
        return_exceptions=True,
    )
    assert good == [1, b"1"]
    assert isinstance(refused, StoreUnavailable)
    assert "storage unavailable: cannot add to the text: Redis at" in str(refused)
    assert "refused it" in str(refused)
    assert "not an integer" in str(refused)


@pytest.mark.parametrize("road", ["pipelined", "redis-py"])
async def test_runs_while_redis_is_gone_are_store_unavailable_each_naming_its_own(road: str, tmp_path: Path) -> None:
    async with EmbeddedRedis(tmp_path) as redis:
        storage = await Storage.connect(redis.url)
        if road == "redis-py":
            without_line(storage)
        add = storage.script(_ADD)
        try:
            assert await add.run("add to a counter", ["{a}:counter"], [1]) == [1, b"1"]
            await redis.stop()
            failures = await asyncio.gather(
                add.run("add to counter a", ["{a}:counter"], [1]),
                add.run("add to counter b", ["{b}:counter"], [1]),
                return_exceptions=True,
            )
        finally:
            await storage.close()
    assert all(isinstance(failure, StoreUnavailable) for failure in failures), failures
    assert [str(failure).split(": no answer")[0] for failure in failures] == [
        "storage unavailable: cannot add to counter a",
        "storage unavailable: cannot add to counter b",
    ]
