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


@dataclass(eq=False, slots=True)
class ClientLink:
    """A websocket connection and what the server knows of it. Compared by identity.

    A link with a ``relay`` stands for a connection on another node (its ``socket`` is None):
    what is sent to it goes through the relay."""

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
    #: Set once the connection was closed for not reading; nothing more is sent to it.
    dropped: bool = False
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

    #: A write of the frames queued this turn is scheduled.
    flushing: bool = False

    def send_frame(self, frame: bytes) -> None:
        """Queue an encoded frame without waiting (frames keep their order); it goes out with
        the others of this event-loop turn."""
        if self.socket is None:
            if self.relay is not None and not self.dropped:
                self.relay.relay([self], frame)
            return
        if self.dropped or self.socket.protocol.state is not State.OPEN:
            return
        self.socket.protocol.send_binary(frame)
        if not self.flushing:
            self.flushing = True
            _flushes.add(self)

    def flush(self) -> None:
        """Write what was queued, in one piece (websockets' own sends flush it too, in order)."""
        self.flushing = False
        if self.socket is None:
            return
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

    def send(self, message: ServerMessage) -> None:
        self.send_frame(encode(message))

    def error(self, code: ErrorCode, message: str, request_id: int | None, rule: str | None = None) -> None:
        if request_id is not None and request_id == self.serving:
            self.outcome = code
        self.send(Error(code=code, message=message, id=request_id, rule=rule))

    def check_backlog(self) -> None:
        """Close the connection if its unsent bytes are over the cap."""
        if self.socket is None:
            return
        transport = self.socket.transport
        if transport is None or self.dropped or transport.get_write_buffer_size() <= self.write_cap:
            return
        CLOSES.labels("slow").inc()
        self.close(CloseCode.SLOW_CONSUMER, "too slow: frames were not read")

    def close(self, code: CloseCode, reason: str) -> None:
        """Close the connection without waiting, for a peer that may never answer: nothing
        more is sent to it, and it is dropped after :data:`CLOSE_GRACE` seconds whatever the
        peer does."""
        if self.socket is None or self.dropped:
            return
        self.dropped = True
        closing = asyncio.ensure_future(self.socket.close(code, reason))
        _closing.add(closing)
        closing.add_done_callback(_closing.discard)
        # The close frame may sit behind a backlog the client never reads: give it a
        # moment, then let go.
        asyncio.get_running_loop().call_later(CLOSE_GRACE, self.socket.transport.abort)


class _Flushes:
    """The links with frames queued in this event-loop turn, each written once at its end by
    one callback for them all (a callback a link cost as much as the write, for a room's
    spectators)."""

    def __init__(self) -> None:
        self._links: list[ClientLink] = []
        self._loop: asyncio.AbstractEventLoop | None = None

    def add(self, link: ClientLink) -> None:
        loop = asyncio.get_running_loop()
        if loop is not self._loop:  # a first loop, or the last one stopped with links queued
            self._links, self._loop = [], loop
        if not self._links:
            loop.call_soon(self._run)
        self._links.append(link)

    def _run(self) -> None:
        links, self._links = self._links, []
        for link in links:
            try:
                link.flush()
            except Exception:  # one broken connection must not leave the others' frames unsent
                _log.exception("write", "writing to a connection failed")


_flushes = _Flushes()


def send_to_all(links: list[ClientLink], frame: bytes) -> None:
    """The same bytes to every link, encoded once by the caller (relayed links: one message
    per relay, naming them all)."""
    relayed: list[ClientLink] = []
    for link in links:
        if link.socket is None:
            relayed.append(link)
        else:
            link.send_frame(frame)
    if relayed:
        _relay_all(relayed, frame)


def _relay_all(links: list[ClientLink], frame: bytes) -> None:
    by_relay: dict[int, tuple[Relay, list[ClientLink]]] = {}
    for link in links:
        if link.relay is not None and not link.dropped:
            by_relay.setdefault(id(link.relay), (link.relay, []))[1].append(link)
    for relay, group in by_relay.values():
        relay.relay(group, frame)
