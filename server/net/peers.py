"""Direct links between nodes: the forwarder's messages without the hop through Redis.

Every node listens on a *peer port* (``PEER_PORT``; 0, the default, takes any free port) and
says where in its heartbeat (``"peer": "host:port"``). To send to another node, a node opens
one TCP connection to it and keeps it; each message batch is a frame, a 4-byte big-endian
length and then the bytes, exactly what the node would have published on the other's Redis
inbox (:mod:`server.net.inbox`).

**Who may talk.** The listening node opens with a 16-byte challenge; the connecting node
answers with a hello naming both nodes and an HMAC of the challenge under a key derived
from the service's secret (stored in Redis, so every node of the service has it and nobody
else does). Anything else, or nothing within :data:`HELLO_SECONDS`, closes the connection.

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
nothing here, and the frame format is the six lines of :class:`_Link`.
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
from typing import Final

import msgspec

from server.ops.metrics import NODE_BATCHES_SENT

logger = logging.getLogger("server.nodes")

_HEADER: Final = struct.Struct(">I")
#: The largest frame read from a peer: a batch of a loop turn's messages to one node.
MAX_FRAME: Final = 64 * 1024 * 1024
#: Bytes waiting for a peer that does not read before its link is cut.
WRITE_LIMIT: Final = 32 * 1024 * 1024
#: Seconds to open a link and say hello before the peer is written to on Redis instead.
CONNECT_SECONDS: Final = 1.0
#: Seconds a connecting node has to answer the challenge.
HELLO_SECONDS: Final = 5.0
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


class _Link(asyncio.Protocol):
    """One TCP connection, either way: frames in, ``on_frame`` called with each."""

    def __init__(
        self,
        on_frame: Callable[[_Link, bytes], None],
        on_lost: Callable[[_Link], None],
        on_made: Callable[[_Link], None] | None = None,
    ) -> None:
        self.on_frame = on_frame
        self.on_lost = on_lost
        self.on_made = on_made
        self.transport: asyncio.Transport | None = None
        self._buffer = bytearray()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        if self.on_made is not None:
            self.on_made(self)

    def data_received(self, data: bytes) -> None:
        buffer = self._buffer
        buffer += data
        while len(buffer) >= _HEADER.size and self.transport is not None:
            (size,) = _HEADER.unpack_from(buffer)
            if size > MAX_FRAME:
                self.close()
                return
            end = _HEADER.size + size
            if len(buffer) < end:
                return
            payload = bytes(buffer[_HEADER.size : end])
            del buffer[:end]
            self.on_frame(self, payload)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None
        self.on_lost(self)

    def send(self, data: bytes) -> bool:
        """Write one frame; False when the link is closed (or was cut for not reading)."""
        transport = self.transport
        if transport is None or transport.is_closing():
            return False
        if transport.get_write_buffer_size() > WRITE_LIMIT:
            logger.warning("a peer stopped reading: its link is cut")
            self.close()
            return False
        transport.write(_HEADER.pack(len(data)) + data)
        return True

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class _Outgoing:
    """The link to one peer: opening (messages wait), open, or given up (use Redis)."""

    def __init__(self) -> None:
        self.link: _Link | None = None
        self.waiting: list[bytes] = []
        self.challenge: asyncio.Future[bytes] = asyncio.get_running_loop().create_future()
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
    ) -> None:
        """``address_of(node)``: the peer address a node advertises (None: none);
        ``deliver(data)``: a batch from another node; ``by_redis(node, batches)``: send
        these to ``node``'s Redis inbox instead (it cannot be reached directly)."""
        self.node_id = node_id
        self._key = key
        self._address_of = address_of
        self._deliver = deliver
        self._by_redis = by_redis
        self._out: dict[str, _Outgoing] = {}
        self._in: set[_Link] = set()
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self, host: str, port: int) -> int:
        """Listen for other nodes on ``host``:``port``; the port listened on."""
        loop = asyncio.get_running_loop()
        self._server = await loop.create_server(self._incoming, host, port)
        return int(self._server.sockets[0].getsockname()[1])

    # -- sending ------------------------------------------------------------------------

    def send(self, node: str, data: bytes) -> bool:
        """Send one batch to ``node`` on its link (opening it first if need be); False:
        ``node`` is written to on Redis (the caller sends it there)."""
        out = self._out.get(node)
        if out is None:
            out = self._out[node] = _Outgoing()
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

    async def _open(self, node: str, out: _Outgoing) -> None:
        link: _Link | None = None
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
                on_frame, on_lost = self._outgoing_frame(out), self._outgoing_lost(node, out)
                _, link = await loop.create_connection(lambda: _Link(on_frame, on_lost), host.strip("[]"), int(port))
                challenge = await out.challenge
        except (OSError, ValueError, TimeoutError) as error:
            if link is not None:
                link.close()
            logger.warning("no direct link to node %s (%s): it is sent to on Redis", node, error or "timed out")
            out.redis = True
            waiting, out.waiting = out.waiting, []
            if waiting:
                self._by_redis(node, waiting)
            return
        link.send(_encoder.encode(_Hello(self.node_id, node, _proof(self._key, challenge, self.node_id, node))))
        for data in out.waiting:
            if link.send(data):
                _SENT_DIRECT.inc()
        out.waiting = []
        out.link = link

    def _outgoing_frame(self, out: _Outgoing) -> Callable[[_Link, bytes], None]:
        def on_frame(link: _Link, data: bytes) -> None:
            # The peer speaks once, with the challenge; anything more is a protocol error.
            if out.challenge.done() or len(data) != _CHALLENGE_BYTES:
                link.close()
            else:
                out.challenge.set_result(data)

        return on_frame

    def _outgoing_lost(self, node: str, out: _Outgoing) -> Callable[[_Link], None]:
        def on_lost(link: _Link) -> None:
            if not out.challenge.done():
                out.challenge.set_exception(ConnectionError("the peer closed the link"))
            if self._out.get(node) is out and out.link is link:
                del self._out[node]

        return on_lost

    def forget(self, node: str) -> None:
        """``node`` stopped beating: close the link to it and forget it (node ids are never
        reused, so nothing is sent to it again)."""
        out = self._out.get(node)
        if out is not None:
            self._forget(node, out)

    def _forget(self, node: str, out: _Outgoing) -> None:
        if self._out.get(node) is out:
            del self._out[node]
        out.waiting = []
        if out.link is not None:
            out.link.close()

    # -- receiving ----------------------------------------------------------------------

    def _incoming(self) -> _Link:
        challenge = secrets.token_bytes(_CHALLENGE_BYTES)
        state: dict[str, bool] = {"known": False}

        def on_frame(link: _Link, data: bytes) -> None:
            if state["known"]:
                self._deliver(data)
                return
            try:
                hello = _hellos.decode(data)
            except msgspec.DecodeError:
                hello = None
            expected = b"" if hello is None else _proof(self._key, challenge, hello.sender, self.node_id)
            if hello is None or hello.receiver != self.node_id or not hmac.compare_digest(hello.proof, expected):
                logger.warning("a peer link without a valid hello was closed")
                link.close()
                return
            state["known"] = True

        def on_lost(link: _Link) -> None:
            self._in.discard(link)

        def on_made(link: _Link) -> None:
            self._in.add(link)
            link.send(challenge)
            asyncio.get_running_loop().call_later(HELLO_SECONDS, lambda: None if state["known"] else link.close())

        return _Link(on_frame, on_lost, on_made)

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
