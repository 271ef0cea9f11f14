"""This process as one member of the service, and the questions only the whole service answers.

A :class:`Cluster` is built once, by :meth:`Cluster.start`, before the live rooms, and handed
down: to the registry (room leases), the edge's router (the post to other nodes) and the
features (the service-wide questions, and the proxies that stand here for other nodes'
connections). A server alone on its Redis is a cluster of one: the same object and the same
answers, never a ``None`` to check.

Every service-wide question is answered from Redis, never from this process's rooms or
connections, so every node gives the same answer whichever node holds what it is about:
the rooms a player races in (:meth:`Cluster.seats_of`), their connections on the other nodes
(:meth:`Cluster.connections_elsewhere`), and the state of their ranked daily attempt
(:meth:`Cluster.daily_attempt`).
"""

from __future__ import annotations

import enum
import errno
import logging
import socket
from dataclasses import dataclass

from protocol.messages import RoomSummary
from server.cluster.leases import RoomLeases
from server.cluster.lobby import DailyLine
from server.cluster.node import PEERS_FRESH, Node, new_node_id
from server.cluster.node_mail import NodeMail
from server.cluster.peers import PeerLinks
from server.cluster.proxies import Proxies
from server.cluster.schedulers import TournamentLeases
from server.config import Config
from server.connections.link import ClientLink
from server.rooms.record import decode_record
from server.storage.connection import Storage, StoreUnavailable
from server.storage.nodes import NodeStore
from server.storage.players import PlayerStore
from server.storage.rooms import RoomStore

logger = logging.getLogger("server.nodes")

#: What a ranked daily attempt stored before attempts named their room holds.
_UNNAMED_ATTEMPT = "1"


class DailyAttempt(enum.Enum):
    """Where a player's ranked attempt at one game's daily deal of one day stands."""

    NOT_STARTED = "not-started"
    #: Started and not over: its player could copy what they watch.
    RACING = "racing"
    #: Its race is over (finished, resigned, out of time), or its room is gone.
    OVER = "over"


@dataclass(eq=False)
class Cluster:
    """This node of the service (its id, heartbeat, leases and post) and the service-wide port."""

    node: Node
    leases: RoomLeases
    mail: NodeMail
    #: The stand-ins here for other nodes' connections to the rooms this node runs.
    proxies: Proxies
    #: Which tournaments this node schedules (one lease per tournament), by kind.
    tournaments: dict[str, TournamentLeases]
    _players: PlayerStore
    _rooms: RoomStore

    @classmethod
    async def start(
        cls, storage: Storage, config: Config, secret: bytes, address: str, node_id: str | None = None
    ) -> Cluster:
        """Join the service on ``storage``: listen for the other nodes' direct links, write
        the first heartbeat. ``secret`` is the service's (the direct links' key is derived
        from it); ``address`` is where clients reach this node (``host:port``, the port
        already bound); ``node_id`` keeps an id across restarts (None: a new one)."""
        store = NodeStore(storage)
        node_id = node_id or new_node_id()
        # The post first: its peer port is part of what the node's heartbeat says.
        mail = NodeMail(store, node_id, secret)
        try:
            port = await listen_for_peers(mail.peers, config)
            host = advertised_host(config)
            peer = f"[{host}]:{port}" if ":" in host else f"{host}:{port}"
            node = Node(store, address, config.node_ttl, node_id, peer)
            await node.start()
        except BaseException:
            await mail.close()
            raise
        leases = RoomLeases(store, node.id, config.node_ttl)
        tournaments = {kind: TournamentLeases(store, kind, node.id, config.node_ttl) for kind in ("arena", "bracket")}
        return cls(node, leases, mail, Proxies(mail), tournaments, PlayerStore(storage), RoomStore(storage))

    async def stop(self) -> None:
        """Send what waits for other nodes (a second at most), close the links, and leave."""
        await self.mail.close()
        try:
            for scheduler in self.tournaments.values():
                await scheduler.stop()
        except StoreUnavailable as error:
            logger.warning("tournament leases not given up (they lapse by themselves): %s", error)
        await self.node.stop()

    async def scheduled(self, kind: str, tournaments: list[str]) -> set[str]:
        """Which of ``tournaments`` (the ones of ``kind``, ``arena`` or ``bracket``, listed
        now) this node schedules: pairs an arena's players, opens and closes a bracket's
        rounds. One node at a time each, service-wide (:mod:`server.cluster.schedulers`)."""
        return await self.tournaments[kind].scheduled(tournaments)

    @property
    def id(self) -> str:
        """This node's id."""
        return self.node.id

    async def alive(self, nodes: set[str], fresh: float = PEERS_FRESH) -> set[str]:
        """Which of ``nodes`` beat (this one always does), from a view at most ``fresh`` s old."""
        return await self.node.alive(nodes, fresh)

    def proxy(self, origin: str, link_id: int, player: str, name: str, bot: bool) -> ClientLink:
        """The stand-in here for connection ``link_id`` of node ``origin`` (``player``'s):
        what is sent to it goes to that connection."""
        return self.proxies.get(origin, link_id, player, name, bot)

    async def seats_of(self, player: str) -> list[str]:
        """The unfinished rooms ``player`` races in, on any node."""
        return await self.node.store.seats(player)

    async def seat_changes(self, code: str, changes: dict[str, bool]) -> None:
        """Players who took (True) or gave up (False) a racing seat in room ``code``."""
        await self.node.store.seat_changes(code, changes)

    async def owners(self, codes: list[str]) -> dict[str, str | None]:
        """The node holding each room's lease (None: nobody), in one round trip."""
        return await self.node.store.owners(codes)

    async def connected(self, player: str, link: int, open_: bool) -> None:
        """Record that connection ``link`` of this node, ``player``'s, opened (or closed)."""
        await self.node.store.connected(player, self.node.id, link, open_)

    async def connections_elsewhere(self, player: str) -> int:
        """How many connections ``player`` has open on the other live nodes (those of nodes
        that stopped beating are forgotten on the way)."""
        found = await self.node.store.connections(player)
        elsewhere = [(node, link) for node, link in found if node != self.node.id]
        alive = await self.node.alive({node for node, _ in elsewhere})
        await self.node.store.forget_connections(player, [(n, i) for n, i in elsewhere if n not in alive])
        return sum(node in alive for node, _ in elsewhere)

    async def daily_attempt(self, game: str, date: str, player: str) -> DailyAttempt:
        """Where ``player``'s ranked attempt at the daily ``game`` of ``date`` stands, read
        from its room's stored record: the same on every node, and never "over" before the
        room's finishing step is stored. An attempt stored before attempts named their room
        counts as racing all its day (it cannot be told from a live one)."""
        room = await self._players.daily_attempt_room(game, date, player)
        if room is None:
            return DailyAttempt.NOT_STARTED
        if room == _UNNAMED_ATTEMPT:
            return DailyAttempt.RACING
        stored = await self._rooms.load(room)
        if stored is None:
            return DailyAttempt.OVER
        record = decode_record(stored.record)
        return DailyAttempt.OVER if record.state == "finished" else DailyAttempt.RACING

    async def others_lobby(self) -> tuple[list[RoomSummary], list[DailyLine]]:
        """The public rooms and the live daily attempts the other live nodes run (as of their
        last heartbeat)."""
        return await self.node.others_lobby()


def peer_listen_host(config: Config) -> str:
    """The address the peer port listens on: PEER_HOST, else ADVERTISE_HOST, else HOST."""
    return config.peer_host or config.advertise_host or config.host


async def listen_for_peers(peers: PeerLinks, config: Config) -> int:
    """Open the peer port on :func:`peer_listen_host`; the port. When PEER_HOST is unset and
    ADVERTISE_HOST is no address of this machine (it names the far side of a NAT, say), the
    port listens on HOST instead, with a warning: the node still starts, reachable as before."""
    host = peer_listen_host(config)
    try:
        return await peers.start(host, config.peer_port)
    except OSError as error:
        if config.peer_host or host == config.host or not _not_here(error):
            raise
    logger.warning(
        "the peer port cannot listen on ADVERTISE_HOST %s (not an address of this machine): it listens on "
        "HOST %s; set PEER_HOST to an internal network's address",
        host,
        config.host,
    )
    return await peers.start(config.host, config.peer_port)


def _not_here(error: OSError) -> bool:
    """Whether ``error``, from listening on a host, means no address of this machine is it."""
    return isinstance(error, socket.gaierror) or error.errno == errno.EADDRNOTAVAIL


def advertised_host(config: Config) -> str:
    """The host other nodes reach this one at: ADVERTISE_HOST, else the peer port's
    address (:func:`peer_listen_host`) unless it means every interface, else this machine's
    address (in a container, the container's)."""
    if config.advertise_host:
        return config.advertise_host
    host = peer_listen_host(config)
    if host not in ("", "0.0.0.0", "::"):
        return host
    try:
        return socket.gethostbyname(socket.gethostname())
    except OSError:
        return "127.0.0.1"
