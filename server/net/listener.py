"""The accept loop: websocket openings wait their turn as bare sockets, fairly per address.

Left to itself, asyncio accepts every connection the kernel has queued and websockets starts
each one's handshake at once. A burst of thousands of openings then holds thousands of
half-open connections (their tasks, timeouts and buffers) that the garbage collector scans
again and again, and those scans paused other rooms' moves for 25-65 ms. :class:`OpeningLine`
takes that job over on the default (selector) event loop:

- a connection from a trusted balancer must start with a PROXY v2 header
  (:mod:`server.net.proxy_header`), which the line reads off: it names the client's address
  and whether the client used TLS. Any other connection is its own client;
- each client address may hold ``per_address`` connections (waiting or open); past that it
  gets ``429`` at once;
- the line looks at what each connection has sent (without reading it; a silent one is given
  a second to speak): a plain HTTP request (``/healthz``, ``/readyz``, the web page) goes to
  websockets at once, so health checks keep answering through a burst;
- a websocket opening (or a connection that stays silent) waits as a bare socket, which costs
  the collector nothing, in its address's queue. Addresses take turns, one opening every
  ``interval`` seconds, so an address with hundreds waiting delays another's opening by one
  turn, not hundreds; an address may hold a small share of the line (1 %, at least 4);
- past ``capacity`` waiting, a connection gets ``503`` with ``Retry-After`` at once.

It needs asyncio's own server (its protocol factory and its listening sockets); under uvloop
the server keeps websockets' accept and paces handshakes in :mod:`server.net.http` instead,
and cannot take PROXY headers (start-up refuses trusted balancers there).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import os
import socket
import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from server.config import Network
from server.connections.compact import CompactConnection
from server.connections.origin import Origin, direct, trusted
from server.net.proxy_header import BadProxyHeader, parse
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

#: The answer to plain requests sent one behind another on one connection: each is answered
#: on a connection of its own (websockets serves one request a connection).
PIPELINED_RESPONSE: Final = (
    b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Type: text/plain\r\n"
    b"Content-Length: 32\r\n\r\none request a connection, please"
)

#: The answer to an address that holds as many connections as it may.
ADDRESS_RESPONSE: Final = (
    b"HTTP/1.1 429 Too Many Requests\r\nConnection: close\r\nContent-Type: text/plain\r\n"
    b"Retry-After: 30\r\nContent-Length: 44\r\n\r\ntoo many connections from your address\r\n\r\n"
)

#: How long a connection that has sent nothing may take to send its first bytes before it is
#: taken for an opening.
FIRST_BYTES_SECONDS: Final = 1.0
#: How often a connection that has sent only part of its PROXY header is looked at again.
RECHECK_SECONDS: Final = 0.05

Factory = Callable[[], asyncio.Protocol]


async def bind(host: str, port: int) -> socket.socket:
    """A socket bound to ``host`` and ``port`` (0: a free one), not listening yet: the port is
    known before the server is built, and clients are refused until it serves on the socket.
    ``host`` is one address (a name: the first it resolves to; empty: the system's first
    wildcard address, 0.0.0.0 on Linux).
    A port in use fails as asyncio's own listeners do."""
    found = await asyncio.get_running_loop().getaddrinfo(
        host or None, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
    )
    family, kind, proto, _, address = found[0]
    listening = socket.socket(family, kind, proto)
    try:
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart need not wait
        if family == socket.AF_INET6:
            listening.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        listening.bind(address)
    except OSError as error:
        listening.close()
        text = f"error while attempting to bind on address {address!r}: {(error.strerror or '').lower()}"
        raise OSError(error.errno, text) from None
    return listening


def is_plain_request(first_bytes: bytes) -> bool:
    """True when ``first_bytes`` hold a whole HTTP request head with no ``Upgrade`` header.
    Anything else (nothing sent yet, a head cut short, any upgrade, however spelt) waits in
    the line, so no spelling of the header lets an opening skip it."""
    head, ended, _ = first_bytes.partition(b"\r\n\r\n")
    lines = head.split(b"\r\n")[1:]
    return bool(ended) and not any(line.split(b":", 1)[0].strip().lower() == b"upgrade" for line in lines)


def _peek(connection: socket.socket) -> bytes | None:
    """What ``connection`` has sent so far, left unread (``b""``: nothing yet); None if it
    failed or its client closed it. (A closed one reads as zero bytes and stays readable:
    waited on again, it would wake the loop at once, forever.)"""
    try:
        return connection.recv(PEEK_BYTES, socket.MSG_PEEK) or None
    except (BlockingIOError, InterruptedError):
        return b""
    except OSError:
        return None


@dataclass(slots=True)
class _Arrival:
    """A connection the line has accepted and not yet placed: its peer, and its origin once
    known (a balancer's connection: once its PROXY header is read)."""

    peer: str
    origin: Origin | None
    timer: asyncio.TimerHandle | None = None
    #: When its second to speak ends (set when it is first waited on).
    deadline: float | None = None
    #: It was given its second to speak.
    waited: bool = False


class OpeningLine:
    """Accepts from ``listening`` (asyncio's listening sockets, no longer read by asyncio) and
    hands connections to ``factory`` (websockets' protocol), as the module says. ``proxies``:
    the trusted balancers; ``tls``: the listener's TLS context, if it has one."""

    def __init__(
        self,
        factory: Factory,
        interval: float,
        capacity: int,
        proxies: Iterable[Network] = (),
        per_address: int = 256,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.factory, self.interval, self.capacity = factory, interval, capacity
        self.proxies, self.per_address, self.tls = tuple(proxies), per_address, tls
        self.share = max(4, capacity // 100)
        self._plain: collections.deque[tuple[socket.socket, Origin]] = collections.deque()
        self._waiting: dict[str, collections.deque[tuple[socket.socket, Origin]]] = {}
        self._turns: collections.deque[str] = collections.deque()
        self._waiting_count = 0
        self._undecided: dict[socket.socket, _Arrival] = {}
        #: Connections per client address, from arrival (or its PROXY header) to close.
        self._held: collections.Counter[str] = collections.Counter()
        self._log = LogLimiter(logger)
        self._arrived = asyncio.Event()
        self._tasks: list[asyncio.Task[None]] = []

    @classmethod
    def take_over(
        cls,
        server: asyncio.AbstractServer,
        interval: float,
        capacity: int,
        proxies: Iterable[Network] = (),
        per_address: int = 256,
        tls: ssl.SSLContext | None = None,
    ) -> OpeningLine | None:
        """Stop asyncio accepting on ``server`` and accept through a new line instead; None
        (and asyncio keeps accepting) when ``server`` is not asyncio's own."""
        loop = asyncio.get_running_loop()
        factory = getattr(server, "_protocol_factory", None)
        sockets = getattr(server, "sockets", ())
        if factory is None or not isinstance(loop, asyncio.SelectorEventLoop) or not sockets:
            return None
        line = cls(factory, interval, capacity, proxies, per_address, tls)
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
        return self._waiting_count

    @property
    def undecided(self) -> int:
        """Connections accepted and not yet placed: waiting for their first bytes."""
        return len(self._undecided)

    def held(self, address: str) -> int:
        """Connections ``address`` holds: waiting here, or open."""
        return self._held[address]

    async def _accept(self, listening: socket.socket) -> None:
        loop = asyncio.get_running_loop()
        try:
            while True:
                try:
                    connection, peer = await loop.sock_accept(listening)
                    self._admit(connection, peer)
                    # Then what else the kernel holds, up to a batch: taking a connection
                    # off its queue costs little now that nothing is set up.
                    for _ in range(TAKEN_PER_WAKE):
                        connection, peer = listening.accept()
                        connection.setblocking(False)
                        self._admit(connection, peer)
                except (BlockingIOError, InterruptedError):
                    pass
                except OSError as error:  # out of descriptors, or the like
                    self._log.log(logging.WARNING, "accept", "accept failed: %s", error)
                    await asyncio.sleep(0.1)
        finally:
            listening.close()

    def _admit(self, connection: socket.socket, peer: object) -> None:
        host = str(peer[0]) if isinstance(peer, tuple) and peer else ""
        if trusted(host, self.proxies):
            arrival = _Arrival(host, None)
        else:
            origin = direct(peer, self.tls is not None, bool(self.proxies))
            if not self._hold(connection, origin.address):
                return
            arrival = _Arrival(host, origin)
        if len(self._undecided) + self._waiting_count >= self.capacity:
            self._turn_away(connection, arrival.origin, BUSY_RESPONSE, "busy")
            return
        self._examine(connection, arrival)

    def _hold(self, connection: socket.socket, address: str) -> bool:
        """Count a connection of ``address``; False (and it is turned away) past the cap."""
        if self._held[address] >= self.per_address:
            self._turn_away(connection, None, ADDRESS_RESPONSE, "address")
            return False
        self._held[address] += 1
        return True

    def _release(self, address: str) -> None:
        left = self._held[address] - 1
        if left > 0:
            self._held[address] = left
        else:
            del self._held[address]

    def _drop(self, connection: socket.socket, origin: Origin | None) -> None:
        connection.close()
        if origin is not None:
            self._release(origin.address)

    def _examine(self, connection: socket.socket, arrival: _Arrival) -> None:
        """Place ``connection`` by what it has sent, or give it time to send more."""
        first = _peek(connection)
        if first is None:
            self._drop(connection, arrival.origin)
            return
        if arrival.origin is None:
            try:
                proxy = parse(first)
            except BadProxyHeader as error:
                self._log.log(logging.WARNING, "proxy-header", "balancer %s: %s", arrival.peer, error)
                connection.close()
                return
            if proxy is None:
                if arrival.waited:
                    self._log.log(logging.WARNING, "proxy-header", "balancer %s: PROXY header cut short", arrival.peer)
                    connection.close()
                else:
                    self._wait(connection, arrival, watch=not first)
                return
            try:
                taken = connection.recv(proxy.length)
            except OSError:
                taken = b""
            if len(taken) != proxy.length:
                connection.close()
                return
            origin = Origin(proxy.client or arrival.peer, proxy.tls)
            if not self._hold(connection, origin.address):
                return
            arrival.origin, arrival.waited, arrival.deadline = origin, False, None
            first = first[proxy.length :]
        if not first and not arrival.waited:
            # Connected but silent so far (a request is usually a moment behind the connect):
            # decided when its first bytes come, or as an opening if none come in time.
            self._wait(connection, arrival, watch=True)
            return
        self._place(connection, arrival.origin, first)

    def _wait(self, connection: socket.socket, arrival: _Arrival, watch: bool) -> None:
        """Look again when the connection's second is up, and sooner when it sends (``watch``).
        One that has sent a part (a PROXY header cut short) is looked at again every
        :data:`RECHECK_SECONDS` instead: its unread bytes keep it readable, so watching it
        would wake the loop at once, over and over."""
        loop = asyncio.get_running_loop()
        if arrival.deadline is None:
            arrival.deadline = loop.time() + FIRST_BYTES_SECONDS
        again = loop.time() + RECHECK_SECONDS
        if watch or again >= arrival.deadline:
            arrival.timer = loop.call_at(arrival.deadline, self._waited, connection)
        else:
            arrival.timer = loop.call_at(again, self._spoke, connection)
        self._undecided[connection] = arrival
        if watch:
            loop.add_reader(connection.fileno(), self._spoke, connection)

    def _spoke(self, connection: socket.socket, waited: bool = False) -> None:
        arrival = self._undecided.pop(connection, None)
        if arrival is None:
            return
        if arrival.timer is not None:
            arrival.timer.cancel()
        asyncio.get_running_loop().remove_reader(connection.fileno())
        arrival.waited = waited
        self._examine(connection, arrival)

    def _waited(self, connection: socket.socket) -> None:
        self._spoke(connection, waited=True)

    def _place(self, connection: socket.socket, origin: Origin, first: bytes) -> None:
        if is_plain_request(first):
            if first.partition(b"\r\n\r\n")[2]:
                self._turn_away(connection, origin, PIPELINED_RESPONSE, "bad-request")
                return
            self._plain.append((connection, origin))
        else:
            queue = self._waiting.get(origin.address)
            if self._waiting_count >= self.capacity or (queue is not None and len(queue) >= self.share):
                self._turn_away(connection, origin, BUSY_RESPONSE, "busy")
                return
            if queue is None:
                queue = self._waiting[origin.address] = collections.deque()
                self._turns.append(origin.address)
            queue.append((connection, origin))
            self._waiting_count += 1
        self._arrived.set()

    def _turn_away(self, connection: socket.socket, origin: Origin | None, response: bytes, reason: str) -> None:
        CLOSES.labels(reason).inc()
        with contextlib.suppress(OSError):
            # Read what it sent first: closing with unread bytes resets the connection, and the
            # client would never see the answer.
            connection.recv(PEEK_BYTES)
        with contextlib.suppress(OSError):
            connection.send(response)
        self._drop(connection, origin)

    def _next_opening(self) -> tuple[socket.socket, Origin]:
        address = self._turns.popleft()
        queue = self._waiting[address]
        opening = queue.popleft()
        if queue:
            self._turns.append(address)  # its next opening waits for every other address's
        else:
            del self._waiting[address]
        self._waiting_count -= 1
        return opening

    async def _hand_over_in_turn(self) -> None:
        loop = asyncio.get_running_loop()
        next_opening = 0.0
        while True:
            now = loop.time()
            if self._plain:
                await self._hand_over(*self._plain.popleft())
            elif self._waiting_count and now >= next_opening:
                await self._hand_over(*self._next_opening())
                next_opening = now + self.interval
            else:
                # Until the next opening's turn, or a plain request (which goes first).
                self._arrived.clear()
                wait = next_opening - now if self._waiting_count else None
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._arrived.wait(), wait)

    async def _hand_over(self, connection: socket.socket, origin: Origin) -> None:
        released = False

        def release() -> None:
            nonlocal released
            if not released:
                released = True
                self._release(origin.address)

        def made() -> asyncio.Protocol:
            protocol = self.factory()
            if isinstance(protocol, CompactConnection):
                protocol.origin, protocol.on_lost = origin, release
            else:
                release()  # not ours to follow to its close: counted while waiting only
            return protocol

        try:
            await asyncio.get_running_loop().connect_accepted_socket(made, connection, ssl=self.tls)
        except (OSError, ssl.SSLError):
            connection.close()  # the client left while it waited
            release()

    async def stop(self) -> None:
        """Stop accepting; connections still waiting are closed (clients reconnect)."""
        await stop_tasks(self._tasks)
        self._tasks = []
        loop = asyncio.get_running_loop()
        for connection, arrival in self._undecided.items():
            if arrival.timer is not None:
                arrival.timer.cancel()
            loop.remove_reader(connection.fileno())
            self._drop(connection, arrival.origin)
        self._undecided.clear()
        while self._plain:
            self._drop(*self._plain.popleft())
        while self._waiting_count:
            self._drop(*self._next_opening())
