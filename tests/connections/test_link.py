"""What a link is sent goes to its sink: a real websocket (frames in order, a slow consumer
closed past its write buffer cap), the relay to the node holding the connection, or a list."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import weakref
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from protocol.errors import CloseCode
from server.connections.limits import Offences, TokenBucket
from server.connections.link import ClientLink, RelaySink, WebSocketSink, send_to_all
from tests.doubles.sinks import listening_link
from tests.polling import eventually

pytestmark = pytest.mark.asyncio


@contextlib.asynccontextmanager
async def websocket_link(write_cap: int) -> AsyncIterator[tuple[ClientLink, list[bytes]]]:
    """A link on the server end of a real websocket, and the frames its client received."""
    accepted: asyncio.Queue[ServerConnection] = asyncio.Queue()
    received: list[bytes] = []

    async def handler(socket: ServerConnection) -> None:
        accepted.put_nowait(socket)
        await socket.wait_closed()

    async def read(client: ClientConnection) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for frame in client:
                assert isinstance(frame, bytes)
                received.append(frame)

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        async with connect(f"ws://127.0.0.1:{port}", max_size=None) as client:
            link = ClientLink(await accepted.get(), TokenBucket(10, 10), Offences(10, 1.0), write_cap=write_cap)
            reader = asyncio.create_task(read(client))
            try:
                yield link, received
            finally:
                await client.close()
                await reader


class Relayed:
    """A relay that keeps each call: the ids of the links it names, and the frame."""

    def __init__(self) -> None:
        self.calls: list[tuple[list[int], bytes]] = []

    def relay(self, links: list[ClientLink], frame: bytes) -> None:
        self.calls.append(([link.id for link in links], frame))


async def test_frames_reach_the_websocket_in_the_order_sent() -> None:
    async with websocket_link(write_cap=1 << 20) as (link, received):
        assert isinstance(link.sink, WebSocketSink)
        for n in range(5):
            link.send_frame(bytes([n]) * 10)
        await eventually(lambda: len(received) == 5)
        assert received == [bytes([n]) * 10 for n in range(5)]


async def test_a_client_that_does_not_read_is_closed_past_the_write_buffer_cap() -> None:
    """Frames keep being queued without waiting; once more than the cap waits to be written,
    the connection is closed as a slow consumer and nothing more is queued for it."""
    async with websocket_link(write_cap=4096) as (link, _):
        frame = os.urandom(65536)  # compression would shrink a repeated byte to nothing
        for _ in range(256):  # more than loopback socket buffers take at once
            link.send_frame(frame)
        await eventually(lambda: link.dropped, what="the slow consumer's close")
        assert link.socket is not None
        assert link.socket.close_code in (None, CloseCode.SLOW_CONSUMER)
        link.send_frame(frame)
        assert not link.socket.protocol.data_to_send()


async def test_a_relayed_link_sends_through_its_relay_and_many_go_as_one_message() -> None:
    relay = Relayed()
    far = [ClientLink(None, TokenBucket(1, 1), Offences(1, 1.0), relay=relay, id=n) for n in (11, 12)]
    assert isinstance(far[0].sink, RelaySink)
    far[0].send_frame(b"one")
    near, near_sink = listening_link("p1")
    send_to_all([far[0], near, far[1]], b"all")
    assert relay.calls == [([11], b"one"), ([11, 12], b"all")]
    assert near_sink.frames == [b"all"]


async def test_a_relayed_link_let_go_is_freed_at_once() -> None:
    """A proxy of another node's connection and its sink make no cycle: dropping the last
    reference frees it without waiting for the cyclic collector."""
    gc.disable()
    try:
        link = ClientLink(None, TokenBucket(1, 1), Offences(1, 1.0), relay=Relayed(), id=7)
        gone = weakref.ref(link)
        del link
        assert gone() is None
    finally:
        gc.enable()


async def test_a_link_closed_by_the_server_is_sent_nothing_more() -> None:
    link, sink = listening_link("p1")
    link.send_frame(b"before")
    link.close(CloseCode.SLOW_CONSUMER, "too slow")
    link.send_frame(b"after")
    send_to_all([link], b"after")
    assert link.dropped
    assert sink.frames == [b"before"]
    assert sink.closed_with == (CloseCode.SLOW_CONSUMER, "too slow")
