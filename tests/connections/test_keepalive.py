"""Keepalive from one task: a client that answers pings stays connected and has its latency
measured; a peer that never answers is closed with 1011 and let go."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from server.connections.compact import CompactConnection
from server.connections.keepalive import SLOTS, Keepalive
from server.connections.limits import Offences, TokenBucket
from server.connections.link import ClientLink
from tests.polling import eventually

OPENING = (
    b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
)


class Served:
    """A websockets server (keepalive off, as the race server runs it) whose connections are
    links in ``links``, pinged by one :class:`Keepalive`."""

    def __init__(self) -> None:
        self.links: set[ClientLink] = set()
        self.ended: list[ClientLink] = []
        self.port = 0

    async def handler(self, socket: ServerConnection) -> None:
        link = ClientLink(socket, TokenBucket(10, 10), Offences(10, 1.0))
        self.links.add(link)
        try:
            await socket.wait_closed()
        finally:
            self.links.discard(link)
            self.ended.append(link)


@contextlib.asynccontextmanager
async def pinged(interval: float, timeout: float) -> AsyncIterator[Served]:
    served = Served()
    keepalive = Keepalive(served.links, interval, timeout)
    async with serve(served.handler, "127.0.0.1", 0, ping_interval=None, create_connection=CompactConnection) as server:
        served.port = server.sockets[0].getsockname()[1]
        task = asyncio.create_task(keepalive.run())
        try:
            yield served
        finally:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


@pytest.mark.asyncio
async def test_a_client_that_answers_pings_stays_connected_and_has_a_latency() -> None:
    # The client's own keepalive is off: what keeps it open is its answering our pings.
    async with (
        pinged(interval=0.2, timeout=0.2) as served,
        connect(f"ws://127.0.0.1:{served.port}", ping_interval=None) as client,
    ):
        await eventually(lambda: len(served.links) == 1)
        (link,) = served.links
        assert link.socket is not None
        await eventually(lambda: link.socket is not None and link.socket.latency > 0)
        await asyncio.sleep(1.0)  # five intervals, each over the timeout
        assert served.ended == []
        await client.send("still here")  # the connection still works both ways


@pytest.mark.asyncio
async def test_a_peer_that_never_answers_is_closed_with_1011() -> None:
    async with pinged(interval=0.2, timeout=0.3) as served:
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
        writer.write(OPENING)
        await reader.readuntil(b"\r\n\r\n")  # the handshake's answer; then silence
        await eventually(lambda: len(served.ended) == 1, timeout=5)
        assert served.ended[0].dropped
        sent = await reader.read()
        assert sent.startswith(b"\x89\x04")  # a ping, with its 4-byte payload
        assert b"\x88" in sent
        assert b"\x03\xf3keepalive ping timeout" in sent
        writer.close()


@pytest.mark.asyncio
async def test_the_pings_of_many_connections_are_spread_over_the_interval() -> None:
    async with pinged(interval=60, timeout=60) as served, contextlib.AsyncExitStack() as stack:
        for _ in range(SLOTS * 2):
            await stack.enter_async_context(connect(f"ws://127.0.0.1:{served.port}", ping_interval=None))
        await eventually(lambda: len(served.links) == SLOTS * 2)
        keepalive = Keepalive(served.links, 60, 60)
        keepalive.ping_turn(3)

        def answered() -> list[ClientLink]:
            return [link for link in served.links if link.socket is not None and link.socket.latency > 0]

        await eventually(lambda: len(answered()) == 2)  # one turn: a twentieth of them
        await asyncio.sleep(0.1)
        assert len(answered()) == 2
        assert all(link.id % SLOTS == 3 for link in answered())
