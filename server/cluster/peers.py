"""Direct links between nodes: the forwarder's messages without the hop through Redis.

Every node listens on a *peer port* (``PEER_PORT``; 0, the default, takes any free port) and
says where in its heartbeat (``"peer": "host:port"``). To send to another node, a node opens
one TCP connection to it and keeps it; each message batch is a frame, a 4-byte big-endian
length and then the bytes, exactly what the node would have published on the other's Redis
inbox (:mod:`server.cluster.inbox`).

**Who may talk.** The listening node opens with a 16-byte challenge; the connecting node
answers with a hello naming both nodes and an HMAC of the challenge under a key derived
from the service's secret (stored in Redis, so every node of the service has it and nobody
else does). Until its hello is accepted a link is read no further than :data:`HELLO_LIMIT`
bytes in all, so a stranger costs a few hundred bytes of memory, not a frame's worth; anything
but a valid hello within them, or no hello within :data:`HELLO_SECONDS`, closes it, and at most
:data:`MAX_UNKNOWN` such links are open at once (more are closed as they arrive). What a
stranger's link makes this node log goes through a :class:`~server.ops.log_limits.LogLimiter`.
The port listens on ``PEER_HOST`` (an internal network's address; see
:func:`server.cluster.cluster.peer_listen_host`).

**Order and faults.** One connection per sending and receiving node carries every message
from one to the other, in order. A node that cannot be reached within :data:`CONNECT_SECONDS`
(it advertises no peer address, or a firewall is in the way) is written to on its Redis inbox
instead, for the rest of its life (node ids change with every process start): messages to one
node never take two roads at once, so they never overtake each other. A link that breaks loses
what was in flight, as a pub/sub message to a subscriber that dropped would be (forwarding is
at most once: README, "Several processes"), and the next message opens a new link. A peer
that stops reading is cut off once :data:`WRITE_LIMIT` bytes wait for it.

Why TCP frames of our own and not a library: the link is a byte pipe between two processes
of this server; websockets would add a handshake, masking and framing per message that buy
nothing here, and the frame format is a dozen lines of :class:`_Link`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import hmac
import logging
import secrets
import struct
from collections.abc import Awaitable, Callable
from typing import Final, cast

import msgspec

from server.ops.log_limits import LogLimiter
from server.ops.metrics import NODE_BATCHES_SENT

logger = logging.getLogger("server.nodes")

_HEADER: Final = struct.Struct(">I")
#: The largest frame read from a peer: a batch of a loop turn's messages to one node.
MAX_FRAME: Final = 64 * 1024 * 1024
#: Bytes waiting for a peer that does not read before its link is cut.
WRITE_LIMIT: Final = 32 * 1024 * 1024
#: Seconds to open a link and say hello before the peer is written to on Redis instead.
CONNECT_SECONDS: Final = 1.0
#: Seconds a connecting node has to answer the challenge (it gives up on the link after
#: :data:`CONNECT_SECONDS` anyway; the rest is slack for a busy loop on either side).
HELLO_SECONDS: Final = 3.0
#: Bytes read from a link before its hello is accepted: a hello frame is its two node ids and
#: 43 bytes at most (69 in all with the ids this server makes), so ids of up to
#: :data:`MAX_NODE_ID` characters fit.
HELLO_LIMIT: Final = 512
#: The longest node id a hello can carry (see :data:`HELLO_LIMIT`).
MAX_NODE_ID: Final = 200
#: Links open at once whose hello is not yet accepted; more are closed as they arrive. A
#: node opens one link to each other node, once per process start: a few at once at most.
MAX_UNKNOWN: Final = 16
#: Bytes read from a link's socket at a time once its hello is accepted (asyncio's own size).
_READ_SIZE: Final = 256 * 1024
_CHALLENGE_BYTES: Final = 16


class _Hello(msgspec.Struct, array_like=True):
    sender: str
    receiver: str
    proof: bytes


_SENT_DIRECT: Final = NODE_BATCHES_SENT.labels("direct")
_hellos = msgspec.msgpack.Decoder(_Hello)
_encoder = msgspec.msgpack.Encoder()


def link_key(secret: bytes) -> bytes:
    """The key that proves a node belongs to the service, derived from its secret (the
    secret itself also signs resume tokens, so it is never used raw here)."""
    return hmac.new(secret, b"solitaire-race peer links", hashlib.sha256).digest()


def _proof(key: bytes, challenge: bytes, sender: str, receiver: str) -> bytes:
    message = b"\0".join((challenge, sender.encode(), receiver.encode()))
    return hmac.new(key, message, hashlib.sha256).digest()


class _Link(asyncio.BufferedProtocol):
    """One TCP connection, either way: frames in (:meth:`frame_received`), frames out.

    The socket is read into a buffer of the link's own whose size :meth:`get_buffer` chooses,
    so a link reads no more than it is willing to hold.
    """

    def __init__(self, log: LogLimiter, read_size: int) -> None:
        self.transport: asyncio.Transport | None = None
        self._log = log
        self._buffer = bytearray()  # the frame being received, and any after it
        self._scratch = bytearray(read_size)  # what the socket is read into

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's are not asyncio.Transport subclasses, but have write).
        self.transport = cast(asyncio.Transport, transport)

    def get_buffer(self, sizehint: int) -> memoryview:
        return memoryview(self._scratch)

    def buffer_updated(self, nbytes: int) -> None:
        if self.closing:
            return
        buffer = self._buffer
        buffer += memoryview(self._scratch)[:nbytes]
        while len(buffer) >= _HEADER.size and not self.closing:
            (size,) = _HEADER.unpack_from(buffer)
            if size > self.max_frame():
                self.frame_too_big(size)
                return
            end = _HEADER.size + size
            if len(buffer) < end:
                return
            payload = bytes(buffer[_HEADER.size : end])
            del buffer[:end]
            self.frame_received(payload)

    def max_frame(self) -> int:
        """The largest frame the link accepts now."""
        return MAX_FRAME

    def frame_too_big(self, size: int) -> None:
        """A frame of ``size`` bytes, past :meth:`max_frame`, was announced: the link closes."""
        self.close()

    def frame_received(self, data: bytes) -> None:
        raise NotImplementedError

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None

    @property
    def closing(self) -> bool:
        """True once the link is closed or closing: nothing more is read or written."""
        return self.transport is None or self.transport.is_closing()

    def send(self, data: bytes) -> bool:
        """Write one frame; False when the link is closed (or was cut for not reading)."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return False
        if transport.get_write_buffer_size() > WRITE_LIMIT:
            self._log.log(logging.WARNING, "slow", "a peer stopped reading: its link is cut")
            self.close()
            return False
        transport.write(_HEADER.pack(len(data)) + data)
        return True

    def close(self) -> None:
        """Close the link and drop what it received and did not handle."""
        self._buffer.clear()
        if self.transport is not None:
            self.transport.close()


class _Outgoing(_Link):
    """A link this node opened: the peer speaks once, with its challenge."""

    def __init__(self, log: LogLimiter, on_lost: Callable[[_Outgoing], None]) -> None:
        super().__init__(log, _HEADER.size + _CHALLENGE_BYTES)
        self.challenge: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
        self._on_lost = on_lost

    def max_frame(self) -> int:
        return _CHALLENGE_BYTES

    def frame_received(self, data: bytes) -> None:
        if self.challenge.done() or len(data) != _CHALLENGE_BYTES:
            self.close()  # anything but one challenge is a protocol error
        else:
            self.challenge.set_result(data)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if not self.challenge.done():
            self.challenge.set_exception(ConnectionError("the peer closed the link"))
        self._on_lost(self)


class _Incoming(_Link):
    """A link another node opened: a challenge out, a valid hello in, then its batches.

    Until the hello is accepted the link is *unknown*: it is read no further than
    :data:`HELLO_LIMIT` bytes in all (:attr:`read_unknown` counts them) and is closed at
    its owner's hello deadline.
    """

    def __init__(self, links: PeerLinks) -> None:
        super().__init__(links._log, HELLO_LIMIT)
        self._links = links
        self._challenge = secrets.token_bytes(_CHALLENGE_BYTES)
        self._known = False
        self._deadline: asyncio.TimerHandle | None = None
        #: Bytes read while the link was unknown.
        self.read_unknown = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        links = self._links
        if len(links._unknown) >= links.max_unknown:
            self._refuse("full", "%d peer links are waiting for their hello: one more was closed", links.max_unknown)
            return
        links._in.add(self)
        links._unknown.add(self)
        self.send(self._challenge)
        self._deadline = asyncio.get_running_loop().call_later(links.hello_seconds, self._hello_due)

    def _hello_due(self) -> None:
        if not self._known:
            self._refuse("late", "a peer link said no hello within %.1f s: closed", self._links.hello_seconds)

    def _refuse(self, kind: str, message: str, *args: object) -> None:
        """Close the unknown link and say why (rate-limited: strangers choose how often)."""
        peer = None if self.transport is None else self.transport.get_extra_info("peername")
        self._log.log(logging.WARNING, kind, message + " (from %s)", *args, peer)
        self.close()

    def get_buffer(self, sizehint: int) -> memoryview:
        if self._known:
            return super().get_buffer(sizehint)
        # Never empty: the link is closed before its allowance runs out (buffer_updated).
        return memoryview(self._scratch)[: max(1, HELLO_LIMIT - self.read_unknown)]

    def buffer_updated(self, nbytes: int) -> None:
        if self._known:
            super().buffer_updated(nbytes)
            return
        self.read_unknown += nbytes
        super().buffer_updated(nbytes)
        if not self._known and not self.closing and self.read_unknown >= HELLO_LIMIT:
            self._refuse("long", "a peer link sent %d bytes and no hello: closed", self.read_unknown)

    def max_frame(self) -> int:
        return MAX_FRAME if self._known else HELLO_LIMIT - _HEADER.size

    def frame_too_big(self, size: int) -> None:
        if self._known:
            super().frame_too_big(size)
        else:
            self._refuse("long", "a peer link announced a %d-byte hello: closed", size)

    def frame_received(self, data: bytes) -> None:
        if self._known:
            self._links._deliver(data)
            return
        try:
            hello: _Hello | None = _hellos.decode(data)
        except msgspec.DecodeError:
            hello = None
        links = self._links
        if (
            hello is None
            or hello.receiver != links.node_id
            or not hmac.compare_digest(hello.proof, _proof(links._key, self._challenge, hello.sender, links.node_id))
        ):
            self._refuse("hello", "a peer link without a valid hello was closed")
            return
        self._known = True
        links._unknown.discard(self)
        if self._deadline is not None:
            self._deadline.cancel()
        self._scratch = bytearray(_READ_SIZE)

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        if self._deadline is not None:
            self._deadline.cancel()
        self._links._in.discard(self)
        self._links._unknown.discard(self)


class _Peer:
    """This node's road to one other node: opening (batches wait), open, or Redis for good."""

    def __init__(self) -> None:
        self.link: _Outgoing | None = None
        self.waiting: list[bytes] = []
        self.redis = False


class PeerLinks:
    """This node's direct links: a listener for other nodes, and a link to each node sent to."""

    def __init__(
        self,
        node_id: str,
        key: bytes,
        address_of: Callable[[str], Awaitable[str | None]],
        deliver: Callable[[bytes], None],
        by_redis: Callable[[str, list[bytes]], None],
        *,
        hello_seconds: float = HELLO_SECONDS,
        max_unknown: int = MAX_UNKNOWN,
    ) -> None:
        """``address_of(node)``: the peer address a node advertises (None: none);
        ``deliver(data)``: a batch from another node; ``by_redis(node, batches)``: send
        these to ``node``'s Redis inbox instead (it cannot be reached directly).
        ``hello_seconds`` and ``max_unknown``: see :data:`HELLO_SECONDS` and
        :data:`MAX_UNKNOWN`. A ``node_id`` longer than :data:`MAX_NODE_ID` characters is
        refused (ValueError): its hellos would not fit in :data:`HELLO_LIMIT`."""
        if len(node_id.encode()) > MAX_NODE_ID:
            raise ValueError(f"a node id has at most {MAX_NODE_ID} characters (a peer link's hello must fit)")
        self.node_id = node_id
        self.hello_seconds = hello_seconds
        self.max_unknown = max_unknown
        self._key = key
        self._address_of = address_of
        self._deliver = deliver
        self._by_redis = by_redis
        self._out: dict[str, _Peer] = {}
        self._in: set[_Incoming] = set()
        self._unknown: set[_Incoming] = set()  # of _in, those whose hello is not accepted yet
        #: What links can make this node log; a stranger's link must not flood the log.
        self._log = LogLimiter(logger)
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> int:
        """Listen for other nodes on ``host``:``port``; the port listened on."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(lambda: _Incoming(self), host, port)
        return int(self._server.sockets[0].getsockname()[1])

    # -- sending ------------------------------------------------------------------------

    def send(self, node: str, data: bytes) -> bool:
        """Send one batch to ``node`` on its link (opening it first if need be); False:
        ``node`` is written to on Redis (the caller sends it there)."""
        out = self._out.get(node)
        if out is None:
            out = self._out[node] = _Peer()
            self._background(self._open(node, out))
        if out.redis:
            return False
        if out.link is not None:
            if out.link.send(data):
                _SENT_DIRECT.inc()
                return True
            # The link broke or was cut: what was in flight is lost; the next batch opens a new one.
            self._out.pop(node, None)
            return self.send(node, data)
        out.waiting.append(data)
        return True

    async def _open(self, node: str, out: _Peer) -> None:
        link: _Outgoing | None = None
        try:
            async with asyncio.timeout(CONNECT_SECONDS):
                try:
                    address = await self._address_of(node)
                except Exception as error:
                    # Redis is out of reach (where the address is): so is the inbox, so the
                    # batches are lost either way; the next one tries again.
                    logger.warning("node %s's peer address not read: %s", node, error)
                    self._forget(node, out)
                    return
                if address is None:
                    raise ConnectionError("it advertises no peer address")
                host, _, port = address.rpartition(":")
                loop = asyncio.get_running_loop()
                _, link = await loop.create_connection(
                    lambda: _Outgoing(self._log, lambda lost: self._lost(node, out, lost)), host.strip("[]"), int(port)
                )
                challenge = await link.challenge
        except (OSError, ValueError, TimeoutError) as error:
            if link is not None:
                link.close()
            logger.warning("no direct link to node %s (%s): it is sent to on Redis", node, error or "timed out")
            out.redis = True
            waiting, out.waiting = out.waiting, []
            if waiting:
                self._by_redis(node, waiting)
            return
        if self._out.get(node) is not out:
            link.close()  # forgotten meanwhile (it stopped beating, or this node stops)
            return
        link.send(_encoder.encode(_Hello(self.node_id, node, _proof(self._key, challenge, self.node_id, node))))
        for data in out.waiting:
            if link.send(data):
                _SENT_DIRECT.inc()
        out.waiting = []
        out.link = link

    def _lost(self, node: str, out: _Peer, link: _Outgoing) -> None:
        """An open link closed: the next batch opens a new one."""
        if self._out.get(node) is out and out.link is link:
            del self._out[node]

    def forget(self, node: str) -> None:
        """``node`` stopped beating: close the link to it and forget it (node ids are never
        reused, so nothing is sent to it again)."""
        out = self._out.get(node)
        if out is not None:
            self._forget(node, out)

    def _forget(self, node: str, out: _Peer) -> None:
        if self._out.get(node) is out:
            del self._out[node]
        out.waiting = []
        if out.link is not None:
            out.link.close()

    # -- stopping -----------------------------------------------------------------------

    def _background(self, coroutine: Awaitable[None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def close(self) -> None:
        """Stop listening and close every link."""
        for task in self._tasks:
            task.cancel()
        for out in self._out.values():
            if out.link is not None:
                out.link.close()
        for link in list(self._in):
            link.close()
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
        self._out.clear()
