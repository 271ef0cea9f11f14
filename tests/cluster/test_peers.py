"""Direct links between nodes (real sockets on loopback): batches arrive in order, a node
that cannot be reached is written to on Redis instead, and only nodes of the service get in;
a stranger costs a few hundred bytes, a few seconds and a slot of a few, and no log flood."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
import pytest_asyncio

from server.cluster import peers
from server.cluster.cluster import advertised_host, listen_for_peers, peer_listen_host
from server.cluster.peers import HELLO_LIMIT, MAX_UNKNOWN, PeerLinks, link_key
from server.config import Config
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
    hello_seconds: float = peers.HELLO_SECONDS
    max_unknown: int = MAX_UNKNOWN

    async def start(self) -> Peer:
        async def address_of(node: str) -> str | None:
            if self.lookup_fails:
                raise ConnectionError("Redis is out of reach")
            return self.addresses.get(node)

        self.links = PeerLinks(
            self.name,
            self.key,
            address_of,
            self.delivered.append,
            lambda n, b: self.by_redis.append((n, b)),
            hello_seconds=self.hello_seconds,
            max_unknown=self.max_unknown,
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
    """Everything the listening node says before it closes the connection (it may reset it
    when what was sent to it is left unread)."""
    said = bytearray()
    with contextlib.suppress(ConnectionError):
        while chunk := await asyncio.wait_for(reader.read(65536), timeout=10):
            said += chunk
    return bytes(said)


async def _hang_up(writer: asyncio.StreamWriter) -> None:
    writer.close()
    with contextlib.suppress(ConnectionError):
        await writer.wait_closed()


@pytest.mark.asyncio
async def test_garbage_or_silence_gets_the_connection_closed() -> None:
    b = await Peer("b", hello_seconds=0.2).start()
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
        await _hang_up(w)
    assert b.links is not None
    await b.links.close()


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


async def _stranger(peer: Peer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, peers._Incoming]:
    """A raw connection to ``peer``'s port, and the link it opened there."""
    links = peer.links
    assert links is not None
    before = set(links._in)
    reader, writer = await asyncio.open_connection("127.0.0.1", peer.port)
    link = await eventually(lambda: next(iter(links._in - before), None), what="the link accepted")
    return reader, writer, link


_MEGABYTE = 1024 * 1024


@pytest.mark.asyncio
@pytest.mark.parametrize(
    "first",
    [
        (HELLO_LIMIT - 16).to_bytes(4, "big"),  # a frame a hello could be, of junk
        peers.MAX_FRAME.to_bytes(4, "big"),  # the largest frame a known peer may send
        b"GET / HTTP/1.1\r\n",  # no frame at all: a 1.2 GB one, as it reads
    ],
    ids=["hello-sized", "largest-frame", "http"],
)
async def test_a_stranger_sending_a_megabyte_is_read_no_further_than_a_hello(
    pair: tuple[Peer, Peer], first: bytes
) -> None:
    _, b = pair
    reader, writer, link = await _stranger(b)
    transport = link.transport
    assert transport is not None
    writer.write(first + b"\xa5" * _MEGABYTE)
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    assert len(await _closed_by_peer(reader)) == 4 + 16  # its challenge, and nothing else
    await eventually(lambda: link.transport is None, what="the link lost")
    assert link.read_unknown <= HELLO_LIMIT  # the rest was never read from the socket
    assert not transport.is_reading()
    assert link._buffer == b""
    assert b.links is not None
    assert not b.links._in
    assert not b.links._unknown
    assert b.delivered == []
    await _hang_up(writer)


@pytest.mark.asyncio
async def test_a_silent_stranger_is_closed_at_the_hello_deadline(caplog: pytest.LogCaptureFixture) -> None:
    b = await Peer("b", hello_seconds=0.2).start()
    assert b.links is not None
    try:
        with caplog.at_level(logging.WARNING, logger="server.nodes"):
            reader, writer, link = await _stranger(b)
            assert len(await _closed_by_peer(reader)) == 4 + 16
            await eventually(lambda: link.transport is None, what="the link lost")
        assert not b.links._in
        assert not b.links._unknown
        assert [r.getMessage() for r in caplog.records if "no hello within 0.2 s" in r.getMessage()]
        await _hang_up(writer)
    finally:
        await b.links.close()


@pytest.mark.asyncio
async def test_past_the_unknown_links_cap_a_new_link_is_closed_at_once(pair: tuple[Peer, Peer]) -> None:
    a, b = pair
    assert a.links is not None
    assert b.links is not None
    assert a.send("b", b"before")  # a known link does not count against the cap
    await eventually(lambda: b.delivered == [b"before"], what="the first batch")
    strangers = [await _stranger(b) for _ in range(MAX_UNKNOWN)]
    for reader, _, _ in strangers:
        assert len(await asyncio.wait_for(reader.readexactly(4 + 16), timeout=10)) == 4 + 16
    assert len(b.links._unknown) == MAX_UNKNOWN
    one_more_reader, one_more = await asyncio.open_connection("127.0.0.1", b.port)
    assert await _closed_by_peer(one_more_reader) == b""  # not even a challenge
    assert len(b.links._unknown) == MAX_UNKNOWN
    assert a.send("b", b"during")
    await eventually(lambda: b.delivered == [b"before", b"during"], what="the batch on the known link")
    for _, writer, _ in strangers:
        await _hang_up(writer)
    await _hang_up(one_more)
    await eventually(lambda: not b.links._unknown, what="the strangers gone")  # type: ignore[union-attr]
    for link in list(b.links._in):
        link.close()  # a new link must get in now
    await eventually(lambda: "b" not in a.links._out, what="the link seen broken")  # type: ignore[union-attr]
    assert a.send("b", b"after")
    await eventually(lambda: b.delivered == [b"before", b"during", b"after"], what="the batch on a new link")
    assert a.by_redis == []


@pytest.mark.asyncio
async def test_a_thousand_strangers_log_a_few_lines(caplog: pytest.LogCaptureFixture) -> None:
    b = await Peer("b", hello_seconds=0.05).start()
    a = await Peer("a").start()
    a.addresses["b"] = b.address
    assert a.links is not None
    assert b.links is not None
    junk = (64).to_bytes(4, "big") + b"\x00" * 64
    what_they_send = [junk, (HELLO_LIMIT * 2).to_bytes(4, "big"), b""]  # a bad hello, a huge one, silence
    at_once = asyncio.Semaphore(4 * MAX_UNKNOWN)  # more than the cap: some are refused on arrival

    async def stranger(i: int) -> None:
        async with at_once:
            reader, writer = await asyncio.open_connection("127.0.0.1", b.port)
            writer.write(what_they_send[i % 3])
            await _closed_by_peer(reader)
            await _hang_up(writer)

    started = time.monotonic()
    with caplog.at_level(logging.WARNING, logger="server.nodes"):
        await asyncio.gather(*(stranger(i) for i in range(1000)))
    elapsed = time.monotonic() - started
    lines = [r for r in caplog.records if r.name == "server.nodes"]
    # One line per kind (bad, huge, late, refused) per 10 s interval of the limiter at most.
    assert 1 <= len(lines) <= 4 * (1 + int(elapsed // 10)), [r.getMessage() for r in lines]
    await eventually(lambda: not b.links._in, what="every stranger gone")  # type: ignore[union-attr]
    assert a.send("b", b"still here")  # a node of the service still gets in
    await eventually(lambda: b.delivered == [b"still here"], what="the batch")
    assert a.by_redis == []
    await a.links.close()
    await b.links.close()


@pytest.mark.parametrize(
    ("host", "peer_host", "advertise_host", "listens_on", "advertised"),
    [
        ("127.0.0.1", "", "", "127.0.0.1", "127.0.0.1"),
        ("0.0.0.0", "10.1.2.3", "", "10.1.2.3", "10.1.2.3"),
        ("0.0.0.0", "", "10.1.2.3", "10.1.2.3", "10.1.2.3"),
        ("0.0.0.0", "10.1.2.3", "node-1", "10.1.2.3", "node-1"),  # reached through a name
        ("::", "fd00::7", "", "fd00::7", "fd00::7"),
    ],
)
def test_the_peer_port_listens_on_an_internal_address_and_advertises_where_it_listens(
    host: str, peer_host: str, advertise_host: str, listens_on: str, advertised: str
) -> None:
    config = Config(host=host, peer_host=peer_host, advertise_host=advertise_host)
    assert peer_listen_host(config) == listens_on
    assert advertised_host(config) == advertised


async def _listening_on(config: Config) -> str:
    """The address a node with ``config`` opens its peer port on."""
    links = PeerLinks("a", KEY, lambda node: asyncio.sleep(0, None), lambda data: None, lambda node, batches: None)
    try:
        await listen_for_peers(links, config)
        assert links._server is not None
        return str(links._server.sockets[0].getsockname()[0])
    finally:
        await links.close()


@pytest.mark.asyncio
async def test_the_peer_port_listens_on_peer_host_or_refuses_to_start() -> None:
    assert await _listening_on(Config(host="0.0.0.0", peer_host="127.0.0.1")) == "127.0.0.1"
    with pytest.raises(OSError):  # 192.0.2.1, a documentation address, is no address of this machine
        await _listening_on(Config(host="127.0.0.1", peer_host="192.0.2.1"))


@pytest.mark.asyncio
async def test_an_advertise_host_of_another_machine_leaves_the_peer_port_on_host(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING, logger="server.nodes"):
        assert await _listening_on(Config(host="127.0.0.1", advertise_host="192.0.2.1")) == "127.0.0.1"
    assert any("set PEER_HOST" in record.getMessage() for record in caplog.records)
