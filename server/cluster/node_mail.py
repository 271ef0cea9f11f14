"""What the nodes of the service send each other, and how it travels (the forwarder's post).

Messages (:mod:`server.cluster.inbox`) posted during one event-loop turn leave as one batch per
receiving node: on the direct link to that node (:mod:`server.cluster.peers`), or on its Redis
inbox (a pub/sub channel; sharded on a Cluster) when it cannot be reached directly. A node
takes one road at a time, so its messages arrive in the order they were posted. Every node
also reads its own inbox, for nodes that cannot reach it directly (or run an older version).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging

import msgspec

from server.cluster.inbox import DECODER, ENCODER, Message
from server.cluster.node import peer_address
from server.cluster.peers import PeerLinks, link_key
from server.ops.metrics import NODE_BATCHES_SENT
from server.ops.stopping import stop_tasks
from server.storage.connection import StoreUnavailable
from server.storage.nodes import NodeStore

logger = logging.getLogger("server.nodes")


class NodeMail:
    """This node's post: :meth:`post` sends; what arrives is read with :meth:`arrived`.

    What arrives is pulled by its one reader (the router, :mod:`server.net.forwarding`), not
    pushed to a handler: the reader is built from the features, which are built from the
    cluster this post is part of, so it exists only after the post, and links may deliver
    before it does. Arrivals wait in order until read, none lost, and a read takes every one
    waiting: the reader wakes once per batch of arrivals, not once per message.
    """

    def __init__(self, store: NodeStore, node_id: str, secret: bytes) -> None:
        """The post of node ``node_id`` (its inbox and the others' on ``store``).
        ``secret``: the service's secret, from which the direct links' key is derived."""
        self.node_id = node_id
        self.store = store
        self._arrivals: list[Message] = []
        self._reader: asyncio.Future[None] | None = None  # resolved when something arrives
        #: Direct links to the other nodes (not listening until :meth:`PeerLinks.start`);
        #: to a node that has none, every batch goes through Redis.
        self.peers = PeerLinks(
            node_id, link_key(secret), functools.partial(peer_address, store), self.received, self.send_by_redis
        )
        self._stopping = False  # set by stop_listening: the inbox reader ends
        self._outbox: dict[str, list[Message]] = {}
        self._redis_out: dict[str, list[bytes]] = {}
        self._writer: asyncio.Task[None] | None = None

    async def arrived(self) -> list[Message]:
        """Every message that arrived since the last call, in order of arrival (a message
        posted to this node included), waiting for one if none has. One reader at a time."""
        if not self._arrivals:
            self._reader = reader = asyncio.get_running_loop().create_future()
            try:
                await reader
            finally:
                self._reader = None
        arrivals, self._arrivals = self._arrivals, []
        return arrivals

    def _wake(self) -> None:
        reader = self._reader
        if reader is not None and not reader.done():
            reader.set_result(None)

    def post(self, node: str, message: Message) -> None:
        """Send ``message`` to ``node`` (to this one: it arrives here at once)."""
        if node == self.node_id:
            self._arrivals.append(message)
            self._wake()
            return
        if not self._outbox:
            asyncio.get_running_loop().call_soon(self._flush)
        self._outbox.setdefault(node, []).append(message)

    def _flush(self) -> None:
        """Send what piled up for every node during one event-loop turn: a batch per node,
        on its direct link or, for a node without one, on its Redis inbox."""
        outbox, self._outbox = self._outbox, {}
        peers = self.peers
        for node, batch in outbox.items():
            data = ENCODER.encode(batch)
            if not peers.send(node, data):
                self.send_by_redis(node, [data])

    def send_by_redis(self, node: str, batches: list[bytes]) -> None:
        """Publish ``batches`` on ``node``'s inbox, in order, after what waits for it already."""
        NODE_BATCHES_SENT.labels("redis").inc(len(batches))
        self._redis_out.setdefault(node, []).extend(batches)
        if self._writer is None:
            self._writer = asyncio.ensure_future(self._write())

    async def _write(self) -> None:
        """Publish what waits for the Redis inboxes: what piled up during the previous send
        leaves in one round trip, a publish per batch, each node's in order."""
        try:
            while self._redis_out:
                waiting, self._redis_out = self._redis_out, {}
                for round_ in itertools.zip_longest(*waiting.values()):
                    sends = {node: data for node, data in zip(waiting, round_, strict=True) if data is not None}
                    try:
                        await self.store.send(sends)
                    except StoreUnavailable as error:
                        logger.warning("messages to nodes %s lost: %s", ", ".join(sends), error)
        finally:
            self._writer = None

    def forget(self, nodes: set[str]) -> None:
        """These nodes stopped beating: their direct links close."""
        for node in nodes:
            self.peers.forget(node)

    def received(self, data: bytes) -> None:
        """A batch of messages from another node, off its direct link or this node's inbox."""
        try:
            messages = DECODER.decode(data)
        except msgspec.DecodeError:
            logger.warning("unreadable message from another node")
            return
        self._arrivals += messages
        self._wake()

    async def listen(self) -> None:
        """Read this node's inbox until the server stops (subscribing again after a Redis
        outage). redis-py may turn a cancellation inside a read into a connection error, so
        the loop also ends after :meth:`stop_listening`, not only on cancellation."""
        while not self._stopping:
            try:
                subscription = await self.store.subscribe(self.node_id)
            except StoreUnavailable as error:
                logger.warning("inbox not subscribed: %s", error)
                await asyncio.sleep(0.5)
                continue
            try:
                while not self._stopping:
                    data = await self.store.receive(subscription)
                    if data is not None:
                        self.received(data)
            except StoreUnavailable as error:
                if self._stopping:
                    return
                logger.warning("inbox lost, subscribing again: %s", error)
                await asyncio.sleep(0.2)
            finally:
                with contextlib.suppress(Exception):
                    await subscription.aclose()

    def stop_listening(self) -> None:
        """The server stops: :meth:`listen` ends (what arrives on the direct links is still read)."""
        self._stopping = True

    async def close(self) -> None:
        """Send what is waiting (a second at most), then close the links."""
        if self._outbox:
            self._flush()
        if self._writer is not None:
            writer = self._writer
            await asyncio.wait([writer], timeout=1.0)
            await stop_tasks([writer])
        await self.peers.close()
