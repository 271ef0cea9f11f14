"""The service as operators deploy it (tests/nodes/deployment.py): the shipped balancer with
TLS in front of three nodes, clients on addresses of their own. Play, failover and resume go
through it; accounts work over TLS and only over TLS; each client address has its own limits
whatever headers it sends; hostile requests get 400 and no traceback; metrics stay inside;
and a draining node gets no new connections. Skipped without ``haproxy`` on PATH
(``apt-get install haproxy``; .ci/run does it)."""

from __future__ import annotations

import asyncio
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from bench.lib.balancer import FRONT
from client.lib.connection import RaceClient
from protocol.errors import ErrorCode
from protocol.messages import AccountInfo, Error, Login, Register
from server.storage.embedded import EmbeddedRedis
from tests.end_to_end.conftest import RawClient
from tests.nodes.conftest import NODE_TTL, NodeProcess, Service, http_get
from tests.nodes.deployment import Deployment, deployed
from tests.nodes.test_metrics import metrics
from tests.nodes.test_service import open_race, play_one, race_started, racing

pytestmark = pytest.mark.asyncio

PASSWORD = "correct horse battery"
UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)


@pytest_asyncio.fixture
async def service(embedded: EmbeddedRedis, tmp_path: Path) -> AsyncIterator[Service]:
    running = Service(embedded.url, tmp_path)
    try:
        yield running
    finally:
        await running.close()


async def guest(deployment: Deployment, client: int, tls: bool = True, **options: object) -> RawClient:
    raw = RawClient(await deployment.connect(client, tls, **options))
    await raw.hello("Guest")
    return raw


async def register(raw: RawClient, name: str) -> AccountInfo | Error:
    reply = await raw.request(lambda i: Register(id=i, name=name, password=PASSWORD))
    assert isinstance(reply, AccountInfo | Error), reply
    return reply


async def test_accounts_register_and_log_in_through_the_balancer_over_tls_only(
    service: Service, tmp_path: Path
) -> None:
    async with deployed(service, tmp_path) as deployment:
        info = await register(await guest(deployment, 1), "Ann")
        assert isinstance(info, AccountInfo)
        again = await guest(deployment, 1)
        login = await again.request(lambda i: Login(id=i, name="Ann", password=PASSWORD))
        assert isinstance(login, AccountInfo)
        assert login.player == info.player
        # The same through the balancer's plain port: the password would cross a network in the clear.
        refused = await register(await guest(deployment, 2, tls=False), "Bob")
        assert isinstance(refused, Error)
        assert refused.code == ErrorCode.INSECURE_TRANSPORT


async def test_each_client_address_has_its_own_limits_whatever_headers_it_sends(
    service: Service, tmp_path: Path
) -> None:
    forged = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}
    async with deployed(service, tmp_path, "--accounts-per-address", "1") as deployment:
        assert isinstance(await register(await guest(deployment, 1), "Ann"), AccountInfo)
        # Another account from the same address, claiming to be someone else: still that address.
        second = await register(await guest(deployment, 1, additional_headers=forged), "Cleo")
        assert isinstance(second, Error)
        assert second.code == ErrorCode.ADDRESS_LIMIT
        # A forged X-Forwarded-Proto over the plain port does not make it TLS either.
        plain = await register(await guest(deployment, 3, tls=False, additional_headers=forged), "Dora")
        assert isinstance(plain, Error)
        assert plain.code == ErrorCode.INSECURE_TRANSPORT
        # Another address has a limit of its own.
        assert isinstance(await register(await guest(deployment, 2), "Bob"), AccountInfo)


async def test_hostile_requests_get_400_no_traceback_and_metrics_stay_inside(service: Service, tmp_path: Path) -> None:
    async with deployed(service, tmp_path) as deployment:
        for repeated in (b"Origin: https://localhost\r\nOrigin: https://evil.example\r\n", b"Upgrade: websocket\r\n"):
            for _ in range(5):
                answer = await deployment.raw(4, UPGRADE + repeated + b"\r\n")
                assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
        health = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
        closing = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        for _ in range(5):
            assert (await deployment.raw(4, health + closing)).count(b"HTTP/1.1 200 ") == 2  # pipelined
        metrics_request = b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
        assert (await deployment.raw(4, metrics_request)).startswith(b"HTTP/1.1 404 ")
        # Still inside, on each node's own address, for the operator's scraper.
        assert (await http_get(deployment.nodes[0].port, "/metrics"))[0] == 200
        for node in deployment.nodes:
            assert "Traceback" not in node.log.read_text(), node.log.read_text()[-3000:]


async def test_a_draining_node_gets_no_new_connections(service: Service, tmp_path: Path) -> None:
    async with deployed(service, tmp_path, "--drain", "6") as deployment:
        draining, *others = deployment.nodes
        draining.signal(signal.SIGTERM)
        sent = time.monotonic()
        while "node1 is DOWN" not in deployment.log_text():
            assert draining.process.poll() is None, "the node stopped before the balancer noticed"
            assert time.monotonic() - sent < 6, deployment.log_text()
            await asyncio.sleep(0.05)
        before = (await metrics(draining))["solitaire_connections"]
        for n in range(6):
            await guest(deployment, 5 + n)
        assert (await metrics(draining))["solitaire_connections"] == before
        assert sum([(await metrics(node))["solitaire_connections"] for node in others]) >= 6


async def connections(node: NodeProcess) -> float:
    return (await metrics(node))["solitaire_connections"]


async def connect_through(service: Service, deployment: Deployment, name: str, resume: str | None = None) -> RaceClient:
    """A guest racer through the balancer's plain port (guests need no TLS)."""
    url = f"ws://{FRONT}:{deployment.plain_port}"
    client = await RaceClient.connect(url, name, resume=resume, reconnect=False)
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


async def test_play_failover_and_resume_through_haproxy(service: Service, tmp_path: Path) -> None:
    async with deployed(service, tmp_path) as deployment:
        nodes = deployment.nodes
        # Play through the balancer; leastconn puts the two racers on different nodes.
        before = [await connections(node) for node in nodes]
        ann = await connect_through(service, deployment, "Ann")
        ann_node = await node_of(service, before)
        before = [await connections(node) for node in nodes]
        bob = await connect_through(service, deployment, "Bob")
        bob_node = await node_of(service, before)
        assert bob_node is not ann_node
        code = await open_race(ann, bob)
        await race_started(code, ann, bob)
        acked = await play_one(bob, code)
        await play_one(ann, code)

        # Bob's node dies. The readiness checks take it out: every new connection works.
        bob_node.signal(signal.SIGKILL)
        bob_node.process.wait()
        deadline = time.monotonic() + 30
        while "is DOWN" not in deployment.log_text():
            assert time.monotonic() < deadline, deployment.log_text()
            await asyncio.sleep(0.2)
        for _ in range(6):
            probe = await connect_through(service, deployment, "Probe")
            await probe.close()

        # Bob reconnects through the balancer with his resume token: a live node seats him.
        await bob.close()
        bob = await connect_through(service, deployment, "Bob", resume=bob.resume)
        mirror = await bob.wait_room(code, lambda m: racing(m, 1), timeout=NODE_TTL * 4 + 10)
        assert mirror.version >= acked
        assert await play_one(bob, code) > acked
        await play_one(ann, code)


async def test_one_address_holding_unfinished_heads_and_silent_sockets_leaves_anothers_openings_alone(
    service: Service, tmp_path: Path
) -> None:
    async with deployed(service, tmp_path) as deployment:
        held: list[asyncio.StreamWriter] = []
        for n in range(150):
            _, writer = await asyncio.open_connection(FRONT, deployment.plain_port, local_addr=("127.0.9.1", 0))
            if n % 2:
                writer.write(UPGRADE[:40])  # a head that never ends
            held.append(writer)
        try:
            for n in range(5):
                await guest(deployment, 20 + n)
        finally:
            for writer in held:
                writer.close()
