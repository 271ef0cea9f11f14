"""Several real server processes as one service, on a real Redis or a real Redis Cluster.

``backend`` (parametrized: ``redis``, ``cluster``)
    The URL of a Redis private to the test: an :class:`EmbeddedRedis` in ``tmp_path``, or a
    3-primary Redis Cluster of ``redis-server --cluster-enabled yes`` processes on loopback
    ports, joined with ``redis-cli --cluster create`` (skipped without those binaries).

``service``
    A :class:`Service`: start ``python -m server`` node processes on that Redis
    (``service.start(3)``), kill, pause and resume them; every process is stopped after the
    test. Their logs are in ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio

from bench.spawn import free_port
from client.lib.connection import RaceClient
from server.storage.embedded import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[2]
#: Seconds of a node's heartbeat and leases in these tests (a dead owner's rooms move after it).
NODE_TTL = 2.0
_START_TIMEOUT = 30.0


async def http_get(port: int, path: str) -> tuple[int, str]:
    """GET ``path`` from a node on ``port``: the status and the body (status 0: no answer)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return 0, ""
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        response = await asyncio.wait_for(reader.read(), 5)
    except (OSError, TimeoutError):
        return 0, ""
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    head, _, body = response.partition(b"\r\n\r\n")
    status = head.split(b" ", 2)[1] if head.count(b" ") >= 1 else b"0"
    return (int(status) if status.isdigit() else 0), body.decode(errors="replace")


async def _http_ok(port: int, path: str) -> bool:
    return (await http_get(port, path))[0] == 200


@dataclass
class NodeProcess:
    port: int
    process: subprocess.Popen[bytes]
    log: Path

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)


@dataclass
class Service:
    """Server processes sharing one Redis (``redis_url``)."""

    redis_url: str
    directory: Path
    nodes: list[NodeProcess] = field(default_factory=list)
    clients: list[RaceClient] = field(default_factory=list)

    async def start(self, count: int, *extra: str) -> list[NodeProcess]:
        started = [self._spawn(*extra) for _ in range(count)]
        self.nodes += started
        await asyncio.gather(*(self.ready(node) for node in started))
        return started

    def _spawn(self, *extra: str) -> NodeProcess:
        port = free_port()
        log = self.directory / f"node-{port}.log"
        command = [
            sys.executable, "-m", "server", "--port", str(port), "--redis-url", self.redis_url,
            "--node-ttl", str(NODE_TTL), "--solver-workers", "0", "--grace", "60", *extra,
        ]  # fmt: skip
        with log.open("wb") as output:
            process = subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
        return NodeProcess(port, process, log)

    async def ready(self, node: NodeProcess) -> None:
        deadline = time.monotonic() + _START_TIMEOUT
        while not await _http_ok(node.port, "/readyz"):
            if node.process.poll() is not None:
                raise AssertionError(f"node on port {node.port} exited: {node.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                raise AssertionError(f"node on port {node.port} not ready: {node.log.read_text()[-2000:]}")
            await asyncio.sleep(0.1)

    async def connect(self, node: NodeProcess, name: str, resume: str | None = None) -> RaceClient:
        client = await RaceClient.connect(node.url, name, resume=resume, reconnect=False)
        self.clients.append(client)
        return client

    async def close(self) -> None:
        for client in self.clients:
            with contextlib.suppress(Exception):
                await client.close()
        for node in self.nodes:
            if node.process.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    node.process.send_signal(signal.SIGCONT)
                    node.process.terminate()
        for node in self.nodes:
            try:
                node.process.wait(10)
            except subprocess.TimeoutExpired:
                node.process.kill()
                node.process.wait()


def _cluster_port() -> int:
    """A free port that leaves room for its cluster bus port (port + 10000). Both stay below
    Linux's ephemeral range (32768 and up), where an outgoing connection of another test could
    take the bus port between this check and the node's start."""
    while True:
        port = random.randint(10_000, 22_000)
        if all(_free(p) for p in (port, port + 10_000)):
            return port


def _free(port: int) -> bool:
    with socket.socket() as probe:
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def _cluster_binaries() -> tuple[str, str] | None:
    for server, cli in (("redis-server", "redis-cli"), ("valkey-server", "valkey-cli")):
        found_server, found_cli = shutil.which(server), shutil.which(cli)
        if found_server and found_cli:
            return found_server, found_cli
    return None


@contextlib.contextmanager
def redis_cluster(directory: Path, primaries: int = 3) -> Iterator[str]:
    """A local Redis Cluster of ``primaries`` primaries (no replicas); its ``redis+cluster://`` URL."""
    binaries = _cluster_binaries()
    if binaries is None:
        pytest.skip("no redis-server and redis-cli (or valkey-*) on PATH for a Redis Cluster")
    server, cli = binaries
    ports = [_cluster_port() for _ in range(primaries)]
    processes = []
    try:
        for port in ports:
            node_dir = directory / f"cluster-{port}"
            node_dir.mkdir()
            processes.append(
                subprocess.Popen(
                    [
                        server,
                        "--port",
                        str(port),
                        "--bind",
                        "127.0.0.1",
                        "--cluster-enabled",
                        "yes",
                        "--cluster-config-file",
                        "nodes.conf",
                        "--dir",
                        str(node_dir),
                        "--appendonly",
                        "yes",
                        "--save",
                        "",
                        "--protected-mode",
                        "no",
                        "--daemonize",
                        "no",
                    ],
                    stdout=(node_dir / "log").open("wb"),
                    stderr=subprocess.STDOUT,
                )
            )
        deadline = time.monotonic() + _START_TIMEOUT
        for port in ports:
            while subprocess.run([cli, "-p", str(port), "ping"], capture_output=True).stdout.strip() != b"PONG":
                if time.monotonic() > deadline:
                    raise AssertionError(f"cluster node {port} did not start")
                time.sleep(0.05)
        addresses = [f"127.0.0.1:{port}" for port in ports]
        subprocess.run([cli, "--cluster", "create", *addresses, "--cluster-yes"], check=True, capture_output=True)
        while (
            b"cluster_state:ok"
            not in subprocess.run([cli, "-p", str(ports[0]), "cluster", "info"], capture_output=True).stdout
        ):
            if time.monotonic() > deadline:
                raise AssertionError("the cluster did not become ready")
            time.sleep(0.05)
        yield f"redis+cluster://127.0.0.1:{ports[0]}"
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


@pytest_asyncio.fixture(params=["redis", "cluster"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "cluster":
        with redis_cluster(tmp_path) as url:
            yield url
        return
    redis = EmbeddedRedis(tmp_path / "redis")
    url = await redis.start()
    try:
        yield url
    finally:
        await redis.stop()


@pytest_asyncio.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[EmbeddedRedis]:
    """A private embedded Redis the test may stop and start again (same data directory)."""
    redis = EmbeddedRedis(tmp_path / "redis")
    await redis.start()
    try:
        yield redis
    finally:
        with contextlib.suppress(Exception):
            await redis.stop()


@pytest_asyncio.fixture
async def service(backend: str, tmp_path: Path) -> AsyncIterator[Service]:
    running = Service(backend, tmp_path)
    try:
        yield running
    finally:
        await running.close()


def large_runs() -> bool:
    """Longer multi-node runs only when ``NODES_LARGE=1``."""
    return os.environ.get("NODES_LARGE") == "1"
