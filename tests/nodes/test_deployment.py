"""The service as operators deploy it (tests/nodes/deployment.py): the shipped balancer with
TLS in front of three nodes, clients on addresses of their own. Play, failover and resume go
through it; accounts work over TLS and only over TLS; each client address has its own limits
(accounts, guests, failed logins, public rooms) whatever headers it sends; the lobby comes in
pages; hostile requests get 400 and no traceback, another host name 421; metrics stay inside;
a draining node gets no new connections; and with Redis down the nodes log lines, not
tracebacks. Skipped without ``haproxy`` on PATH (``apt-get install haproxy``; .ci/run does it).

The tests that leave the deployment whole share one (:func:`shared`, marked :data:`SHARED`),
each on client addresses and names of its own; those that stop a node or Redis start their own.
"""

from __future__ import annotations

import asyncio
import re
import signal
import time
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
import pytest_asyncio
from websockets.exceptions import InvalidStatus

from bench.lib.balancer import FRONT, NODE_HOSTS, NetworkRedis
from client.lib.connection import RaceClient
from protocol.errors import ErrorCode
from protocol.messages import (
    LOBBY_PAGE,
    PROTOCOL_VERSION,
    AccountInfo,
    Ack,
    CreateRoom,
    Error,
    Hello,
    Joined,
    Login,
    QuickMatch,
    Register,
    RoomOptions,
    RoomSummary,
)
from server.storage.embedded import EmbeddedRedis
from tests.end_to_end.conftest import RawClient
from tests.end_to_end.test_lobby import page
from tests.nodes.conftest import NODE_TTL, NodeProcess, Service, http_get
from tests.nodes.deployment import Deployment, client_address, deployed
from tests.nodes.test_compose import compose
from tests.nodes.test_metrics import metrics
from tests.nodes.test_service import open_race, play_one, race_started, racing
from tests.polling import eventually, eventually_async

pytestmark = pytest.mark.asyncio
#: A test on the deployment of :func:`shared` (which lives on the module's event loop).
SHARED = pytest.mark.asyncio(loop_scope="module")

PASSWORD = "correct horse battery"
UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)


#: The shared deployment's per-address limits, small enough to reach in a test: new guests
#: an hour, failed logins, unfinished public rooms (the default), and new accounts an hour.
IDENTITIES, ATTEMPTS, PUBLIC_ROOMS, ACCOUNTS = 2, 2, 10, 1
#: The host names compose lets the nodes answer to (guarding against DNS rebinding).
ALLOWED_HOSTS = str(compose()["services"]["server"]["environment"]["ALLOWED_HOSTS"])


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Deployment]:
    """One deployment for the tests that stop nothing, its nodes set as compose sets them
    (``ALLOWED_HOSTS``) with the small limits above; a player may wait in 10 rooms."""
    directory = tmp_path_factory.mktemp("deployment")
    redis = NetworkRedis(directory / "redis")
    running = Service(await redis.start(), directory)
    settings = {
        "--identities-per-address": IDENTITIES,
        "--address-attempts": ATTEMPTS,
        "--public-rooms-per-address": PUBLIC_ROOMS,
        "--accounts-per-address": ACCOUNTS,
        "--max-rooms-per-player": 10,
        "--allowed-hosts": ALLOWED_HOSTS,
    }
    try:
        async with deployed(running, directory, *(str(part) for item in settings.items() for part in item)) as made:
            yield made
    finally:
        await running.close()
        await redis.stop()


@pytest_asyncio.fixture
async def embedded(tmp_path: Path) -> AsyncIterator[EmbeddedRedis]:
    """The deployment's Redis, on its own address, which the test may stop."""
    redis = NetworkRedis(tmp_path / "redis")
    await redis.start()
    try:
        yield redis
    finally:
        await redis.stop()


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


async def login(raw: RawClient, name: str, password: str = PASSWORD) -> str:
    """The answer's error code, or ``"account"`` for a login."""
    reply = await raw.request(lambda i: Login(id=i, name=name, password=password))
    assert isinstance(reply, AccountInfo | Error), reply
    return "account" if isinstance(reply, AccountInfo) else reply.code


def forged(address: str) -> list[list[tuple[str, str]]]:
    """Headers a client sends to pass for ``address`` over TLS: once each, and twice each."""
    once = [("X-Forwarded-For", address), ("X-Forwarded-Proto", "https")]
    return [once, [("X-Forwarded-For", "203.0.113.9"), *once, *once]]


async def opened_or_400(deployment: Deployment, client: int, headers: list[tuple[str, str]]) -> RawClient | None:
    """A websocket from ``client`` sending ``headers``, or None when it was refused with a 400
    (any other answer fails the test)."""
    try:
        return RawClient(await deployment.connect(client, additional_headers=headers))
    except InvalidStatus as refused:
        status = refused.response.status_code
    assert status == 400, status
    return None


def assert_no_traceback(deployment: Deployment) -> None:
    for node in deployment.nodes:
        text = node.log.read_text(errors="replace")
        assert "Traceback" not in text, text[-3000:]


@SHARED
async def test_each_node_listens_on_an_address_of_its_own(shared: Deployment) -> None:
    """The deployment's shape: no node shares the balancer's or another node's address, and
    none answers on 127.0.0.1."""
    assert [node.host for node in shared.nodes] == list(NODE_HOSTS)
    for node in shared.nodes:
        assert (await http_get(node.port, "/readyz", node.host))[0] == 200
        assert (await http_get(node.port, "/readyz"))[0] == 0
        assert f"up at {node.host}:{node.port}" in node.log.read_text()  # the address it gives the others


@SHARED
async def test_accounts_register_and_log_in_through_the_balancer_over_tls_only(shared: Deployment) -> None:
    info = await register(await guest(shared, 1), "Ann")
    assert isinstance(info, AccountInfo)
    again = await guest(shared, 1)
    logged_in = await again.request(lambda i: Login(id=i, name="Ann", password=PASSWORD))
    assert isinstance(logged_in, AccountInfo)
    assert logged_in.player == info.player
    # The same through the balancer's plain port: the password would cross a network in the clear.
    refused = await register(await guest(shared, 2, tls=False), "Bob")
    assert isinstance(refused, Error)
    assert refused.code == ErrorCode.INSECURE_TRANSPORT


@SHARED
async def test_each_client_address_has_its_own_limits_whatever_headers_it_sends(shared: Deployment) -> None:
    headers = {"X-Forwarded-For": "203.0.113.9", "X-Forwarded-Proto": "https"}
    assert ACCOUNTS == 1
    assert isinstance(await register(await guest(shared, 11), "Ada"), AccountInfo)
    # Another account from the same address, claiming to be someone else: still that address.
    second = await register(await guest(shared, 11, additional_headers=headers), "Cleo")
    assert isinstance(second, Error)
    assert second.code == ErrorCode.ADDRESS_LIMIT
    # A forged X-Forwarded-Proto over the plain port does not make it TLS either.
    plain = await register(await guest(shared, 13, tls=False, additional_headers=headers), "Dora")
    assert isinstance(plain, Error)
    assert plain.code == ErrorCode.INSECURE_TRANSPORT
    # Another address has a limit of its own.
    assert isinstance(await register(await guest(shared, 12), "Bea"), AccountInfo)


@SHARED
async def test_guests_and_failed_logins_count_per_client_address_whatever_headers_it_sends(
    shared: Deployment,
) -> None:
    """Findings 1 and 3 (issue 29): every player had the balancer's address, so one source used
    up the guests and failed logins of everyone; a client's forged X-Forwarded-For was believed.
    Address A forges B's address, once and with every header twice (finding 4: tracebacks)."""
    a, b = 31, 32
    first = RawClient(await shared.connect(a))
    welcome = await first.hello("Guest")
    players = [first, *[await guest(shared, a) for _ in range(IDENTITIES - 1)]]
    # A's new guests are used up, whatever it claims; a duplicate header is never a traceback.
    for headers in forged(client_address(b)):
        again = await opened_or_400(shared, a, headers)
        if again is not None:
            refused = await again.request(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION, name="Guest"))
            assert isinstance(refused, Error), refused
            assert refused.code == ErrorCode.ADDRESS_LIMIT
    # A's failed logins (on names of no account, one try each, side by side: each failure
    # answers after a second) are used up too...
    tries = [login(players[n % len(players)], f"Nobody{a}x{n}") for n in range(ATTEMPTS)]
    assert set(await asyncio.gather(*tries)) == {ErrorCode.LOGIN_FAILED}
    assert await login(first, f"Nobody{a}x{ATTEMPTS}") == ErrorCode.TOO_MANY_ATTEMPTS
    for headers in forged(client_address(b)):
        again = await opened_or_400(shared, a, headers)
        if again is not None:
            await again.hello("Guest", resume=welcome.resume)  # A's guest back: no new one
            assert await login(again, f"Nobody{a}y") == ErrorCode.TOO_MANY_ATTEMPTS
    # ... and B, whose address A claimed, has all of its own.
    others = [await guest(shared, b) for _ in range(IDENTITIES)]
    tries = [login(others[n % len(others)], f"Nobody{b}x{n}") for n in range(ATTEMPTS)]
    assert set(await asyncio.gather(*tries)) == {ErrorCode.LOGIN_FAILED}
    assert_no_traceback(shared)


@SHARED
async def test_the_lobby_comes_in_pages_newest_first_and_caps_public_rooms_per_address(shared: Deployment) -> None:
    """Finding 8 (issue 29): one address made 500 public rooms in 3 s, and every answer to
    the lobby carried them all (103 KB)."""
    public = RoomOptions(public=True)

    async def fill(host: RawClient) -> list[str]:
        """As many public rooms as the host's address may have open."""
        codes = []
        for _ in range(PUBLIC_ROOMS):
            reply = await host.request(partial(CreateRoom, variant="antares", options=public))
            assert isinstance(reply, Joined), reply
            codes.append(reply.room)
        return codes

    hosts = [await guest(shared, n) for n in range(41, 47)]
    made = {code for codes in await asyncio.gather(*map(fill, hosts)) for code in codes}
    # Address 41 is at its cap, whichever of its players asks; a private room is no share of the lobby.
    other = await guest(shared, 41)
    refused = await other.request(partial(CreateRoom, variant="scorpion", options=public))
    assert isinstance(refused, Error), refused
    assert refused.code == ErrorCode.ADDRESS_LIMIT
    private = await other.request(partial(CreateRoom, variant="scorpion"))
    assert isinstance(private, Joined)
    # Another address opens one: the newest room, first in the lobby.
    newest = await (await guest(shared, 47)).request(partial(CreateRoom, variant="scorpion", options=public))
    assert isinstance(newest, Joined), newest

    reader = await guest(shared, 48)

    async def lobby() -> list[list[RoomSummary]]:
        """Every page, following the cursors."""
        pages: list[list[RoomSummary]] = []
        after = None
        while not pages or after is not None:
            reply = await page(reader, after)
            pages.append(reply.rooms)
            after = reply.next
        return pages

    # A node lists the others' rooms as of their last heartbeat.
    wanted = made | {newest.room}
    pages = await eventually_async(lobby, lambda pages: wanted <= {room.code for rooms in pages for room in rooms})
    assert len(pages) >= 2
    assert {len(rooms) for rooms in pages[:-1]} == {LOBBY_PAGE}
    rooms = [room for rooms in pages for room in rooms]
    codes = [room.code for room in rooms]
    assert len(codes) == len(set(codes))  # each room once
    assert private.room not in codes
    assert codes[0] == newest.room
    newest_first = [(room.created, room.code) for room in rooms]
    assert newest_first == sorted(newest_first, reverse=True)


@SHARED
async def test_another_host_name_gets_421_through_the_balancer_and_health_still_answers(shared: Deployment) -> None:
    """Finding 11 (issue 29): a hostile page on a name that resolves to the service (DNS
    rebinding) is its own origin; with compose's ALLOWED_HOSTS only those names are served."""
    web_page = b"GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n"
    rebound = UPGRADE.replace(b"Host: localhost", b"Host: evil.example") + b"Origin: https://evil.example\r\n\r\n"
    for tls in (True, False):
        assert (await shared.raw(51, web_page % b"evil.example", tls)).startswith(b"HTTP/1.1 421 ")
        assert (await shared.raw(51, rebound, tls)).startswith(b"HTTP/1.1 421 ")
    health = b"GET /healthz HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n"
    assert (await shared.raw(51, health)).startswith(b"HTTP/1.1 200 ")
    for name in ALLOWED_HOSTS.split(","):
        named = web_page % f"{name.strip()}:{shared.tls_port}".encode()
        assert (await shared.raw(51, named)).startswith(b"HTTP/1.1 200 ")
    await guest(shared, 51)  # a websocket to localhost


@SHARED
async def test_hostile_requests_get_400_no_traceback_and_metrics_stay_inside(shared: Deployment) -> None:
    for repeated in (b"Origin: https://localhost\r\nOrigin: https://evil.example\r\n", b"Upgrade: websocket\r\n"):
        for _ in range(5):
            answer = await shared.raw(4, UPGRADE + repeated + b"\r\n")
            assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    health = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n"
    closing = b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    for _ in range(5):
        assert (await shared.raw(4, health + closing, answers=2)).count(b"HTTP/1.1 200 ") == 2  # pipelined
    metrics_request = b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"
    assert (await shared.raw(4, metrics_request)).startswith(b"HTTP/1.1 404 ")
    # Still inside, on each node's own address, for the operator's scraper.
    assert (await http_get(shared.nodes[0].port, "/metrics", shared.nodes[0].host))[0] == 200
    assert_no_traceback(shared)


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


async def two_racers(
    service: Service, deployment: Deployment
) -> tuple[RaceClient, NodeProcess, RaceClient, NodeProcess]:
    """Ann and Bob through the balancer, each with the node it put them on: two nodes
    (leastconn gives Bob another node than Ann's)."""
    before = [await connections(node) for node in deployment.nodes]
    ann = await connect_through(service, deployment, "Ann")
    ann_node = await node_of(service, before)
    before = [await connections(node) for node in deployment.nodes]
    bob = await connect_through(service, deployment, "Bob")
    bob_node = await node_of(service, before)
    assert bob_node is not ann_node
    return ann, ann_node, bob, bob_node


async def killed(deployment: Deployment, node: NodeProcess) -> None:
    """SIGKILL ``node``; return once the balancer has taken it out (its log says so)."""
    node.signal(signal.SIGKILL)
    node.process.wait()
    deadline = time.monotonic() + 30
    while "is DOWN" not in deployment.log_text():
        assert time.monotonic() < deadline, deployment.log_text()
        await asyncio.sleep(0.2)


async def test_play_failover_and_resume_through_haproxy(service: Service, tmp_path: Path) -> None:
    async with deployed(service, tmp_path) as deployment:
        # Play through the balancer; leastconn puts the two racers on different nodes.
        ann, _, bob, bob_node = await two_racers(service, deployment)
        code = await open_race(ann, bob)
        await race_started(code, ann, bob)
        acked = await play_one(bob, code)
        await play_one(ann, code)

        # Bob's node dies. The readiness checks take it out: every new connection works.
        await killed(deployment, bob_node)
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


async def test_a_racer_goes_home_through_the_balancer_and_races_there(service: Service, tmp_path: Path) -> None:
    async with deployed(service, tmp_path, routes=True) as deployment:
        # Leastconn puts the two racers on different nodes; Bob is sent home to Ann's.
        ann, ann_node, bob, bob_node = await two_racers(service, deployment)
        code = await open_race(ann, bob)
        home = f"node{deployment.nodes.index(ann_node) + 1}"
        await eventually(lambda: bob.url.endswith(f"?home={home}"), what="Bob sent home")
        await eventually_async(lambda: connections(ann_node), lambda count: count == 2)
        await eventually_async(lambda: connections(bob_node), lambda count: count == 0)
        forwarded = (await metrics(ann_node))["solitaire_forwarded_requests_received_total"]
        await race_started(code, ann, bob)
        acked = await play_one(bob, code)
        await ann.wait_room(code, lambda mirror: mirror.version >= acked)
        assert (await metrics(ann_node))["solitaire_forwarded_requests_received_total"] == forwarded

        # The home dies: the balancer routes Bob's reconnection (home named) to a live node.
        await killed(deployment, ann_node)
        await bob.close()
        bob = await RaceClient.connect(bob.url, "Bob", resume=bob.resume, reconnect=False)
        service.clients.append(bob)
        mirror = await bob.wait_room(code, lambda m: racing(m, 1), timeout=NODE_TTL * 4 + 10)
        assert mirror.version >= acked
        assert await play_one(bob, code) > acked


@SHARED
async def test_one_address_holding_unfinished_heads_and_silent_sockets_leaves_anothers_openings_alone(
    shared: Deployment,
) -> None:
    held: list[asyncio.StreamWriter] = []
    for n in range(150):
        _, writer = await asyncio.open_connection(FRONT, shared.plain_port, local_addr=("127.0.9.1", 0))
        if n % 2:
            writer.write(UPGRADE[:40])  # a head that never ends
        held.append(writer)
    try:
        for n in range(5):
            await guest(shared, 20 + n)
    finally:
        for writer in held:
            writer.close()


async def test_with_redis_stopped_the_quick_match_loop_logs_a_line_not_tracebacks(
    embedded: EmbeddedRedis, service: Service, tmp_path: Path
) -> None:
    """Finding 12 (issue 29): with Redis down, the quick-match loop logged a 60-line
    traceback up to four times a second (and every node's log got one-line warnings)."""
    async with deployed(service, tmp_path) as deployment:
        racer = await guest(deployment, 61)
        assert isinstance(await racer.request(partial(QuickMatch, variant="antares")), Ack)
        nodes = deployment.nodes
        holders = await eventually(lambda: [n for n in range(3) if "runs matcher" in nodes[n].log.read_text()])
        (matcher,) = holders
        logged = [node.log.stat().st_size for node in nodes]
        await embedded.stop()

        def since(n: int) -> str:
            return nodes[n].log.read_bytes()[logged[n] :].decode(errors="replace")

        # The loop runs until the matcher's next try to renew its lease fails (a turn or two),
        # and every node's readiness fails: the balancer takes each out after two checks.
        await eventually(lambda: "lease matcher: " in since(matcher), what="the matcher lease to lapse")
        down = [f"replicas/node{k} is DOWN" for k in (1, 2, 3)]
        await eventually(lambda: all(line in deployment.log_text() for line in down), what="every node taken out")
        for n in range(3):
            lines = since(n).splitlines()
            assert all(re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ [A-Z]+ ", line) for line in lines), since(n)
            assert len([line for line in lines if "quick match " in line]) <= (n == matcher), lines
