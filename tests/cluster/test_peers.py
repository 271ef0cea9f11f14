"""Direct links between nodes (real sockets on loopback): batches arrive in order, a node
that cannot be reached is written to on Redis instead, and only nodes of the service get in."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
import pytest_asyncio

from server.cluster import peers
from server.cluster.peers import PeerLinks, link_key
from tests.polling import eventually

KEY = link_key(b"the service's secret")


@dataclass
class Peer:
    """A node's links, with what reached it and what it handed to Redis."""

    name: str
    key: bytes = KEY
    addresses: dict[str, str | None] = field(default_factory=dict)
    delivered: list[bytes] = field(default_factory=list)
    by_redis: list[tuple[str, list[bytes]]] = field(default_factory=list)
    links: PeerLinks | None = None
    port: int = 0
    lookup_fails: bool = False

    async def start(self) -> Peer:
        async def address_of(node: str) -> str | None:
            if self.lookup_fails:
                raise ConnectionError("Redis is out of reach")
            return self.addresses.get(node)

        self.links = PeerLinks(
            self.name, self.key, address_of, self.delivered.append, lambda n, b: self.by_redis.append((n, b))
        )
        self.port = await self.links.start("127.0.0.1", 0)
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def send(self, node: str, data: bytes) -> bool:
        assert self.links is not None
        return self.links.send(node, data)


@pytest_asyncio.fixture
async def pair() -> AsyncIterator[tuple[Peer, Peer]]:
    a, b = await Peer("a").start(), await Peer("b").start()
    a.addresses["b"], b.addresses["a"] = b.address, a.address
    yield a, b
    for peer in (a, b):
        assert peer.links is not None
        await peer.links.close()


@pytest.mark.asyncio
async def test_batches_arrive_in_order_on_one_link(pair: tuple[Peer, Peer]) -> None:
    a, b = pair
    sent = [f"batch {i}".encode() * (1 + i % 7) for i in range(500)]
    for data in sent:
        assert a.send("b", data)  # the first ones wait while the link opens
    await eventually(lambda: len(b.delivered) == len(sent), what="every batch")
    assert b.delivered == sent
    assert a.by_redis == []
    assert b.send("a", b"and back")
    await eventually(lambda: a.delivered == [b"and back"], what="the answer")


@pytest.mark.asyncio
async def test_a_node_without_a_peer_address_is_sent_to_on_redis_for_good(pair: tuple[Peer, Peer]) -> None:
    a, _ = pair
    a.addresses["old"] = None  # a node of an earlier version: it only has an inbox
    assert a.send("old", b"1")  # waits while its address is looked up
    assert a.send("old", b"2")
    await eventually(lambda: a.by_redis, what="the fallback")
    assert a.by_redis == [("old", [b"1", b"2"])]
    assert not a.send("old", b"3")  # from now on the caller publishes it


@pytest.mark.asyncio
async def test_an_unreachable_node_is_sent_to_on_redis(pair: tuple[Peer, Peer]) -> None:
    a, _ = pair
    closed = await Peer("gone").start()
    assert closed.links is not None
    await closed.links.close()  # nothing listens on its port any more
    a.addresses["gone"] = closed.address
    assert a.send("gone", b"hello?")
    await eventually(lambda: a.by_redis, what="the fallback")
    assert a.by_redis == [("gone", [b"hello?"])]


@pytest.mark.asyncio
async def test_a_node_without_the_services_key_delivers_nothing(pair: tuple[Peer, Peer]) -> None:
    _, b = pair
    stranger = await Peer("a", key=link_key(b"another secret")).start()
    stranger.addresses["b"] = b.address
    try:
        assert stranger.send("b", b"let me in")
        await asyncio.sleep(0.3)
        assert b.delivered == []
        assert b.links is not None
        await eventually(lambda: not b.links._in, what="the stranger's link closed")  # type: ignore[union-attr]
    finally:
        assert stranger.links is not None
        await stranger.links.close()


async def _closed_by_peer(reader: asyncio.StreamReader) -> bytes:
    """Everything the listening node says before it closes the connection."""
    return await asyncio.wait_for(reader.read(), timeout=5)


@pytest.mark.asyncio
async def test_garbage_or_silence_gets_the_connection_closed(
    pair: tuple[Peer, Peer], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, b = pair
    monkeypatch.setattr(peers, "HELLO_SECONDS", 0.2)
    reader, writer = await asyncio.open_connection("127.0.0.1", b.port)
    writer.write(b"\x00\x00\x00\x05hello")  # a frame, but not a hello
    challenge = await _closed_by_peer(reader)
    assert len(challenge) == 4 + 16  # it said its challenge, then hung up
    silent_reader, silent = await asyncio.open_connection("127.0.0.1", b.port)
    assert len(await _closed_by_peer(silent_reader)) == 4 + 16
    huge_reader, huge = await asyncio.open_connection("127.0.0.1", b.port)
    huge.write((peers.MAX_FRAME + 1).to_bytes(4, "big"))
    await _closed_by_peer(huge_reader)
    assert b.delivered == []
    for w in (writer, silent, huge):
        w.close()
        with contextlib.suppress(ConnectionError):
            await w.wait_closed()


@pytest.mark.asyncio
async def test_a_broken_link_is_opened_again_by_the_next_batch(pair: tuple[Peer, Peer]) -> None:
    a, b = pair
    assert a.send("b", b"first")
    await eventually(lambda: b.delivered == [b"first"], what="the first batch")
    assert b.links is not None
    for link in list(b.links._in):
        link.close()  # the receiving side drops the link (a network cut)
    await eventually(lambda: "b" not in a.links._out, what="the link seen broken")  # type: ignore[union-attr]
    assert a.send("b", b"second")
    await eventually(lambda: b.delivered == [b"first", b"second"], what="the batch on a new link")
    assert a.by_redis == []


@pytest.mark.asyncio
async def test_a_failed_address_look_up_is_tried_again_by_the_next_batch(pair: tuple[Peer, Peer]) -> None:
    a, b = pair
    a.lookup_fails = True  # where addresses are kept (Redis) is out of reach: so is the inbox
    assert a.send("b", b"lost with Redis")
    await eventually(lambda: "b" not in a.links._out, what="the attempt given up")  # type: ignore[union-attr]
    a.lookup_fails = False
    assert a.send("b", b"after")
    await eventually(lambda: b.delivered == [b"after"], what="the batch on the link")
    assert a.by_redis == []  # the node is not given up for good: it was never unreachable


@pytest.mark.asyncio
async def test_a_node_that_stopped_beating_is_forgotten(pair: tuple[Peer, Peer]) -> None:
    a, b = pair
    assert a.send("b", b"hello")
    await eventually(lambda: b.delivered == [b"hello"], what="the batch")
    assert a.links is not None
    assert b.links is not None
    a.links.forget("b")
    assert "b" not in a.links._out
    await eventually(lambda: not b.links._in, what="the link closed")  # type: ignore[union-attr]
