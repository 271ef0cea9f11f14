"""The web page goes home (PROTOCOL.md, "Going home"), in a real browser behind the shipped
balancer (server/deploy/haproxy.cfg): two nodes of one service, each named at the balancer
(``--route``); Ann's room runs on one, Bob's page is balanced to the other, and once seated
it moves its connection to the room's node (``?home=``) and races there, Ann never seeing
him drop. Skipped without ``haproxy`` or ``openssl`` (.ci/run installs them)."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.lib.balancer import FRONT, NODE_HOSTS, SOURCE, Missing, certificate, environment, haproxy
from bench.lib.spawn import distinct_free_ports
from client.lib.connection import RaceClient
from protocol.messages import CreateRoom, Joined, RacerConnection, Ready, RoomOptions, ServerMessage, Update
from tests.in_process_server import fresh_prefix
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.web.conftest import NODE_TTL, ServersStopping, ThreadedServer, shot
from tests.web.test_browser import WAIT, play_line

pytestmark = pytest.mark.slow


@pytest.fixture
def balanced(
    redis_url: str, servers_stopping: ServersStopping, tmp_path: Path
) -> Iterator[tuple[list[ThreadedServer], int]]:
    """Nodes ``node1`` and ``node2`` on addresses of their own behind the balancer, and its plain port."""
    prefix = fresh_prefix()
    with contextlib.ExitStack() as stack:
        nodes = []
        for k, host in enumerate(NODE_HOSTS[:2]):
            node = ThreadedServer(
                redis_url, host=host, prefix=prefix, node_ttl=NODE_TTL, deal=str(ANTARES_DEAL),
                trusted_proxies=(ipaddress.ip_network(SOURCE),), route=f"node{k + 1}",
            )  # fmt: skip
            stack.callback(node.close)
            nodes.append(node)
        stack.callback(servers_stopping.begin)
        plain, tls = distinct_free_ports([FRONT, FRONT])
        # The config has three server lines: the third is node2 again (no route names it).
        servers = [(host, node.port) for host, node in zip(NODE_HOSTS, nodes, strict=False)]
        try:
            pem = certificate(tmp_path / "certs")
            stack.enter_context(haproxy(environment(plain, tls, pem, [*servers, servers[1]]), tmp_path / "haproxy.log"))
        except Missing as missing:
            pytest.skip(str(missing))
        yield nodes, plain


def test_a_page_seated_through_another_node_goes_home_and_races_there(
    balanced: tuple[list[ThreadedServer], int], bob: Any
) -> None:
    nodes, port = balanced
    front = f"{FRONT}:{port}"
    first = nodes[0]

    async def open_room() -> tuple[RaceClient, str, list[ServerMessage]]:
        deadline = time.monotonic() + 20
        while True:  # until the balancer's health checks see the nodes up
            try:
                ann = await RaceClient.connect(f"ws://{front}", "Ann", reconnect=False)
                break
            except OSError:
                assert time.monotonic() < deadline
                await asyncio.sleep(0.2)
        seen: list[ServerMessage] = []
        ann.listen(lambda _room, message: seen.append(message))
        joined = await ann.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=2)))
        assert isinstance(joined, Joined)
        return ann, joined.room, seen

    ann, code, seen_by_ann = first.call(open_room())
    home = next(f"node{k + 1}" for k, node in enumerate(nodes) if node.server.ctx and ann_here(node, ann))
    sockets: list[Any] = []
    bob.on("websocket", lambda socket: sockets.append(socket))
    bob.goto(f"http://{front}/r/{code}")
    bob.wait_for_selector("#join-form", timeout=WAIT)
    bob.click("#join")
    bob.wait_for_selector(".racer-panel.me", timeout=WAIT)
    # Balanced to the other node (leastconn: Ann holds one), then home, the first socket let go.
    until(bob, lambda: any(socket.url.endswith(f"?home={home}") for socket in sockets), f"a socket to {home}")
    assert not sockets[0].url.endswith(f"?home={home}")
    until(bob, lambda: sockets[0].is_closed(), "the first socket to close")

    bob.click("#ready")
    first.call(ann.request(lambda i: Ready(id=i, room=code)))
    bob.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    play_line(bob, list(winning_line()[:3]))
    shot(bob, "going-home-race")
    assert [socket.is_closed() for socket in sockets] == [True, False]
    drops = [event for message in seen_by_ann if isinstance(message, Update) for event in message.events]
    assert not [event for event in drops if isinstance(event, RacerConnection) and not event.connected]
    first.call(ann.close())


def until(page: Any, probe: Callable[[], bool], what: str) -> None:
    """Wait until ``probe()`` holds, letting Playwright deliver the page's events meanwhile."""
    deadline = time.monotonic() + WAIT / 1000
    while not probe():
        assert time.monotonic() < deadline, f"waited in vain for {what}"
        page.wait_for_timeout(50)


def ann_here(node: ThreadedServer, ann: RaceClient) -> bool:
    """Whether ``ann``'s connection is on ``node`` (the room runs where it was created)."""
    ctx = node.server.ctx
    assert ctx is not None
    return ann.player in ctx.by_player
