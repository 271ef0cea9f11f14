"""The web page goes home (PROTOCOL.md, "Going home"), in a real browser behind the shipped
balancer (server/deploy/haproxy.cfg): three nodes of one service, each named at the balancer
(``--route``); Ann's room runs on one, Bob's page is balanced to another, and once seated
it moves its connection to the room's node (``?home=``) and races there, Ann never seeing
him drop; a page watching a room goes home too, and watches it again there. Skipped without
``haproxy`` or ``openssl`` (.ci/run installs them)."""

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
from protocol.messages import CreateRoom, Joined, JoinRoom, RacerConnection, Ready, RoomOptions, ServerMessage, Update
from tests.in_process_server import fresh_prefix
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.nodes.test_service import play_one, racing
from tests.web.conftest import NODE_TTL, ServersStopping, ThreadedServer, shot
from tests.web.test_browser import WAIT, play_line

pytestmark = pytest.mark.slow


@pytest.fixture
def balanced(
    redis_url: str, servers_stopping: ServersStopping, tmp_path: Path
) -> Iterator[tuple[list[ThreadedServer], int]]:
    """Nodes ``node1`` to ``node3`` on addresses of their own behind the balancer, and its plain port."""
    prefix = fresh_prefix()
    with contextlib.ExitStack() as stack:
        nodes = []
        for k, host in enumerate(NODE_HOSTS):
            node = ThreadedServer(
                redis_url, host=host, prefix=prefix, node_ttl=NODE_TTL, deal=str(ANTARES_DEAL),
                trusted_proxies=(ipaddress.ip_network(SOURCE),), route=f"node{k + 1}",
            )  # fmt: skip
            stack.callback(node.close)
            nodes.append(node)
        stack.callback(servers_stopping.begin)
        plain, tls = distinct_free_ports([FRONT, FRONT])
        servers = [(host, node.port) for host, node in zip(NODE_HOSTS, nodes, strict=True)]
        try:
            pem = certificate(tmp_path / "certs")
            stack.enter_context(haproxy(environment(plain, tls, pem, servers), tmp_path / "haproxy.log"))
        except Missing as missing:
            pytest.skip(str(missing))
        yield nodes, plain


def test_a_page_seated_through_another_node_goes_home_and_races_there(
    balanced: tuple[list[ThreadedServer], int], bob: Any
) -> None:
    (nodes, port), first = balanced, balanced[0][0]
    ann, code, seen_by_ann = first.call(open_room(port))
    sockets = watched_sockets(bob)
    bob.goto(f"http://{FRONT}:{port}/r/{code}")
    bob.wait_for_selector("#join-form", timeout=WAIT)
    bob.click("#join")
    bob.wait_for_selector(".racer-panel.me", timeout=WAIT)
    # Balanced to another node (leastconn: Ann holds one), then home, the first socket let go.
    went_home(bob, sockets, home_of(nodes, ann))

    bob.click("#ready")
    first.call(ann.request(lambda i: Ready(id=i, room=code)))
    bob.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    play_line(bob, list(winning_line()[:3]))
    shot(bob, "going-home-race")
    assert [socket.is_closed() for socket in sockets] == [True, False]
    drops = [event for message in seen_by_ann if isinstance(message, Update) for event in message.events]
    assert not [event for event in drops if isinstance(event, RacerConnection) and not event.connected]
    first.call(ann.close())


def test_a_watching_page_goes_home_and_still_sees_the_race(
    balanced: tuple[list[ThreadedServer], int], page: Any
) -> None:
    (nodes, port), first = balanced, balanced[0][0]
    ann, code, _ = first.call(open_room(port))
    robo = first.call(open_room(port, code))[0]
    sockets = watched_sockets(page)
    page.goto(f"http://{FRONT}:{port}/#/watch/{code}")  # leastconn: the node neither racer is on
    went_home(page, sockets, home_of(nodes, ann))
    for racer in (ann, robo):
        first.call(racer.request(lambda i: Ready(id=i, room=code)))
    first.call(ann.wait_room(code, lambda mirror: racing(mirror, 0), timeout=15))
    first.call(play_one(ann, code))
    # The hello gives back seats, not watched rooms: the page watches again on its new socket.
    page.wait_for_function(
        "() => [...document.querySelectorAll('.racer-panel')].some(panel => Number(panel.dataset.moves) >= 1)",
        timeout=WAIT,
    )
    for racer in (ann, robo):
        first.call(racer.close())


async def open_room(port: int, code: str | None = None) -> tuple[RaceClient, str, list[ServerMessage]]:
    """A racer through the balancer (once it serves) who creates an Antares room for two, or
    joins room ``code``; the room, and what the racer is sent."""
    deadline = time.monotonic() + 20
    while True:  # until the balancer's health checks see the nodes up
        try:
            racer = await RaceClient.connect(f"ws://{FRONT}:{port}", "Robo" if code else "Ann", reconnect=False)
            break
        except OSError:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.2)
    seen: list[ServerMessage] = []
    racer.listen(lambda _room, message: seen.append(message))
    if code is None:
        options = RoomOptions(max_racers=2)
        joined = await racer.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
    else:
        joined = await racer.request(lambda i: JoinRoom(id=i, room=code))
    assert isinstance(joined, Joined)
    return racer, joined.room, seen


def watched_sockets(page: Any) -> list[Any]:
    """The websockets ``page`` opens from now on, in order."""
    sockets: list[Any] = []
    page.on("websocket", lambda socket: sockets.append(socket))
    return sockets


def went_home(page: Any, sockets: list[Any], home: str) -> None:
    """Wait until ``page`` opened a socket to ``home`` and closed its first, to another node."""
    until(page, lambda: any(socket.url.endswith(f"?home={home}") for socket in sockets), f"a socket to {home}")
    assert not sockets[0].url.endswith(f"?home={home}")
    until(page, lambda: sockets[0].is_closed(), "the first socket to close")


def home_of(nodes: list[ThreadedServer], racer: RaceClient) -> str:
    """The route of the node ``racer`` is connected to (a room runs where it was created)."""
    for k, node in enumerate(nodes):
        assert node.server.ctx is not None
        if racer.player in node.server.ctx.by_player:
            return f"node{k + 1}"
    raise AssertionError("the racer is on no node")


def until(page: Any, probe: Callable[[], bool], what: str) -> None:
    """Wait until ``probe()`` holds, letting Playwright deliver the page's events meanwhile."""
    deadline = time.monotonic() + WAIT / 1000
    while not probe():
        assert time.monotonic() < deadline, f"waited in vain for {what}"
        page.wait_for_timeout(50)
