"""This server process as one node of the service: its id, its heartbeat, its view of the
other nodes, and its share of the lobby.

A node's heartbeat is a key with a short TTL holding its address and load, rewritten a few
times per TTL: a node that dies or hangs is gone from Redis within the TTL, without anybody
having to notice. The lobby is every node's public rooms and live daily attempts: each node
publishes its own lists (with the same TTL) and reads the others'.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import secrets
import time
from collections.abc import Callable
from typing import Final

import msgspec

from protocol.messages import RoomSummary
from server.cluster.lobby import DailyLine
from server.ops.metrics import NODES_ALIVE
from server.ops.stopping import stop_requested
from server.storage.connection import StoreUnavailable
from server.storage.nodes import NodeStore

logger = logging.getLogger("server.nodes")

#: Seconds the view of which nodes are alive is trusted before it is read again.
PEERS_FRESH: Final = 0.5
_summaries = msgspec.msgpack.Decoder(list[RoomSummary])
_daily_lines = msgspec.msgpack.Decoder(list[DailyLine])
_encoder = msgspec.msgpack.Encoder()


def new_node_id() -> str:
    """A node id: unique for every process start (a restarted process is a new node)."""
    return f"{os.getpid()}-{secrets.token_hex(4)}"


async def peer_address(store: NodeStore, node: str) -> str | None:
    """Where ``node`` takes direct links (``host:port``), as its heartbeat says; None for a
    node that advertises none (or no longer beats)."""
    info = await store.beat_of(node)
    peer = None if info is None else info.get("peer")
    return peer if isinstance(peer, str) else None


class Node:
    """One server process in the service, identified by :attr:`id`."""

    def __init__(
        self, store: NodeStore, address: str, ttl: float, node_id: str | None = None, peer: str | None = None
    ) -> None:
        """``address``: where clients reach this node; ``ttl``: seconds the heartbeat (and
        every lease) lives unrenewed; ``node_id``: None for a new one; ``peer``: where other
        nodes open direct links to this one (``host:port``, :mod:`server.cluster.peers`),
        advertised in its heartbeat (None: nowhere, every node writes to its Redis inbox)."""
        self.id = node_id or new_node_id()
        self.store = store
        self.address = address
        self.peer: Final[str | None] = peer
        self.ttl = ttl
        self._alive: set[str] = set()
        self._alive_at = float("-inf")
        #: How many times this node went longer than its TTL without a heartbeat written (a
        #: pause, a cut from Redis): each time, the other nodes may have taken it for gone and
        #: dropped what they held for it. Whoever holds state that depends on the other nodes
        #: compares it with the count it last saw.
        self.lapses = 0
        self._beaten_at = float("-inf")  # monotonic send time of the last heartbeat written

    def current(self) -> bool:
        """Whether the last heartbeat written is within its TTL: past it the other nodes may
        have taken this one for gone and its rooms over (it is fenced until it beats again)."""
        return time.monotonic() - self._beaten_at <= self.ttl

    @property
    def ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    async def start(self) -> None:
        sent = time.monotonic()
        await self.beat({}, [], [])
        self._beaten_at = sent
        await self.store.joined(self.id)
        logger.info("node %s up at %s", self.id, self.address)

    async def beat(self, load: dict[str, int], public_rooms: list[RoomSummary], daily: list[DailyLine]) -> None:
        """Write the heartbeat: ``load`` says how busy the node is (rooms, connections),
        ``public_rooms`` and ``daily`` (its live ranked daily attempts) are its share of the lobby."""
        # "schedules": this node takes tournaments' leases (server/cluster/schedulers.py).
        info: dict[str, object] = {"address": self.address, "load": load, "at": int(time.time() * 1000), "schedules": 1}
        if self.peer is not None:
            info["peer"] = self.peer
        await self.store.beat(self.id, info, _encoder.encode(public_rooms), _encoder.encode(daily), self.ttl_ms)

    async def keep_beating(
        self,
        load: Callable[[], dict[str, int]],
        public_rooms: Callable[[], list[RoomSummary]],
        daily: Callable[[], list[DailyLine]],
    ) -> None:
        """Rewrite the heartbeat and the lobby share a few times per TTL, forever; count the
        live nodes once per TTL (for the operator: ``solitaire_nodes_alive``)."""
        for beats in itertools.count(1):
            await asyncio.sleep(self.ttl / 4)
            stop_requested()
            sent = time.monotonic()
            try:
                await self.beat(load(), public_rooms(), daily())
                self._beaten(sent)
                if beats % 4 == 1:
                    await self.count_nodes()
            except StoreUnavailable as error:
                logger.warning("heartbeat not written: %s", error)

    def _beaten(self, sent: float) -> None:
        """A heartbeat sent at ``sent`` was written: count a lapse if the one before may have
        expired first (its TTL ran from no earlier than its own send time)."""
        if sent - self._beaten_at > self.ttl:
            self.lapses += 1
            logger.warning(
                "node %s wrote no heartbeat for %.1f s, past its TTL: the other nodes may have taken it for gone",
                self.id,
                sent - self._beaten_at,
            )
        self._beaten_at = sent

    async def count_nodes(self) -> int:
        """How many nodes beat now (this one included), also shown on ``/metrics``."""
        alive = len(await self.store.listed())
        NODES_ALIVE.set(alive)
        return alive

    async def stop(self) -> None:
        """Leave the service at once (a clean stop; a dead node's keys expire by themselves)."""
        try:
            await self.store.left(self.id)
        except StoreUnavailable as error:
            logger.warning("node %s not unlisted (its heartbeat expires by itself): %s", self.id, error)

    async def alive(self, nodes: set[str], fresh: float = PEERS_FRESH) -> set[str]:
        """Which of ``nodes`` are alive (this one always is), from a view at most ``fresh`` s old
        for nodes seen alive; a node not seen alive is asked about at once."""
        others = nodes - {self.id}
        now = time.monotonic()
        if now - self._alive_at > fresh or not others <= self._alive:
            self._alive = await self.store.alive(others | self._alive)
            self._alive_at = now
        return (others & self._alive) | (nodes & {self.id})

    def suspect(self, node: str) -> None:
        """``node`` did not answer: ask Redis whether it still beats next time."""
        self._alive.discard(node)

    async def others_lobby(self) -> tuple[list[RoomSummary], list[DailyLine]]:
        """The other live nodes' shares of the lobby (as of their last heartbeat): the public
        rooms they run and their live daily attempts."""
        listed = await self.store.listed()
        NODES_ALIVE.set(len(listed))
        rooms: list[RoomSummary] = []
        daily: list[DailyLine] = []
        for public, attempts in await self.store.lobbies(set(listed) - {self.id}):
            try:
                rooms += _summaries.decode(public) if public is not None else []
                daily += _daily_lines.decode(attempts) if attempts is not None else []
            except msgspec.DecodeError:
                logger.warning("a node published an unreadable lobby")
        return rooms, daily
