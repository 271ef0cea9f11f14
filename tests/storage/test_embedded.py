"""The embedded Redis: starts, persists, dies with its parent, is restarted, and explains its failures.

Every test runs real server processes in its own temporary data directory.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import stat
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError

from server.storage.embedded import EmbeddedRedis, EmbeddedRedisError

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parent.parent


def running(pid: int) -> bool:
    """Whether the process exists and has not exited (an unreaped zombie counts as exited)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in {"Z", "X"}


async def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        assert asyncio.get_running_loop().time() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def script(path: Path, body: str) -> str:
    """Write an executable shell script standing in for a server binary."""
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o755)
    return str(path)


async def read_key(url: str, key: str) -> bytes | None:
    connection = Redis.from_url(url)
    try:
        value = await connection.get(key)
    finally:
        await connection.aclose()
    assert value is None or isinstance(value, bytes)
    return value


async def write_key(url: str, key: str, value: str) -> None:
    connection = Redis.from_url(url)
    try:
        await connection.set(key, value)
    finally:
        await connection.aclose()


async def test_serves_on_a_private_socket_with_append_only_persistence(tmp_path: Path) -> None:
    data_dir = tmp_path / "redis"
    async with EmbeddedRedis(data_dir) as redis:
        assert redis.url == f"unix://{data_dir}/redis.sock"
        connection = Redis.from_url(redis.url, decode_responses=True)
        try:
            assert await connection.ping()
            config = await connection.config_get("*")
        finally:
            await connection.aclose()
        assert config["appendonly"] == "yes"
        assert config["appendfsync"] == "everysec"
        assert config["save"] == ""
        assert config["port"] == "0"
        assert config["dir"] == str(data_dir)
        assert stat.S_IMODE(data_dir.stat().st_mode) == 0o700
        assert stat.S_IMODE((data_dir / "redis.sock").stat().st_mode) == 0o700


async def test_data_survives_a_stop_and_a_start_in_the_same_directory(tmp_path: Path) -> None:
    redis = EmbeddedRedis(tmp_path)
    url = await redis.start()
    pid = redis.pid
    assert pid is not None
    await write_key(url, "room", "kept")
    await redis.stop()
    assert redis.pid is None
    assert not running(pid)
    assert "ready to exit" in (tmp_path / "redis.log").read_text()  # a clean shutdown, not a kill
    async with EmbeddedRedis(tmp_path) as again:
        assert again.url == url
        assert await read_key(url, "room") == b"kept"


CHILD = """
import asyncio, sys
from pathlib import Path
from redis.asyncio import Redis
from redis.exceptions import ConnectionError as RedisConnectionError
from server.storage.embedded import EmbeddedRedis

async def main():
    redis = EmbeddedRedis(Path(sys.argv[1]))
    await redis.start()
    client = Redis.from_url(redis.url)
    await client.set("survivor", "written before the crash")
    print(redis.pid, flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux only")
async def test_redis_stops_when_its_parent_is_killed_and_keeps_the_data(tmp_path: Path) -> None:
    parent = await asyncio.create_subprocess_exec(
        sys.executable, "-c", CHILD, str(tmp_path), cwd=ROOT, stdout=subprocess.PIPE
    )
    assert parent.stdout is not None
    line = await asyncio.wait_for(parent.stdout.readline(), 20)
    assert line, "the child process failed to start its EmbeddedRedis"
    redis_pid = int(line)
    assert running(redis_pid)

    parent.kill()  # SIGKILL: the parent gets no chance to stop Redis itself
    await parent.wait()

    await eventually(lambda: not running(redis_pid))
    assert "Received SIGTERM" in (tmp_path / "redis.log").read_text()
    async with EmbeddedRedis(tmp_path) as redis:
        assert redis.pid != redis_pid
        assert await read_key(redis.url, "survivor") == b"written before the crash"


async def test_supervisor_restarts_a_killed_server_on_the_same_url(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="server.storage.embedded")
    async with EmbeddedRedis(tmp_path) as redis:
        url = redis.url
        await write_key(url, "move", "acknowledged")
        first = redis.pid
        assert first is not None
        os.kill(first, signal.SIGKILL)

        await eventually(lambda: redis.restarts == 1)
        assert redis.pid not in {None, first}
        assert redis.url == url
        # Redis wrote the append-only file before it replied, so the crash lost nothing.
        assert await read_key(url, "move") == b"acknowledged"
    assert "was killed by SIGKILL" in caplog.text
    assert "restarted" in caplog.text


async def test_a_leftover_server_is_shut_down_and_replaced_by_our_own(tmp_path: Path) -> None:
    # A server on our socket that no EmbeddedRedis owns: as if left by a crashed run.
    leftover = subprocess.Popen(EmbeddedRedis(tmp_path).command(), stdout=subprocess.DEVNULL)
    try:
        url = f"unix://{tmp_path}/redis.sock"
        deadline = asyncio.get_running_loop().time() + 10
        while True:
            try:
                await write_key(url, "room", "from the earlier run")
                break
            except RedisConnectionError:
                assert asyncio.get_running_loop().time() < deadline
                await asyncio.sleep(0.02)
        async with EmbeddedRedis(tmp_path) as redis:
            assert leftover.poll() == 0  # it was shut down cleanly, not killed
            assert redis.pid != leftover.pid
            assert await read_key(redis.url, "room") == b"from the earlier run"
    finally:
        if leftover.poll() is None:
            leftover.kill()
        leftover.wait()


async def test_a_second_owner_of_the_data_directory_is_refused(tmp_path: Path) -> None:
    async with EmbeddedRedis(tmp_path) as redis:
        with pytest.raises(EmbeddedRedisError, match=rf"in use .*\(owned by pid {os.getpid()}\).* REDIS_URL=unix://"):
            await EmbeddedRedis(tmp_path).start()
        assert await read_key(redis.url, "anything") is None  # the first one still serves


async def test_an_executable_that_exits_at_once_fails_fast_with_its_output(tmp_path: Path) -> None:
    broken = script(tmp_path / "broken-server", 'echo "FATAL: cannot read configuration" >&2\nexit 3\n')
    data_dir = tmp_path / "data"
    started = asyncio.get_running_loop().time()
    with pytest.raises(EmbeddedRedisError, match=r"exited with code 3") as failure:
        await EmbeddedRedis(data_dir, broken, start_timeout=30).start()
    assert asyncio.get_running_loop().time() - started < 10  # did not wait for the timeout
    assert "FATAL: cannot read configuration" in str(failure.value)
    assert str(data_dir / "redis.log") in str(failure.value)

    # The failed start released the directory: a working server can use it.
    async with EmbeddedRedis(data_dir) as redis:
        assert await read_key(redis.url, "anything") is None


async def test_a_server_that_never_answers_times_out_clearly_and_is_killed(tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    silent = script(tmp_path / "silent-server", f'echo "loading forever"\necho $$ > {pid_file}\nexec sleep 60\n')
    redis = EmbeddedRedis(tmp_path / "data", silent, start_timeout=0.5)
    with pytest.raises(EmbeddedRedisError, match=r"did not answer PING on .* within 0\.5 s") as failure:
        await redis.start()
    assert "loading forever" in str(failure.value)
    assert redis.pid is None
    assert not running(int(pid_file.read_text()))


async def test_a_missing_executable_is_named(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedRedisError, match=r"/nowhere/redis-server"):
        EmbeddedRedis(tmp_path, "/nowhere/redis-server")


async def test_a_socket_path_too_long_for_unix_sockets_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EmbeddedRedisError, match=r"shorter data directory"):
        EmbeddedRedis(tmp_path / ("d" * 120))
