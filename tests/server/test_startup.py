"""Starting and stopping as an operator sees it: one-line start-up errors with their exit codes,
and nothing left running after the server is killed."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.spawn import spawn_server
from client.lib.connection import RaceClient
from protocol.messages import CreateRoom, Joined, RoomOptions

ROOT = Path(__file__).resolve().parents[2]


def server(
    *args: str, cwd: Path, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "env", "names"),
    [
        (["--grace", "-5"], {}, "--grace"),
        (["--solver-workers", "-1"], {}, "--solver-workers"),
        ([], {"PORT": "abc"}, "PORT"),
        (["--log-level", "LOUD"], {}, "--log-level"),
        (["--redis-url", "nonsense://x"], {}, "--redis-url"),
    ],
)
def test_a_bad_setting_stops_start_up_with_one_line_and_exit_code_2(
    tmp_path: Path, args: list[str], env: dict[str, str], names: str
) -> None:
    result = server(*args, cwd=tmp_path, env=env)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert names in lines[0]
    assert "Traceback" not in result.stderr


def test_a_port_in_use_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = server("--port", str(port), "--solver-workers", "0", cwd=tmp_path)
    assert result.returncode == 1
    lines = [line for line in result.stderr.strip().splitlines() if "INFO" not in line]
    assert len(lines) == 1, result.stderr
    assert "--port" in lines[0]
    assert "Traceback" not in result.stderr


def test_redis_out_of_reach_is_one_line_and_exit_code_1(tmp_path: Path) -> None:
    result = server("--port", "0", "--solver-workers", "0", "--redis-url", "redis://127.0.0.1:1/0", cwd=tmp_path)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert "REDIS_URL" in lines[0]


def descendants(pid: int) -> set[int]:
    """Every process whose chain of parents leads to ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signals are Linux's")
def test_a_killed_server_leaves_no_process_behind(tmp_path: Path) -> None:
    """Its embedded Redis, solver workers and multiprocessing helpers all go with it."""
    process = subprocess.Popen(
        [sys.executable, "-m", "server", "--port", "0", "--solver-workers", "1", "--solver-budget", "30"],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        helpers: set[int] = set()
        # Wait for Redis and a solver worker busy picking today's deals.
        while len(helpers) < 2:
            assert time.monotonic() < deadline, "the server never started its helpers"
            time.sleep(0.2)
            helpers = descendants(process.pid)
        time.sleep(1.0)
        helpers = descendants(process.pid)
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        deadline = time.monotonic() + 15
        while [pid for pid in helpers if alive(pid)]:
            assert time.monotonic() < deadline, f"left running: {[pid for pid in helpers if alive(pid)]}"
            time.sleep(0.1)
    finally:
        if process.poll() is None:
            process.kill()
        if process.stderr is not None:
            process.stderr.close()


@pytest.mark.asyncio
async def test_the_server_runs_on_uvloop_when_asked(tmp_path: Path) -> None:
    """``--event-loop uvloop`` (the optional extra): the same server, on uvloop's loop."""
    pytest.importorskip("uvloop")
    with spawn_server(extra=["--event-loop", "uvloop"]) as spawned:
        client = await RaceClient.connect(spawned.url, "Ann", reconnect=False)
        try:
            created = await client.request(lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions()))
            assert isinstance(created, Joined)
        finally:
            await client.close()
