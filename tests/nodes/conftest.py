"""Several real server processes as one service, on a real Redis or a real Redis Cluster.

``backend`` (parametrized: ``redis``, ``cluster``)
    The URL of a Redis private to the test (an :class:`EmbeddedRedis` in ``tmp_path``), or of
    the worker's shared Redis Cluster (``cluster_url`` in ``tests/conftest.py``):
    :func:`redis_cluster`'s 3 primaries, ``redis-server --cluster-enabled yes`` processes on
    loopback ports joined with ``redis-cli --cluster create`` (skipped without those binaries).

``service``
    A :class:`Service`: start ``python -m server`` node processes on that Redis, under a
    key prefix of the test's own
    (``service.start(3)``, counting down :data:`tests.polling.COUNTDOWN`; on 127.0.0.1, or
    each on a loopback address of its own with ``hosts=``; in a network namespace with
    ``netns=``), kill, pause and resume them;
    every process is stopped after the test. Their logs are in ``tmp_path``.
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
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio

from bench.lib.spawn import free_port
from client.lib.connection import RaceClient
from server.storage.embedded import EmbeddedRedis
from tests.in_process_server import fresh_prefix
from tests.polling import COUNTDOWN

ROOT = Path(__file__).resolve().parents[2]
#: Seconds of a node's heartbeat and leases in these tests (a dead owner's rooms move after it).
NODE_TTL = 2.0
_START_TIMEOUT = 30.0


async def http_get(port: int, path: str, host: str = "127.0.0.1") -> tuple[int, str]:
    """GET ``path`` from a node on ``host``:``port``: the status and the body (status 0: no answer)."""
    try:
        reader, writer = await asyncio.open_connection(host, port)
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


#: Ports a node is started on before its start counts as failed.
_PORT_TRIES = 3


@dataclass
class NodeProcess:
    port: int
    process: subprocess.Popen[bytes]
    log: Path
    host: str = "127.0.0.1"  # the address it listens on (its peer port too)
    netns: str | None = None  # the network namespace it runs in (None: the test's own)

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"

    def signal(self, signum: int) -> None:
        self.process.send_signal(signum)


@dataclass
class Service:
    """Server processes sharing one Redis (``redis_url``)."""

    redis_url: str
    directory: Path
    #: Every node's key prefix (None: the server's own), one of its own on a shared Redis.
    key_prefix: str | None = None
    nodes: list[NodeProcess] = field(default_factory=list)
    clients: list[RaceClient] = field(default_factory=list)

    async def start(
        self,
        count: int,
        *extra: str,
        hosts: Sequence[str] = (),
        netns: str | None = None,
        redis_url: str | None = None,
        each: Sequence[Sequence[str]] = (),
    ) -> list[NodeProcess]:
        """``count`` ready nodes with the flags ``extra``, and the ``k``-th with ``each[k]``
        too if given; the ``k``-th listens on ``hosts[k]`` (``--host``: its peer port too) if
        given, else on 127.0.0.1. With ``netns`` they run in that network namespace (``ip
        netns exec``; the hosts are its addresses), with ``redis_url`` on that Redis URL
        instead of the service's."""
        addresses = [hosts[k] if k < len(hosts) else "127.0.0.1" for k in range(count)]
        own = [list(each[k]) if k < len(each) else [] for k in range(count)]
        launch = _Launch(netns, redis_url or self.redis_url)
        starts = (
            self._start_one(host, *extra, *flags, launch=launch) for host, flags in zip(addresses, own, strict=True)
        )
        return list(await asyncio.gather(*starts))

    async def _start_one(self, host: str, *extra: str, launch: _Launch | None = None) -> NodeProcess:
        """A ready node on ``host``. A free port can be taken before the node binds it (another
        node's peer port, an ephemeral port too, or another test's): then it starts on another."""
        launch = launch or _Launch(None, self.redis_url)
        for _ in range(_PORT_TRIES - 1):
            node = self._spawn(host, *extra, launch=launch)
            self.nodes.append(node)
            try:
                await self.ready(node)
            except AssertionError:
                if node.process.poll() is None or "address already in use" not in node.log.read_text():
                    raise
                self.nodes.remove(node)  # it exited: only nodes that started are the service's
                continue
            return node
        node = self._spawn(host, *extra, launch=launch)
        self.nodes.append(node)
        await self.ready(node)
        return node

    def _spawn(self, host: str, *extra: str, launch: _Launch) -> NodeProcess:
        taken = {node.port for node in self.nodes}  # on another address too: a log is named by its port
        port = launch.port(host)
        while port in taken:
            port = launch.port(host)
        log = self.directory / f"node-{port}.log"
        command = [
            *launch.prefix(), sys.executable, "-m", "server", "--host", host, "--port", str(port),
            "--redis-url", launch.redis_url, "--node-ttl", str(NODE_TTL), "--solver-workers", "0", "--grace", "60",
            "--countdown", str(COUNTDOWN), *extra,
        ]  # fmt: skip
        if self.key_prefix is not None:
            command += ["--key-prefix", self.key_prefix]
        with log.open("wb") as output:
            # ``ip netns exec`` execs the command: the process is the node itself (its signals too).
            process = subprocess.Popen(command, cwd=ROOT, stdout=output, stderr=subprocess.STDOUT)
        return NodeProcess(port, process, log, host, launch.netns)

    async def ready(self, node: NodeProcess) -> None:
        deadline = time.monotonic() + _START_TIMEOUT
        while (answer := await http_get(node.port, "/readyz", node.host))[0] != 200:
            if node.process.poll() is not None:
                raise AssertionError(f"node on port {node.port} exited: {node.log.read_text()[-2000:]}")
            if time.monotonic() > deadline:
                status, body = answer  # status 0: no answer at all
                raise AssertionError(
                    f"node on port {node.port} not ready ({status} {body.strip()!r}): {node.log.read_text()[-2000:]}"
                )
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


@dataclass(frozen=True)
class _Launch:
    """Where a node process runs: its network namespace (None: ours) and its Redis."""

    netns: str | None
    redis_url: str

    def prefix(self) -> list[str]:
        return [] if self.netns is None else ["ip", "netns", "exec", self.netns]

    def port(self, host: str) -> int:
        """A port for a node on ``host``. Another namespace's address cannot be probed from
        here; nothing but its nodes listens there, and below Linux's ephemeral range (32768
        and up) no outgoing connection or peer port (port 0) takes it."""
        return free_port(host) if self.netns is None else random.randint(10_000, 32_000)


def _cluster_ports(count: int) -> list[int]:
    """``count`` distinct free ports, each leaving room for its cluster bus port (port +
    10000), none another's bus port. All stay below Linux's ephemeral range (32768 and up),
    where an outgoing connection of another test could take a bus port between this check and
    the node's start. (Another worker may still pick the same port meanwhile: the cluster is
    then started again on others, see :func:`redis_cluster`.)"""
    ports: list[int] = []
    while len(ports) < count:
        port = random.randint(10_000, 22_000)
        taken = {p + offset for p in ports for offset in (-10_000, 0, 10_000)}
        if port not in taken and port + 10_000 not in taken and all(_free(p) for p in (port, port + 10_000)):
            ports.append(port)
    return ports


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


class _PortTaken(Exception):
    """A cluster node could not have its port (another process took it after the check)."""


#: Seconds any one redis-cli call may take (a hung call fails the fixture, never the run).
_CLI_TIMEOUT = 20.0


def _cli(cli: str, port: int, *args: str) -> bytes:
    """What ``redis-cli -p port args`` printed; b"" if it failed or took too long."""
    try:
        done = subprocess.run([cli, "-p", str(port), *args], capture_output=True, timeout=_CLI_TIMEOUT)
    except subprocess.TimeoutExpired:
        return b""
    return done.stdout.strip()


@contextlib.contextmanager
def redis_cluster(directory: Path, primaries: int = 3) -> Iterator[str]:
    """A local Redis Cluster of ``primaries`` primaries (no replicas); its ``redis+cluster://`` URL."""
    binaries = _cluster_binaries()
    if binaries is None:
        pytest.skip("no redis-server and redis-cli (or valkey-*) on PATH for a Redis Cluster")
    for attempt in range(3):
        processes: list[subprocess.Popen[bytes]] = []
        try:
            try:
                url = _start_cluster(directory / f"try-{attempt}", primaries, *binaries, processes)
            except _PortTaken:
                continue
            yield url
            return
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                try:
                    process.wait(10)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()
    raise AssertionError("no free ports for a Redis Cluster in three tries")


def _start_cluster(
    directory: Path, primaries: int, server: str, cli: str, processes: list[subprocess.Popen[bytes]]
) -> str:
    """Start the nodes (appending them to ``processes``) and join them; the cluster's URL."""
    ports = _cluster_ports(primaries)
    node_dirs = [directory / f"cluster-{port}" for port in ports]
    for port, node_dir in zip(ports, node_dirs, strict=True):
        node_dir.mkdir(parents=True)
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
    for port, node_dir, process in zip(ports, node_dirs, processes, strict=True):
        # Ours answers with its own directory: a PONG alone could come from another worker's
        # node on a port this one failed to take.
        while _cli(cli, port, "config", "get", "dir").split(b"\n")[-1:] != [str(node_dir).encode()]:
            if process.poll() is not None:
                raise _PortTaken(port)
            if time.monotonic() > deadline:
                raise AssertionError(f"cluster node {port} did not start: {(node_dir / 'log').read_text()[-2000:]}")
            time.sleep(0.05)
    addresses = [f"127.0.0.1:{port}" for port in ports]
    try:
        subprocess.run(
            [cli, "--cluster", "create", *addresses, "--cluster-yes"],
            check=True,
            capture_output=True,
            timeout=_START_TIMEOUT,
        )
    except subprocess.TimeoutExpired as error:
        raise AssertionError(f"redis-cli --cluster create hung: {error.stdout!r}") from error
    # Every node must say so: one that has not yet learnt the others' slots answers a
    # client's first commands with CLUSTERDOWN.
    while not all(b"cluster_state:ok" in _cli(cli, port, "cluster", "info") for port in ports):
        if time.monotonic() > deadline:
            raise AssertionError("the cluster did not become ready")
        time.sleep(0.05)
    return f"redis+cluster://127.0.0.1:{ports[0]}"


@pytest_asyncio.fixture(params=["redis", "cluster"])
async def backend(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[str]:
    if request.param == "cluster":
        yield str(request.getfixturevalue("cluster_url"))
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
    running = Service(backend, tmp_path, key_prefix=fresh_prefix())  # the Cluster is the worker's
    try:
        yield running
    finally:
        await running.close()


def large_runs() -> bool:
    """Longer multi-node runs only when ``NODES_LARGE=1``."""
    return os.environ.get("NODES_LARGE") == "1"
