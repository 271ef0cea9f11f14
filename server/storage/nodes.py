"""What the server processes of one service share in Redis: who is alive, who owns which
room, where each player races, the lobby, and a channel per node.

- **Heartbeats.** A node's key holds its address and load (JSON) with a TTL of a few seconds,
  rewritten while it runs: a node that dies simply stops being there (no counter to drift).
- **Room leases.** ``sr:room:{CODE}:owner`` holds ``<node>:<token>`` with a TTL; the token
  comes from ``INCR sr:room:{CODE}:epoch``, so every owner of a room has a token no earlier
  owner had, and the room's version key is stamped with it (:mod:`server.storage.lease_rule`):
  the room's commit script (:mod:`server.storage.rooms`) writes only under the last token
  granted. All in the room's hash tag: one slot.
- **Singleton leases** (``sr:lease:<name>``): a job the service runs once (the quick-match
  matcher, the deal supplies) runs on the node holding the lease.
- **Seats** (``sr:seats:{player}``): the unfinished rooms a player races in, so a player
  resuming on any node gets every seat back, and the per-player room limit holds across nodes.
- **Inboxes**: one pub/sub channel per node (sharded pub/sub on a Cluster), for the messages
  of a node that cannot be reached on a direct link (server/cluster/peers.py).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from redis import exceptions as redis_errors
from redis.asyncio.client import PubSub
from redis.asyncio.cluster import ClusterPubSub

from server.storage.connection import Storage, as_int, as_list, as_text, cancelled_in_flight
from server.storage.keys import Keys
from server.storage.lease_rule import GRANT, LEASE_STANDS
from server.storage.pipelined import Arg

#: KEYS: owner, epoch, version, record. ARGV: node, ttl ms, "1" if the room must exist.
#: Returns {1, lease} when taken, {0, holder} when held, {-1, ""} for no such room.
_CLAIM: Final = (
    GRANT
    + """
if ARGV[3] == '1' and redis.call('EXISTS', KEYS[4]) == 0 then return {-1, ''} end
local held = redis.call('GET', KEYS[1])
if held then return {0, held} end
return {1, grant(KEYS[1], KEYS[2], KEYS[3], ARGV[1], ARGV[2])}
"""
)

#: KEYS: owner, epoch, version. ARGV: the lease seen held, node, ttl ms. Takes the room over
#: from a dead holder (no heartbeat): only if the lease is still exactly the one seen, with
#: a new token, so the old holder's writes are fenced even if it was only paused.
_STEAL: Final = (
    GRANT
    + """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return '' end
return grant(KEYS[1], KEYS[2], KEYS[3], ARGV[2], ARGV[3])
"""
)

#: KEYS: lease key. ARGV: holder, ttl ms. 1 renewed, 2 taken again (it had expired and
#: nobody held it), 0 held by another. For the singleton leases.
_RENEW: Final = """
local held = redis.call('GET', KEYS[1])
if held == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if not held then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) return 2 end
return 0
"""

#: Renews room leases. KEYS: owner and epoch of each room in turn; ARGV: each room's lease,
#: then the ttl ms. For each room, in order: 1 renewed, 2 taken again, 0 lost. An expired
#: lease is taken again only while it stands as the commit script counts it
#: (server/storage/lease_rule.py): a lease granted since, even one given up again (a drain),
#: raised the epoch, and then the room may have changed under another owner. One MGET reads
#: every owner: a renewal costs a room one PEXPIRE.
_RENEW_ROOMS: Final = (
    LEASE_STANDS
    + """
local ttl, rooms, owners, answers = ARGV[#ARGV], #ARGV - 1, {}, {}
for i = 1, rooms do owners[i] = KEYS[2 * i - 1] end
local held = redis.call('MGET', unpack(owners))
for i = 1, rooms do
  local lease = ARGV[i]
  if held[i] == lease then
    redis.call('PEXPIRE', owners[i], ttl)
    answers[i] = 1
  elseif not stands_with(held[i], KEYS[2 * i], lease) then
    answers[i] = 0
  else
    redis.call('SET', owners[i], lease, 'PX', ttl)
    answers[i] = 2
  end
end
return answers
"""
)
#: Rooms per renewal script on one Redis (Lua's ``unpack`` has a stack limit).
_RENEWED_AT_ONCE: Final = 500

#: KEYS: owner. ARGV: lease. Deletes the lease only if it is still this one.
_RELEASE: Final = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""


@dataclass(frozen=True, slots=True)
class Claim:
    """The answer to a claim: ``lease`` if taken, else the ``holder``'s node (None: no room)
    and the lease it holds (``held``)."""

    lease: str | None
    holder: str | None
    held: str = ""


def node_of(lease: str) -> str:
    """The node id in a lease value ``<node>:<token>``."""
    return lease.rpartition(":")[0]


class NodeStore:
    """The shared coordination keys of one :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self.keys = Keys(storage.prefix)
        self._claim = storage.script(_CLAIM)
        self._steal = storage.script(_STEAL)
        self._renew = storage.script(_RENEW)
        self._renew_rooms = storage.script(_RENEW_ROOMS)
        self._release = storage.script(_RELEASE)

    # -- heartbeats --------------------------------------------------------------------

    async def beat(self, node: str, info: dict[str, Any], lobby: bytes, daily: bytes, ttl_ms: int) -> None:
        """Say that ``node`` is alive for ``ttl_ms`` more, with ``info`` (address, load), and
        publish its share of the lobby (``lobby``: public rooms; ``daily``: live ranked daily
        attempts, for those allowed to watch them; for as long): one round trip. The node is
        listed again too: a node paused past its TTL was pruned from the listing meanwhile."""
        with self._storage.guard(f"heartbeat of node {node}"):
            # Keys in different Cluster slots: a pipeline, not a transaction.
            async with self._storage.redis.pipeline(transaction=False) as pipe:
                pipe.set(self.keys.node(node), json.dumps(info), px=ttl_ms)
                pipe.set(self.keys.node_lobby(node), lobby, px=ttl_ms)
                pipe.set(self.keys.node_daily(node), daily, px=ttl_ms)
                pipe.sadd(self.keys.nodes(), node)
                await pipe.execute()

    async def joined(self, node: str) -> None:
        with self._storage.guard(f"list node {node}"):
            await self._storage.redis.sadd(self.keys.nodes(), node)

    async def left(self, node: str) -> None:
        """``node`` stopped: its heartbeat and listing go at once."""
        with self._storage.guard(f"unlist node {node}"):
            await self._storage.redis.delete(self.keys.node(node))
            await self._storage.redis.srem(self.keys.nodes(), node)

    async def alive(self, nodes: Iterable[str]) -> set[str]:
        """Which of ``nodes`` have a heartbeat now."""
        wanted = sorted(set(nodes))
        if not wanted:
            return set()
        with self._storage.guard("check the nodes' heartbeats"):
            # One key per command: node keys live in different Cluster slots.
            async with self._storage.redis.pipeline(transaction=False) as pipe:
                for node in wanted:
                    pipe.exists(self.keys.node(node))
                found = await pipe.execute()
        return {node for node, exists in zip(wanted, found, strict=True) if exists}

    async def beat_of(self, node: str) -> dict[str, Any] | None:
        """What ``node``'s heartbeat says, or None when it has none."""
        with self._storage.guard(f"read node {node}'s heartbeat"):
            beat = await self._storage.redis.get(self.keys.node(node))
        if beat is None:
            return None
        info = json.loads(beat)
        return info if isinstance(info, dict) else None

    async def listed(self) -> dict[str, dict[str, Any]]:
        """Every live node, with what its heartbeat says; listed nodes without one are pruned."""
        with self._storage.guard("list the nodes"):
            nodes = sorted(as_text(n) for n in await self._storage.redis.smembers(self.keys.nodes()))
            async with self._storage.redis.pipeline(transaction=False) as pipe:
                for node in nodes:
                    pipe.get(self.keys.node(node))
                beats = await pipe.execute()
            dead = [node for node, beat in zip(nodes, beats, strict=True) if beat is None]
            if dead:
                await self._storage.redis.srem(self.keys.nodes(), *dead)
        return {node: json.loads(beat) for node, beat in zip(nodes, beats, strict=True) if beat is not None}

    # -- room leases --------------------------------------------------------------------

    async def claim(self, code: str, node: str, ttl_ms: int, must_exist: bool = True) -> Claim:
        """Take room ``code``'s owner lease for ``node`` if nobody holds it."""
        keys = self.keys
        reply = await self._claim.run(
            f"claim room {code}",
            [keys.room_owner(code), keys.room_epoch(code), keys.room_version(code), keys.room(code)],
            [node, ttl_ms, "1" if must_exist else "0"],
        )
        status, value = as_list(reply)
        text = as_text(value)
        if as_int(status) == 1:
            return Claim(text, None)
        if as_int(status) == 0:
            return Claim(None, node_of(text), text)
        return Claim(None, None)

    async def steal(self, code: str, held: str, node: str, ttl_ms: int) -> str | None:
        """Take room ``code`` over from the lease ``held`` (its node is dead); the new lease,
        or None if the lease changed meanwhile."""
        keys = self.keys
        value = await self._steal.run(
            f"take room {code} over",
            [keys.room_owner(code), keys.room_epoch(code), keys.room_version(code)],
            [held, node, ttl_ms],
        )
        return as_text(value) or None

    async def owner(self, code: str) -> str | None:
        """The node holding room ``code``'s lease, if any."""
        with self._storage.guard(f"look up the owner of room {code}"):
            value = await self._storage.redis.get(self.keys.room_owner(code))
        return None if value is None else node_of(as_text(value))

    async def owners(self, codes: list[str]) -> dict[str, str | None]:
        """The node holding each room's lease (None: nobody), in one round trip."""
        if not codes:
            return {}
        with self._storage.guard(f"look up the owners of {len(codes)} rooms"):
            async with self._storage.redis.pipeline(transaction=False) as pipe:
                for code in codes:
                    pipe.get(self.keys.room_owner(code))
                values = await pipe.execute()
        return {code: None if v is None else node_of(as_text(v)) for code, v in zip(codes, values, strict=True)}

    async def renew(self, leases: dict[str, str], ttl_ms: int) -> dict[str, bool]:
        """Extend each room's lease (code -> lease) by ``ttl_ms``; code -> still ours."""
        if not leases:
            return {}
        codes = sorted(leases)
        keys = self.keys
        # On a Cluster each room's keys are in a slot of their own: a script a room. The
        # scripts go together, in one round trip off a Cluster.
        per_script = 1 if self._storage.cluster is not None else _RENEWED_AT_ONCE
        runs: list[tuple[Sequence[str], Sequence[Arg]]] = []
        for start in range(0, len(codes), per_script):
            batch = codes[start : start + per_script]
            pairs = [key for code in batch for key in (keys.room_owner(code), keys.room_epoch(code))]
            runs.append((pairs, [*(leases[code] for code in batch), ttl_ms]))
        replies = await self._renew_rooms.run_many(f"renew {len(codes)} room leases", runs)
        results = [answer for reply in replies for answer in as_list(reply)]
        return {code: as_int(result) > 0 for code, result in zip(codes, results, strict=True)}

    async def release(self, code: str, lease: str) -> None:
        await self._release.run(f"release room {code}", [self.keys.room_owner(code)], [lease])

    # -- singleton leases ------------------------------------------------------------------

    async def hold(self, name: str, node: str, ttl_ms: int) -> bool:
        """Take or extend the lease ``name`` for ``node``; False while another node holds it."""
        key = self.keys.lease(name)
        result = await self._renew.run(f"hold the {name} lease", [key], [node, ttl_ms])
        return as_int(result) > 0

    async def let_go(self, name: str, node: str) -> None:
        await self._release.run(f"release the {name} lease", [self.keys.lease(name)], [node])

    # -- seats ----------------------------------------------------------------------------

    async def seat(self, player: str, code: str, racing: bool) -> None:
        """Note (or forget) that ``player`` races in room ``code``."""
        await self.seat_changes(code, {player: racing})

    async def seat_changes(self, code: str, changes: dict[str, bool]) -> None:
        """:meth:`seat` for several players of room ``code`` at once (True: racing there now),
        in one round trip; each player's set is changed on its own (their keys may be in
        different Cluster slots), so a failure may leave some changed and not others."""
        commands = [("SADD" if racing else "SREM", self.keys.seats(player), code) for player, racing in changes.items()]
        await self._storage.send_all(f"note the seats of {len(changes)} player(s) in room {code}", commands)

    async def seats(self, player: str) -> list[str]:
        with self._storage.guard(f"list {player}'s rooms"):
            codes = await self._storage.redis.smembers(self.keys.seats(player))
        return sorted(as_text(code) for code in codes)

    # -- connections -----------------------------------------------------------------------

    async def connections(self, player: str) -> list[tuple[str, int]]:
        """The player's open connections on every node, as (node, connection id)."""
        with self._storage.guard(f"count {player}'s connections"):
            members = await self._storage.redis.smembers(self.keys.connections(player))
        found = []
        for member in members:
            node, _, link = as_text(member).rpartition("/")
            if link.isdigit():
                found.append((node, int(link)))
        return found

    async def connected(self, player: str, node: str, link: int, open_: bool) -> None:
        """Note (or forget) connection ``link`` of ``node`` as the player's."""
        # On the pipelined road (no pool to wait for): thousands of clients may come or go at once.
        command = ("SADD" if open_ else "SREM", self.keys.connections(player), f"{node}/{link}")
        await self._storage.send_all(f"note {player}'s connection", [command])

    async def forget_connections(self, player: str, members: list[tuple[str, int]]) -> None:
        if members:
            with self._storage.guard(f"forget {player}'s connections on stopped nodes"):
                await self._storage.redis.srem(self.keys.connections(player), *[f"{n}/{i}" for n, i in members])

    # -- lobby ------------------------------------------------------------------------------

    async def lobbies(self, nodes: Iterable[str]) -> list[tuple[bytes | None, bytes | None]]:
        """``nodes``' shares of the lobby, one round trip: each node's public rooms and its
        live daily attempts (None where it published none: a node of an older version
        publishes no daily attempts)."""
        wanted = sorted(set(nodes))
        if not wanted:
            return []
        with self._storage.guard("read the other nodes' lobbies"):
            async with self._storage.redis.pipeline(transaction=False) as pipe:
                for node in wanted:
                    pipe.get(self.keys.node_lobby(node))
                    pipe.get(self.keys.node_daily(node))
                found = [None if value is None else bytes(value) for value in await pipe.execute()]
        return list(zip(found[::2], found[1::2], strict=True))

    # -- inboxes ----------------------------------------------------------------------------

    async def send(self, messages: dict[str, bytes]) -> None:
        """Publish each message on its node's inbox (node -> message; sharded pub/sub on a
        Cluster), in one round trip on one Redis."""
        channels = {self.keys.node_inbox(node): message for node, message in messages.items()}
        with self._storage.guard(f"send to node{'s' if len(messages) > 1 else ''} {', '.join(messages)}"):
            cluster = self._storage.cluster
            if cluster is not None:
                # Each inbox lives on its channel's shard: one SPUBLISH each, all at once.
                await asyncio.gather(*(cluster.spublish(channel, data) for channel, data in channels.items()))
            elif len(channels) == 1:
                [(channel, data)] = channels.items()
                await self._storage.redis.publish(channel, data)
            else:
                async with self._storage.redis.pipeline(transaction=False) as pipe:
                    for channel, data in channels.items():
                        pipe.publish(channel, data)
                    await pipe.execute()

    async def subscribe(self, node: str) -> PubSub | ClusterPubSub:
        """A subscription to ``node``'s inbox (read it with ``get_message``)."""
        channel = self.keys.node_inbox(node)
        with self._storage.guard(f"subscribe to node {node}'s inbox"):
            if self._storage.cluster is not None:
                cluster_sub = self._storage.cluster.pubsub()
                await cluster_sub.ssubscribe(channel)
                return cluster_sub
            plain = self._storage.redis.pubsub()
            await plain.subscribe(channel)
            return plain

    async def receive(self, subscription: PubSub | ClusterPubSub, timeout: float = 1.0) -> bytes | None:
        """The next message on an inbox subscription, or None after ``timeout`` seconds."""
        try:
            if isinstance(subscription, ClusterPubSub):
                message = await subscription.get_sharded_message(ignore_subscribe_messages=True, timeout=timeout)
            else:
                message = await subscription.get_message(ignore_subscribe_messages=True, timeout=timeout)
        except (redis_errors.RedisError, OSError) as error:
            cancelled_in_flight(error)
            raise self._storage.failure("read the inbox", error) from error
        if message is None or as_text(message["type"]) not in ("message", "smessage"):
            return None
        data = message["data"]
        return data if isinstance(data, bytes) else bytes(data)
