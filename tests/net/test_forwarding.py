"""The owner's side of forwarding: a relayed request keeps its client's address, and the log
lines each client's request can cause (on a dropped proxy, or in a storage outage) are
limited: a flood of them writes a few lines, one kind of failure not hiding another. The
post: what arrives before the router reads it waits, in order, and one message the router
fails to handle does not stop the next. The answers awaited (server/net/answers.py): each one
late is checked, whatever else waits, and fails once its owner is seen to stop beating. A seat
a hello could not give back is given back later."""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from functools import partial
from typing import cast

import pytest

from protocol.codec import encode
from protocol.messages import CreateRoom, Joined, ListRooms, RoomOptions, Snapshot
from server.cluster.cluster import Cluster
from server.cluster.inbox import Done, Gone, Message, Request
from server.cluster.node import Node
from server.cluster.node_mail import NodeMail
from server.connections.link import ClientLink
from server.net import forwarding
from server.net.answers import Answers
from server.ops.log_limits import LogLimiter
from server.storage.connection import Storage, StoreUnavailable
from server.storage.nodes import NodeStore
from tests.end_to_end.conftest import RunningServer, ServerFactory
from tests.polling import eventually

pytestmark = pytest.mark.asyncio

#: A node that went silent, whose clients' requests still arrive.
GONE = "gone-node"


async def outage(*args: object) -> None:
    raise StoreUnavailable("storage unavailable: a test's outage")


def forwarding_router(server: RunningServer) -> forwarding.Router:
    router = server.server.router
    assert router is not None
    return router


async def test_a_flood_of_unserved_requests_writes_a_few_lines(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    router = forwarding_router(server)
    # Time stands still for its limiter: the flood takes as long as a loaded machine makes it.
    monkeypatch.setattr(router, "_log", LogLimiter(forwarding.logger, clock=lambda: 0.0))
    caplog.set_level(logging.INFO, logger="server.nodes")
    seq = itertools.count(1)
    frame = encode(ListRooms(id=1))

    def request(link: int) -> Request:
        return Request(GONE, link, next(seq), f"p{link}", f"Player {link}", False, frame)

    # 1,000 requests on proxies dropped when their node went silent: each is sent to reconnect.
    for link in range(1000):
        router.proxies.get(GONE, link, f"p{link}", f"Player {link}", False)
    assert len(router.proxies.silenced({GONE}, time.monotonic())) == 1000
    for link in range(1000):
        await router._serve(request(link))
    # 1,000 requests in a storage outage.
    monkeypatch.setattr(forwarding, "dispatch", outage)
    for link in range(1000, 2000):
        await router._serve(request(link))
    # 1,000 clients whose rooms' server went away, and whose seats cannot be read.
    monkeypatch.setattr(router.node.store, "seats", outage)
    for link in range(2000, 3000):
        await router._follow_again(router.proxies.get(GONE, link, f"p{link}", f"Player {link}", False), {GONE})

    lines = [r for r in caplog.records if r.name == "server.nodes"]
    dropped = [r for r in lines if "a request on a dropped proxy of node gone-node" in r.getMessage()]
    unserved = [r for r in lines if "forwarded request not served" in r.getMessage()]
    not_followed = [r for r in lines if "rooms not followed again" in r.getMessage()]
    for kind, level in ((dropped, logging.INFO), (unserved, logging.WARNING), (not_followed, logging.WARNING)):
        assert 1 <= len(kind) <= 2
        assert kind[0].levelno == level
    assert len(lines) == len(dropped) + len(unserved) + len(not_followed)


async def test_a_relayed_request_carries_its_clients_address_for_the_owners_limits(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    router = forwarding_router(server)
    seen: list[str] = []

    async def served(ctx: object, link: ClientLink, message: object, frame: bytes | None = None) -> None:
        seen.append(link.address)

    monkeypatch.setattr(forwarding, "dispatch", served)
    frame = encode(ListRooms(id=1))
    await router._serve(Request("other-node", 1, 1, "p1", "Ann", False, frame, "198.51.100.7"))
    await router._serve(Request("other-node", 2, 2, "p2", "Bob", False, frame))  # from an older node
    assert seen == ["198.51.100.7", "unknown"]


async def test_what_arrives_before_it_is_read_waits_in_order(store: Storage) -> None:
    nodes, secret = NodeStore(store), b"the service's secret"
    here, there = NodeMail(nodes, "here", secret), NodeMail(nodes, "there", secret)
    node = Node(nodes, "127.0.0.1:1", 5.0, "here", f"127.0.0.1:{await here.peers.start('127.0.0.1', 0)}")
    await node.start()
    try:
        for link in range(3):
            here.post("here", Gone("here", link))  # to itself
        assert await here.arrived() == [Gone("here", link) for link in range(3)]  # all in one read
        for link in range(100):
            there.post("here", Gone("there", link))  # on the direct link
        arrived: list[Message] = []
        async with asyncio.timeout(30):  # a guard against a hang, not a measurement
            while len(arrived) < 100:
                arrived += await here.arrived()
        assert arrived == [Gone("there", link) for link in range(100)]
    finally:
        await there.close()
        await here.close()
        await node.stop()


async def test_a_message_the_router_fails_to_handle_does_not_stop_the_next(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    router = forwarding_router(server)
    handled: list[Done] = []

    def arrived(done: Done) -> None:
        if done.seq == 1:
            raise RuntimeError("a bug in handling one message")
        handled.append(done)

    monkeypatch.setattr(router.answers, "arrived", arrived)
    for seq in (1, 2, 3):
        router.mail.post(router.node.id, Done(seq, False))
    await eventually(lambda: len(handled) == 2, what="the messages after the failing one")
    assert [done.seq for done in handled] == [2, 3]
    assert any("a message from a node was not handled" in r.getMessage() for r in caplog.records)


class _Beating:
    """The cluster's view of which nodes beat, as :class:`Answers` asks it: ``living`` do."""

    def __init__(self, living: set[str]) -> None:
        self.living = living

    async def alive(self, nodes: set[str], fresh: float = 0.5) -> set[str]:
        return nodes & self.living


async def test_late_answers_are_each_checked_and_those_from_a_silent_owner_fail() -> None:
    # A timeout far past the test's guard: a failure can only come from the owner's check.
    answers = Answers(cast(Cluster, _Beating({"live"})), timeout=600.0)
    owners = {1: "silent", 2: "live", 3: "silent", 4: "live"}
    futures = {seq: answers.expect(seq) for seq in owners}
    waits = {seq: asyncio.ensure_future(answers.wait(seq, futures[seq], owner)) for seq, owner in owners.items()}
    async with asyncio.timeout(30):  # a guard against a hang, not a measurement
        await asyncio.wait([waits[1], waits[3]])
        for seq in (1, 3):
            with pytest.raises(TimeoutError):
                waits[seq].result()
        # A live owner's answers are still awaited.
        assert not waits[2].done()
        assert not waits[4].done()
        answers.arrived(Done(4, False))
        answers.arrived(Done(2, True))
        assert await waits[2] == Done(2, True)
        assert await waits[4] == Done(4, False)


async def test_an_answer_in_time_is_returned_and_a_later_one_still_checked() -> None:
    answers = Answers(cast(Cluster, _Beating(set())), timeout=600.0)
    first = answers.expect(1)
    answers.arrived(Done(1, False))
    assert await answers.wait(1, first, "silent") == Done(1, False)
    # The shared check goes on for the requests after it.
    later = answers.expect(2)
    async with asyncio.timeout(30):  # a guard against a hang, not a measurement
        with pytest.raises(TimeoutError):
            await answers.wait(2, later, "silent")


async def test_a_seat_the_hello_missed_is_given_back_once_its_room_has_an_owner(
    start_server: ServerFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A racer back while their room's owner is dead and its lease not yet run out: the hello
    cannot give the seat back. It is given back as soon as it can be (joined, then a
    snapshot), not left for the grace period to resign a connected player."""
    async with start_server(node_ttl=0.5) as srv:
        ann = await srv.raw()
        welcome = await ann.hello("Ann")
        created = await ann.request(partial(CreateRoom, variant="scorpion", options=RoomOptions()))
        assert isinstance(created, Joined)
        await ann.close()
        # Once the server has seen her go (which reads the room), the room runs nowhere.
        await eventually(lambda: all(link.player != welcome.player for link in srv.hub.links), what="Ann gone")
        await srv.hub.rooms.let_go(created.room)
        locator = forwarding_router(srv).locator
        real = locator.locate
        calls = 0

        async def owner_silent_at_first(code: str) -> str | None:
            """The hello's tries find an owner that does not answer; the later ones find none."""
            nonlocal calls
            calls += 1
            if calls <= 3:
                raise StoreUnavailable(f"storage unavailable: room {code}'s server does not answer")
            return await real(code)

        monkeypatch.setattr(locator, "locate", owner_silent_at_first)
        back = await srv.raw()
        await back.hello("Ann", resume=welcome.resume)
        joined = await back.wait_for(lambda m: isinstance(m, Joined) and m.room == created.room)
        assert isinstance(joined, Joined)
        assert (joined.role, joined.seat) == ("racer", 0)
        assert joined.id == 0  # given back after the hello, not in answer to it
        snapshot = await back.wait_for(lambda m: isinstance(m, Snapshot) and m.room == created.room)
        assert isinstance(snapshot, Snapshot)
        assert calls >= 3  # the hello's tries all failed: the seat came back after it
