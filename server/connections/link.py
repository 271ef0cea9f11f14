"""One connected client, as the server sees it: identity, limits, and a bounded way to send.

Frames are queued without waiting (so one slow client never holds up a room) and go out
once per event-loop turn: every frame a connection is sent in one turn (an ``ack`` and the
update it caused, a race start's events) leaves in a single write. A client that does not read would make that
queue grow without bound, so each connection's write buffer is capped (the
``write_buffer_cap`` setting): past the cap the connection is closed with
:attr:`~protocol.errors.CloseCode.SLOW_CONSUMER` (4008) and nothing more is queued for it.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
import weakref
from dataclasses import dataclass, field
from typing import Final, Protocol

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.protocol import State

from protocol.codec import encode
from protocol.errors import CloseCode, ErrorCode
from protocol.messages import Error, ServerMessage
from server.connections.limits import Offences, TokenBucket
from server.ops.log_limits import LogLimiter
from server.ops.metrics import CLOSES

#: Bytes a connection may have waiting to be written before it counts as a slow consumer.
WRITE_BUFFER_CAP: Final = 1024 * 1024
#: Seconds a connection closed by the server (a slow consumer, a keepalive timeout) has to
#: finish the closing handshake before its connection is dropped.
CLOSE_GRACE: Final = 2.0

logger = logging.getLogger("server.connections")
#: Lines a client's doing (or an outage) can cause, limited: never a flood.
_log = LogLimiter(logger)

_closing: set[asyncio.Future[None]] = set()  # closes under way (see ClientLink.close), kept from the GC
_link_ids = itertools.count(1)


class Relay(Protocol):
    """Carries frames to connections held by another server process (see server/net/forwarding.py)."""

    def relay(self, links: list[ClientLink], frame: bytes) -> None: ...


class FrameSink(Protocol):
    """Where the frames sent to a :class:`ClientLink` go: its websocket, the relay to the node
    holding its connection, or (in tests) a list. ``send_frame`` never waits and keeps the
    frames' order; once ``closed`` (by :meth:`close`, or for not reading) it takes no more."""

    @property
    def closed(self) -> bool: ...

    def send_frame(self, frame: bytes) -> None: ...

    def close(self, code: CloseCode, reason: str) -> None:
        """Close the connection without waiting for the peer."""


class WebSocketSink:
    """A websocket connection's writes: frames queued in one event-loop turn leave in one
    write at its end; past ``write_cap`` unsent bytes the connection is closed as a slow
    consumer."""

    __slots__ = ("closed", "flushing", "socket", "write_cap")

    def __init__(self, socket: ServerConnection, write_cap: int = WRITE_BUFFER_CAP) -> None:
        self.socket = socket
        self.write_cap = write_cap
        #: Set once the connection was closed by the server; nothing more is sent to it.
        self.closed = False
        #: A write of the frames queued this turn is scheduled.
        self.flushing = False

    def send_frame(self, frame: bytes) -> None:
        if self.closed or self.socket.protocol.state is not State.OPEN:
            return
        self.socket.protocol.send_binary(frame)
        if not self.flushing:
            self.flushing = True
            _flushes.add(self)

    def flush(self) -> None:
        """Write what was queued, in one piece (websockets' own sends flush it too, in order)."""
        self.flushing = False
        transport = self.socket.transport
        chunks = self.socket.protocol.data_to_send()
        pending = [chunk for chunk in chunks if chunk]
        if pending:
            transport.write(pending[0] if len(pending) == 1 else b"".join(pending))
        if len(pending) != len(chunks):  # the end of data after a close frame, as websockets does it
            if transport.can_write_eof():
                transport.write_eof()
            else:
                transport.close()
        self.check_backlog()

    def check_backlog(self) -> None:
        """Close the connection if its unsent bytes are over the cap."""
        transport = self.socket.transport
        if transport is None or self.closed or transport.get_write_buffer_size() <= self.write_cap:
            return
        CLOSES.labels("slow").inc()
        self.close(CloseCode.SLOW_CONSUMER, "too slow: frames were not read")

    def close(self, code: CloseCode, reason: str) -> None:
        """Nothing more is sent, and the connection is dropped after :data:`CLOSE_GRACE`
        seconds whatever the peer does."""
        if self.closed:
            return
        self.closed = True
        closing = asyncio.ensure_future(self.socket.close(code, reason))
        _closing.add(closing)
        closing.add_done_callback(_closing.discard)
        # The close frame may sit behind a backlog the client never reads: give it a
        # moment, then let go.
        asyncio.get_running_loop().call_later(CLOSE_GRACE, self.socket.transport.abort)


class RelaySink:
    """A connection held by another node: each frame goes through the relay, naming ``link``.
    Closing is the client's own node's business: it closes nothing here. It holds its link
    weakly: the link holds it, and a proxy must be freed as soon as it is let go."""

    __slots__ = ("link", "relay")

    closed: Final = False

    def __init__(self, relay: Relay, link: ClientLink) -> None:
        self.relay = relay
        self.link = weakref.ref(link)

    def send_frame(self, frame: bytes) -> None:
        link = self.link()
        if link is not None:
            self.relay.relay([link], frame)

    def close(self, code: CloseCode, reason: str) -> None:
        pass


class _NoSink:
    """A link with neither websocket nor relay: what is sent to it goes nowhere."""

    __slots__ = ()

    closed: Final = False

    def send_frame(self, frame: bytes) -> None:
        pass

    def close(self, code: CloseCode, reason: str) -> None:
        pass


_NO_SINK: Final = _NoSink()


@dataclass(eq=False, slots=True, weakref_slot=True)
class ClientLink:
    """A client connection and what the server knows of it. Compared by identity.

    What is sent to it goes to its ``sink``: made from its ``socket`` (a
    :class:`WebSocketSink` capped at ``write_cap``) or, for a connection on another node (its
    ``socket`` is None), from its ``relay``; tests give a sink of their own."""

    socket: ServerConnection | None
    bucket: TokenBucket
    offences: Offences
    player: str | None = None
    name: str = ""
    bot: bool = False
    #: The account's token generation this connection signed in with; 0 for a guest.
    generation: int = 0
    #: The device its resume token names, and when that token expires (Unix s; None: a token
    #: from before tokens expired), once it was given one (server/features/tokens.py).
    device: str | None = None
    token_expires: int | None = None
    #: Rooms this connection follows, as racer (seat number) or spectator (None).
    rooms: dict[str, int | None] = field(default_factory=dict)
    opened: float = field(default_factory=time.monotonic)
    #: The write buffer cap of the websocket sink made from ``socket``.
    write_cap: int = WRITE_BUFFER_CAP
    #: The request being served, and its outcome so far (``ok`` or its error code), for metrics.
    serving: int | None = None
    outcome: str = "ok"
    relay: Relay | None = None
    #: Unique in this process (a relayed link: the id on its own node).
    id: int = field(default_factory=lambda: next(_link_ids))
    #: The client's address, and whether its bytes travel no network in the clear
    #: (server/connections/origin.py); set when the connection opens.
    address: str = "unknown"
    secure: bool = False
    sink: FrameSink = _NO_SINK

    def __post_init__(self) -> None:
        if self.sink is _NO_SINK:
            if self.socket is not None:
                self.sink = WebSocketSink(self.socket, self.write_cap)
            elif self.relay is not None:
                self.sink = RelaySink(self.relay, self)

    @property
    def dropped(self) -> bool:
        """Whether the connection was closed by the server (for not reading, say): nothing
        more is sent to it."""
        return self.sink.closed

    def forget_handshake(self) -> None:
        """Let the handshake's request headers and response go: websockets holds them for the
        connection's life, about 1.4 KB of an idle connection's memory. (The request object
        itself stays: websockets tells the handshake from later frames by it.)"""
        socket = self.socket
        if socket is None:
            return
        request = socket.request
        if request is not None:
            request.headers = Headers()
        socket.response = None

    def begin(self, request_id: int) -> None:
        self.serving, self.outcome = request_id, "ok"

    def send_frame(self, frame: bytes) -> None:
        """Queue an encoded frame without waiting (frames keep their order); on a websocket it
        goes out with the others of this event-loop turn."""
        self.sink.send_frame(frame)

    def send(self, message: ServerMessage) -> None:
        self.sink.send_frame(encode(message))

    def error(self, code: ErrorCode, message: str, request_id: int | None, rule: str | None = None) -> None:
        if request_id is not None and request_id == self.serving:
            self.outcome = code
        self.send(Error(code=code, message=message, id=request_id, rule=rule))

    def close(self, code: CloseCode, reason: str) -> None:
        """Close the connection without waiting, for a peer that may never answer: nothing
        more is sent to it, and it is dropped after :data:`CLOSE_GRACE` seconds whatever the
        peer does."""
        self.sink.close(code, reason)


class _Flushes:
    """The websocket sinks with frames queued in this event-loop turn, each written once at
    its end by one callback for them all (a callback a sink cost as much as the write, for a
    room's spectators). One list a loop: servers on several loops in one process (in threads,
    as the tests run two nodes) never take or drop each other's sinks."""

    def __init__(self) -> None:
        self._by_loop: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[WebSocketSink]] = (
            weakref.WeakKeyDictionary()
        )
        #: The last loop seen and its list, as one value (a thread reads it whole).
        self._last: tuple[asyncio.AbstractEventLoop, list[WebSocketSink]] | None = None

    def add(self, sink: WebSocketSink) -> None:
        loop = asyncio.get_running_loop()
        last = self._last
        if last is not None and last[0] is loop:
            sinks = last[1]
        else:
            sinks = self._by_loop.setdefault(loop, [])
            self._last = (loop, sinks)
        if not sinks:
            loop.call_soon(self._run, sinks)
        sinks.append(sink)

    @staticmethod
    def _run(sinks: list[WebSocketSink]) -> None:
        queued = sinks.copy()
        sinks.clear()
        for sink in queued:
            try:
                sink.flush()
            except Exception:  # one broken connection must not leave the others' frames unsent
                _log.exception("write", "writing to a connection failed")


_flushes = _Flushes()


def send_to_all(links: list[ClientLink], frame: bytes) -> None:
    """The same bytes to every link, encoded once by the caller (relayed links: one message
    per relay, naming them all)."""
    relayed: list[ClientLink] = []
    for link in links:
        if link.relay is None:
            link.sink.send_frame(frame)
        else:
            relayed.append(link)
    if relayed:
        _relay_all(relayed, frame)


def _relay_all(links: list[ClientLink], frame: bytes) -> None:
    by_relay: dict[int, tuple[Relay, list[ClientLink]]] = {}
    for link in links:
        if link.relay is not None:  # always, from send_to_all; says so to the type checker
            by_relay.setdefault(id(link.relay), (link.relay, []))[1].append(link)
    for relay, group in by_relay.values():
        relay.relay(group, frame)
