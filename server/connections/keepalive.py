"""Keepalive pings for every connection, from one task.

websockets' own keepalive is a task a connection, asleep between pings: about 1.1 KB of
every idle connection's memory. :class:`Keepalive` does the same work for all of them from
one task, which wakes :data:`SLOTS` times an interval and pings the connections whose turn it
is (a link's turn is its id modulo :data:`SLOTS`, so the pings of 10,000 connections are
spread over the interval instead of sent at once). A ping lives in a short task of its own
only until its pong arrives.

The contract is websockets': every connection is pinged once an ``interval``; one whose pong
does not come within ``timeout`` (a peer gone without a word, or a client that stopped
reading) is closed with 1011 "keepalive ping timeout", and its link is let go after
:data:`~server.connections.link.CLOSE_GRACE` seconds whatever the peer does. websockets keeps
measuring each connection's ``latency`` from the pongs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from functools import partial
from typing import Final

from websockets.exceptions import ConnectionClosed

from protocol.errors import CloseCode
from server.connections.link import ClientLink
from server.ops.metrics import CLOSES

#: Seconds between two pings of one connection (websockets' default).
PING_INTERVAL: Final = 20.0
#: Seconds a pong may take before the connection counts as gone (websockets' default).
PING_TIMEOUT: Final = 20.0
#: Batches an interval: the task wakes every ``interval / SLOTS`` seconds.
SLOTS: Final = 20


class Keepalive:
    """Pings the open connections among ``links`` (the live set, read at every turn)."""

    def __init__(
        self, links: Collection[ClientLink], interval: float = PING_INTERVAL, timeout: float = PING_TIMEOUT
    ) -> None:
        self.links = links
        self.interval = interval
        self.timeout = timeout
        #: Links with a ping in flight, and its task (kept from the GC; a link is pinged once
        #: at a time, so a slow pong never piles pings up).
        self._pinging: dict[ClientLink, asyncio.Task[None]] = {}

    async def run(self) -> None:
        """Ping forever (until cancelled, which also cancels the pings in flight)."""
        turn = 0
        try:
            while True:
                await asyncio.sleep(self.interval / SLOTS)
                self.ping_turn(turn)
                turn = (turn + 1) % SLOTS
        finally:
            for task in list(self._pinging.values()):
                task.cancel()

    def ping_turn(self, turn: int) -> None:
        """Ping every link whose turn ``turn`` is (0 to ``SLOTS - 1``) and has no ping in flight."""
        for link in self.links:  # no copy: creating a task runs none of it, so the set holds still
            if link.id % SLOTS == turn and link.socket is not None and link not in self._pinging:
                task = asyncio.create_task(self._ping(link))
                self._pinging[link] = task
                task.add_done_callback(partial(self._answered, link))

    def _answered(self, link: ClientLink, _: asyncio.Task[None]) -> None:
        del self._pinging[link]

    async def _ping(self, link: ClientLink) -> None:
        socket = link.socket
        assert socket is not None
        try:
            # The ping itself is inside the timeout: its write waits while the peer reads
            # nothing and the transport's buffer is full.
            async with asyncio.timeout(self.timeout):
                pong = await socket.ping()
                await pong
        except ConnectionClosed:
            pass
        except TimeoutError:
            CLOSES.labels("keepalive").inc()
            link.close(CloseCode.INTERNAL_ERROR, "keepalive ping timeout")
