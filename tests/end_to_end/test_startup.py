"""Starting and stopping as an operator sees it: one-line start-up errors with their exit codes,
and nothing left running after the server is killed."""

from __future__ import annotations

import dataclasses
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from bench.lib.spawn import spawn_server
from client.lib.connection import RaceClient
from protocol.messages import CreateRoom, Joined, RoomOptions
from server.__main__ import main
from server.config import Config, SettingError, parse_args
from tests.end_to_end.conftest import RunningServer

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
        (["--port", "99999"], {}, "--port (PORT) must be at most 65535, not 99999"),
        ([], {"PEER_PORT": "65536"}, "--peer-port (PEER_PORT) must be at most 65535"),
        (["--grace", "nan"], {}, "--grace (GRACE) must be a number"),
        (["--rate", "inf"], {}, "--rate (RATE) must be at most"),
        (["--nodes", "3", "--port", "65534"], {}, "--nodes (NODES) 3 from --port (PORT) 65534 needs ports past 65535"),
        (["--nodes", "2", "--route", "node1"], {}, "--route (ROUTE) names one process"),
        (["--route", "node 1"], {}, "argument --route: 'node 1' is not a valid value"),
    ],
)
def test_a_bad_setting_stops_start_up_with_one_line_and_exit_code_2(
    args: list[str],
    env: dict[str, str],
    names: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # python -m server's main, in this process (the exit code of the process itself: the tests
    # of a port in use and of Redis out of reach).
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(SystemExit) as stopped:
        main(args)
    assert stopped.value.code == 2
    stderr = capsys.readouterr().err
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert names in lines[0]
    assert "Traceback" not in stderr


def _numeric_settings() -> list[tuple[str, type]]:
    return [
        (item.name, type(item.default))
        for item in dataclasses.fields(Config)
        if type(item.default) in (int, float)  # not bool: a flag, on or off
    ]


@pytest.mark.parametrize(("name", "kind"), _numeric_settings())
def test_every_numeric_setting_has_an_upper_bound(name: str, kind: type) -> None:
    """Past it, one line naming the setting and its bound (the values a typo or a wrong unit
    gives, and ``inf``), rather than a failure later."""
    flag = f"--{name.replace('_', '-')}"
    for text in ["9" * 30, *(["inf", "1e400"] if kind is float else [])]:
        with pytest.raises(SettingError, match=rf"^{flag} \({name.upper()}\) must be at most \d+(\.\d+)?, not "):
            parse_args([flag, text], {})
        with pytest.raises(SettingError, match=rf"^{flag} \({name.upper()}\) must be at most "):
            parse_args([], {name.upper(): text})
    assert getattr(parse_args([], {}), name) == getattr(Config(), name)  # the default is within it


def test_help_names_the_installed_command_and_shows_only_real_defaults(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as stop:
        parse_args(["--help"], {"KEY_PREFIX": "100%:"})  # argparse formats help with %: a value may hold one
    assert stop.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())  # unwrapped
    assert shown.startswith("usage: solitaire-race-server [-h] [--host HOST] [--port PORT]")
    for empty in ("(default: )", "(default: ())", "(default: None)", "(default: False)", "(default: True)"):
        assert empty not in shown
    assert "(PORT) (default: 8765)" in shown
    assert "(COMPRESSION) (default: off)" in shown
    assert "(KEY_PREFIX) (default: 100%:)" in shown
    assert "(TLS_KEY) --max-connections-per-address" in shown  # its help says the default: nothing more
    assert "(ALLOWED_ORIGINS) --allowed-hosts" in shown


def test_the_installed_command_names_itself_in_its_help(tmp_path: Path) -> None:
    script = Path(sys.executable).parent / "solitaire-race-server"
    if not script.exists():
        pytest.skip("the package is not installed in this interpreter's environment")
    result = subprocess.run([script, "--help"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("usage: solitaire-race-server [-h]")


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


@pytest.mark.asyncio
async def test_a_node_on_any_free_port_names_that_port_from_its_first_heartbeat(server: RunningServer) -> None:
    """The other nodes (and an operator reading Redis) see where the node listens as soon as
    it is up: its port is bound before the node joins the service."""
    cluster = server.server.cluster
    assert cluster is not None
    beat = await cluster.node.store.beat_of(cluster.id)
    assert beat is not None
    assert beat["address"] == f"127.0.0.1:{server.server.port}"
    assert server.server.port != 0
