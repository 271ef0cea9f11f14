"""The accept loop: websocket openings wait their turn as bare sockets.

Left to itself, asyncio accepts every connection the kernel has queued and websockets starts
each one's handshake at once. A burst of thousands of openings then holds thousands of
half-open connections (their tasks, timeouts and buffers) that the garbage collector scans
again and again, and those scans paused other rooms' moves for 25-65 ms. :class:`OpeningLine`
takes that job over on the default (selector) event loop:

- it accepts as the kernel offers connections, and looks at what each has sent (without
  reading it; a silent one is given a second to speak): a plain HTTP request (``/healthz``,
  ``/readyz``, ``/metrics``, the web page) goes to websockets at once, so health checks keep
  answering through a burst;
- a websocket opening (or a connection that stays silent) waits in a line of bare
  sockets, which costs the collector nothing, and is handed to websockets one every
  ``interval`` seconds;
- past ``capacity`` waiting, a connection gets ``503`` with ``Retry-After`` at once.

It needs asyncio's own server (its protocol factory and its listening sockets); under uvloop
the server keeps websockets' accept and paces handshakes in :mod:`server.net.http` instead.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import socket
from collections.abc import Callable
from typing import Final

from server.ops.log_limits import LogLimiter
from server.ops.metrics import CLOSES
from server.ops.stopping import stop_tasks

logger = logging.getLogger("server.listener")

#: Connections taken off the kernel's queue in one wake-up, besides the first (more than
#: asyncio's batch in :mod:`server.net.edge`: here nothing is set up on accepting).
TAKEN_PER_WAKE: Final = 64
#: Connections the kernel holds before they are accepted (capped by ``net.core.somaxconn``).
LISTEN_QUEUE: Final = 1024
#: What the line looks at of a connection's first bytes to tell a plain request from an opening.
PEEK_BYTES: Final = 4096
#: The answer to a connection the line has no room for (it may retry after the given seconds).
BUSY_RESPONSE: Final = (
    b"HTTP/1.1 503 Service Unavailable\r\nConnection: close\r\nContent-Type: text/plain\r\n"
    b"Retry-After: 5\r\nContent-Length: 45\r\n\r\ntoo many connections opening; retry shortly\r\n"
)

#: How long a connection that has sent nothing may take to send its first bytes before it is
#: taken for an opening.
FIRST_BYTES_SECONDS: Final = 1.0

Factory = Callable[[], asyncio.Protocol]


def is_plain_request(first_bytes: bytes) -> bool:
    """True when ``first_bytes`` hold a whole HTTP request head with no ``Upgrade`` header.
    Anything else (nothing sent yet, a head cut short, any upgrade, however spelt) waits in
    the line, so no spelling of the header lets an opening skip it."""
    head, ended, _ = first_bytes.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")[1:]
    return bool(ended) and not any(line.split(b":", 1)[0].strip().lower() == b"upgrade" for line in lines)


def _peek(connection: socket.socket) -> bytes | None:
    """What ``connection`` has sent so far, left unread; None if it failed."""
    try:
        return connection.recv(PEEK_BYTES, socket.MSG_PEEK)
    except (BlockingIOError, InterruptedError):
        return b""
    except OSError:
        return None


class OpeningLine:
    """Accepts from ``listening`` (asyncio's listening sockets, no longer read by asyncio) and
    hands connections to ``factory`` (websockets' protocol), paced as the module says."""

    def __init__(self, factory: Factory, interval: float, capacity: int) -> None:
        self.factory, self.interval, self.capacity = factory, interval, capacity
        self._plain: collections.deque[socket.socket] = collections.deque()
        self._waiting: collections.deque[socket.socket] = collections.deque()
        self._undecided: dict[socket.socket, asyncio.TimerHandle] = {}
        self._log = LogLimiter(logger)
        self._arrived = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    def take_over(cls, server: asyncio.AbstractServer, interval: float, capacity: int) -> OpeningLine | None:
        """Stop asyncio accepting on ``server`` and accept through a new line instead; None
        (and asyncio keeps accepting) when ``server`` is not asyncio's own."""
        loop = asyncio.get_running_loop()
        factory = getattr(server, "_protocol_factory", None)
        sockets = getattr(server, "sockets", ())
        if factory is None or not isinstance(loop, asyncio.SelectorEventLoop) or not sockets:
            return None
        line = cls(factory, interval, capacity)
        for listening in sockets:
            loop.remove_reader(listening.fileno())
            # The same socket through a descriptor of our own: asyncio's wrapper hides accept().
            own = socket.socket(fileno=os.dup(listening.fileno()))
            own.setblocking(False)
            own.listen(LISTEN_QUEUE)
            line._tasks.append(asyncio.create_task(line._accept(own)))
        line._tasks.append(asyncio.create_task(line._hand_over_in_turn()))
        return line

    @property
    def waiting(self) -> int:
        return len(self._waiting)

    async def _accept(self, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    connection, _ = await loop.sock_accept(listening)
                    self._admit(connection)
                    # Then what else the kernel holds, up to a batch: taking a connection
                    # off its queue costs little now that nothing is set up.
                    for _ in range(TAKEN_PER_WAKE):
                        connection, _ = listening.accept()
                        connection.setblocking(False)
                        self._admit(connection)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError as error:  # out of descriptors, or the like
                    self._log.log(logging.WARNING, "accept", "accept failed: %s", error)
                    await asyncio.sleep(0.1)
        finally:
            listening.close()

    def _admit(self, connection: socket.socket) -> None:
        first = _peek(connection)
        if first is None:
            connection.close()
        elif first:
            self._place(connection, first)
        elif len(self._waiting) + len(self._undecided) >= self.capacity:
            self._turn_away(connection)
        else:
            # Connected but silent so far (a request is usually a moment behind the connect):
            # decided when its first bytes come, or as an opening if none come in time.
            loop = asyncio.get_running_loop()
            self._undecided[connection] = loop.call_later(FIRST_BYTES_SECONDS, self._spoke, connection)
            loop.add_reader(connection.fileno(), self._spoke, connection)

    def _spoke(self, connection: socket.socket) -> None:
        timer = self._undecided.pop(connection, None)
        if timer is None:
            return
        timer.cancel()
        asyncio.get_running_loop().remove_reader(connection.fileno())
        first = _peek(connection)
        if first is None:
            connection.close()
        else:
            self._place(connection, first)

    def _place(self, connection: socket.socket, first: bytes) -> None:
        if is_plain_request(first):
            self._plain.append(connection)
        elif len(self._waiting) >= self.capacity:
            self._turn_away(connection)
            return
        else:
            self._waiting.append(connection)
        self._arrived.set()

    @staticmethod
    def _turn_away(connection: socket.socket) -> None:
        CLOSES.labels("busy").inc()
        with contextlib.suppress(OSError):
            connection.send(BUSY_RESPONSE)
        connection.close()

    async def _hand_over_in_turn(self) -> None:
        loop = asyncio.get_running_loop()
        next_opening = 0.0
        while True:
            now = loop.time()
            if self._plain:
                await self._hand_over(self._plain.popleft())
            elif self._waiting and now >= next_opening:
                await self._hand_over(self._waiting.popleft())
                next_opening = now + self.interval
            else:
                # Until the next opening's turn, or a plain request (which goes first).
                self._arrived.clear()
                wait = next_opening - now if self._waiting else None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._arrived.wait(), wait)

    async def _hand_over(self, connection: socket.socket) -> None:
        try:
            await asyncio.get_running_loop().connect_accepted_socket(self.factory, connection)
        except OSError:
            connection.close()  # the client left while it waited

    async def stop(self) -> None:
        """Stop accepting; connections still waiting are closed (clients reconnect)."""
        await stop_tasks(self._tasks)
        self._tasks = []
        loop = asyncio.get_running_loop()
        for connection, timer in self._undecided.items():
            timer.cancel()
            loop.remove_reader(connection.fileno())
            connection.close()
        self._undecided.clear()
        for line in (self._plain, self._waiting):
            while line:
                line.popleft().close()
