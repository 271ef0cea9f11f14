"""The deployment's load balancer (server/deploy/haproxy.cfg, the one docker-compose.yml
mounts), run as a real HAProxy in front of three real nodes: websocket play goes through
it, its /healthz checks take a killed node out, and a racer reconnecting through it gets
their seat back on another node.

The test runs the repository's file with two lines changed, because there is no Docker
here: the ``server-template`` line (Docker's DNS finds the replicas) becomes one ``server``
line per node on loopback, with the template's own check settings, and ``bind *:8765``
binds a free loopback port. Everything else (HTTP mode for the websocket upgrade,
``leastconn``, ``option httpchk GET /healthz``, the timeouts) is the file as shipped. Its
``maxconn 60000`` wants more descriptors than this machine may open, so haproxy is started
with ``-n`` (its command-line connection limit) fitting the descriptor limit.
Skipped without ``haproxy`` on PATH (``apt-get install haproxy``; .ci/run does it).
"""

from __future__ import annotations

import asyncio
import contextlib
import resource
import shutil
import signal
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

from bench.spawn import free_port
from client.lib.connection import RaceClient
from server.storage.embedded import EmbeddedRedis
from tests.nodes.conftest import NODE_TTL, NodeProcess, Service, http_get
from tests.nodes.test_metrics import metrics
from tests.nodes.test_service import open_race, play_one, race_started, racing

CONFIG = Path(__file__).resolve().parents[2] / "server" / "deploy" / "haproxy.cfg"


def balancer_config(shipped: str, port: int, nodes: list[NodeProcess]) -> str:
    """``shipped`` with its replicas on ``nodes`` and its frontend on ``port`` (see above)."""
    lines = []
    for line in shipped.splitlines():
        words = line.split()
        if words[:1] == ["server-template"]:
            # server-template NAME COUNT ADDRESS OPTIONS...: the options up to Docker's DNS.
            options = words[4 : words.index("resolvers")] if "resolvers" in words else words[4:]
            indent = line[: len(line) - len(line.lstrip())]
            lines += [f"{indent}server node{i} 127.0.0.1:{n.port} {' '.join(options)}" for i, n in enumerate(nodes)]
        elif words[:2] == ["bind", "*:8765"]:
            lines.append(line.replace("*:8765", f"127.0.0.1:{port}"))
        else:
            lines.append(line)
    return "\n".join(lines) + "\n"


def test_config_keeps_docker_compose_working() -> None:
    """The shipped file still finds the replicas through Docker's DNS, on port 8765."""
    text = CONFIG.read_text()
    assert "server-template server 8 server:8765 check" in text
    assert "bind *:8765" in text
    assert (
        "./server/deploy/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg"
        in (CONFIG.parents[2] / "docker-compose.yml").read_text()
    )


@contextlib.contextmanager
def haproxy(config: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    executable = shutil.which("haproxy")
    if executable is None:
        pytest.skip("no haproxy on PATH (apt-get install haproxy)")
    check = subprocess.run([executable, "-c", "-f", str(config)], capture_output=True)
    assert check.returncode == 0, check.stdout.decode() + check.stderr.decode()
    # Two descriptors per proxied connection, and a few of its own.
    maxconn = (resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 100) // 2
    command = [executable, "-db", "-n", str(maxconn), "-f", str(config)]
    with log.open("wb") as output:
        process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT)
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest_asyncio.fixture
async def service(embedded: EmbeddedRedis, tmp_path: Path) -> AsyncIterator[Service]:
    running = Service(embedded.url, tmp_path)
    try:
        yield running
    finally:
        await running.close()


async def connections(node: NodeProcess) -> float:
    return (await metrics(node))["solitaire_connections"]


async def connect_through(service: Service, port: int, name: str, resume: str | None = None) -> RaceClient:
    client = await RaceClient.connect(f"ws://127.0.0.1:{port}", name, resume=resume, reconnect=False)
    service.clients.append(client)
    return client


async def node_of(service: Service, before: list[float]) -> NodeProcess:
    """The node that has one connection more than ``before`` (counted per live node)."""
    for _ in range(50):
        now = [await connections(node) for node in service.nodes]
        grown = [node for node, a, b in zip(service.nodes, before, now, strict=True) if b > a]
        if len(grown) == 1:
            return grown[0]
        await asyncio.sleep(0.1)
    raise AssertionError("no single node got the new connection")


@pytest.mark.asyncio
async def test_play_failover_and_resume_through_haproxy(service: Service, tmp_path: Path) -> None:
    nodes = await service.start(3)
    port = free_port()
    config = tmp_path / "haproxy.cfg"
    config.write_text(balancer_config(CONFIG.read_text(), port, nodes))
    with haproxy(config, tmp_path / "haproxy.log"):
        deadline = time.monotonic() + 15
        while (await http_get(port, "/healthz"))[0] != 200:
            assert time.monotonic() < deadline, (tmp_path / "haproxy.log").read_text()
            await asyncio.sleep(0.1)

        # Play through the balancer; leastconn puts the two racers on different nodes.
        before = [await connections(node) for node in nodes]
        ann = await connect_through(service, port, "Ann")
        ann_node = await node_of(service, before)
        before = [await connections(node) for node in nodes]
        bob = await connect_through(service, port, "Bob")
        bob_node = await node_of(service, before)
        assert bob_node is not ann_node
        code = await open_race(ann, bob)
        await race_started(code, ann, bob)
        acked = await play_one(bob, code)
        await play_one(ann, code)

        # Bob's node dies. The health checks take it out: every new connection works.
        bob_node.signal(signal.SIGKILL)
        bob_node.process.wait()
        deadline = time.monotonic() + 30
        while b"is DOWN" not in (tmp_path / "haproxy.log").read_bytes():
            assert time.monotonic() < deadline, (tmp_path / "haproxy.log").read_text()
            await asyncio.sleep(0.2)
        for _ in range(6):
            assert (await http_get(port, "/healthz"))[0] == 200
            probe = await RaceClient.connect(f"ws://127.0.0.1:{port}", "Probe", reconnect=False)
            await probe.close()

        # Bob reconnects through the balancer with his resume token: a live node seats him.
        await bob.close()
        bob = await connect_through(service, port, "Bob", resume=bob.resume)
        mirror = await bob.wait_room(code, lambda m: racing(m, 1), timeout=NODE_TTL * 4 + 10)
        assert mirror.version >= acked
        assert await play_one(bob, code) > acked
        await play_one(ann, code)
