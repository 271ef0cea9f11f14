"""A randomized fault run on real processes, in the manner of Jepsen: three nodes on one Redis,
racers and spectators on every node, and a nemesis that SIGKILLs nodes (started again),
SIGSTOPs nodes past their TTL, SIGSTOPs or SIGKILLs Redis (started again on its data) and,
where the machine allows it (root, iproute2's ``ip``), cuts a node from Redis for 1-4 s, past
its TTL at times (``cut-redis``, its first action): that node runs in a network namespace of
its own (:mod:`tests.cluster.netns`) whose route to Redis is blackholed, while it still
reaches the other nodes and the clients reach it. Where the machine does not allow it, the
run goes on without that action and prints why.

The checker, through the protocol only:

- while it runs, every ack is followed within :data:`UPDATE_WITHIN` s by the update that brings
  the client's copy to the ack's version, unless its connection closed meanwhile;
- a racer that never left is never told ``not-in-room``;
- afterwards, every room's stored log replays, holds every acknowledged move of each racer
  in order (none lost), and no more moves than were acknowledged or left in doubt (none
  applied twice, none stored without cause).

One short seeded run is in the suite; ``FAULT_RUN_SECONDS`` and ``FAULT_RUN_SEEDS`` (a
comma-separated list) make longer ones, e.g. ``FAULT_RUN_SECONDS=600 FAULT_RUN_SEEDS=1,2``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import random
import signal
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from bench.lib.bots import local_legal_moves
from client.lib.connection import RaceClient, ServerError
from protocol.messages import Ack, AskRaceLog, ClientMessage, Joined, PlayMove, RaceLog, Resign, RoomOptions, Spectate
from server.games import variant_class
from server.storage.embedded import EmbeddedRedis
from tests.cluster.netns import (
    SESSION_NETWORK_VARIABLE,
    NamespaceUnavailable,
    RedisCutNamespace,
    TcpEmbeddedRedis,
    host_network,
    session_namespace,
)
from tests.cluster.test_membership import reached
from tests.faults.invariants import replay_log
from tests.nodes.conftest import NodeProcess, Service
from tests.nodes.test_service import open_race, race_started

pytestmark = pytest.mark.asyncio

SECONDS = float(os.environ.get("FAULT_RUN_SECONDS", "20"))
SEEDS = [int(seed) for seed in os.environ.get("FAULT_RUN_SEEDS", "7").split(",")]
ROOMS = 3
#: Seconds an ack may go before the update that brings the client's copy to its version.
UPDATE_WITHIN = 3.0
ANTARES = variant_class("antares")
#: Redis's TCP port, on an address of the run's own namespace link (so no other process has it).
REDIS_PORT = 6379


@dataclass
class Player:
    """One person, connected to one node at a time, who reconnects (and resumes) elsewhere."""

    name: str
    client: RaceClient
    acked: list[str] = field(default_factory=list)  # the moves acknowledged, in order
    in_doubt: int = 0  # moves whose answer was lost or storage-unavailable
    late_updates: list[str] = field(default_factory=list)
    not_in_room: int = 0

    async def ensure_connected(self, service: Service, rng: random.Random) -> None:
        while not self.client.connected.is_set():
            live = [node for node in service.nodes if node.process.poll() is None]
            node = rng.choice(live)
            try:
                self.client = await RaceClient.connect(node.url, self.name, resume=self.client.resume, reconnect=False)
            except (OSError, ServerError, TimeoutError, ConnectionError):
                await asyncio.sleep(0.2)


async def race(player: Player, code: str, seat: int, service: Service, until: float, rng: random.Random) -> None:
    """Play legal moves from the player's own copy until ``until``, keeping the ledger."""
    while time.monotonic() < until:
        await player.ensure_connected(service, rng)
        mirror = player.client.rooms.get(code)
        board = None if mirror is None or mirror.view().state != "racing" else mirror.board(seat)
        moves = [] if board is None else local_legal_moves(ANTARES, board)
        if not moves:
            await asyncio.sleep(0.2)
            continue
        try:
            ack = await player.client.request(functools.partial(PlayMove, room=code, move=rng.choice(moves)), 5.0)
        except ServerError as error:
            if error.code == "storage-unavailable":
                player.in_doubt += 1
                # A pause, as a person would take: retrying at once while Redis is away only
                # piles up moves in doubt, which loosens the "none without cause" bound.
                await asyncio.sleep(0.2)
            elif error.code == "not-in-room":
                player.not_in_room += 1
            continue
        except (ConnectionError, TimeoutError):
            player.in_doubt += 1
            # Not at once: a request on a connection that just dropped fails without ever
            # suspending (the client's reader, which clears ``connected``, has not run yet),
            # so an immediate retry would spin here until ``until`` and starve the whole test
            # process (the nemesis waiting for a node's /readyz, Redis's supervisor, the others).
            await asyncio.sleep(0.2)
            continue
        assert isinstance(ack, Ack), ack
        assert ack.move is not None
        assert ack.version is not None
        player.acked.append(ack.move)
        with contextlib.suppress(TimeoutError):
            await player.client.wait_room(code, functools.partial(reached, version=ack.version), UPDATE_WITHIN)
        mirror = player.client.rooms.get(code)
        if (mirror is None or mirror.version < ack.version) and player.client.connected.is_set():
            player.late_updates.append(f"{code} v{ack.version}")
        await asyncio.sleep(rng.uniform(0.05, 0.3))


@dataclass(frozen=True)
class Layout:
    """Where the nodes run: with a namespace, all but one on its host address and one inside
    it, on Redis's TCP address (the one node whose route to Redis the nemesis cuts); else all
    on 127.0.0.1 on Redis's socket."""

    redis: EmbeddedRedis
    namespace: RedisCutNamespace | None

    async def start(self, service: Service, count: int, *, inside: bool = False) -> None:
        if self.namespace is None:
            await service.start(count)
        elif inside:
            assert isinstance(self.redis, TcpEmbeddedRedis)
            hosts = [self.namespace.inner_address] * count
            await service.start(count, hosts=hosts, netns=self.namespace.name, redis_url=self.redis.tcp_url)
        else:
            await service.start(count, hosts=[self.namespace.host_address] * count)


async def nemesis(service: Service, layout: Layout, until: float, rng: random.Random) -> list[str]:
    """Break something every 2-6 s until ``until``, first of all the route to Redis if it can;
    what it did."""
    done: list[str] = []
    actions = ["kill", "pause", "pause-redis", "kill-redis"] + (["cut-redis"] if layout.namespace else [])
    redis = layout.redis
    while time.monotonic() + 6 < until:
        await asyncio.sleep(rng.uniform(2, 6))
        live = [node for node in service.nodes if node.process.poll() is None]
        action = rng.choice(actions) if done or layout.namespace is None else "cut-redis"
        if action == "kill" and len(live) > 1:
            victim = rng.choice(live)
            victim.signal(signal.SIGKILL)
            victim.process.wait()
            await layout.start(service, 1, inside=victim.netns is not None)  # its replacement, on a new port
        elif action == "cut-redis" and layout.namespace is not None:
            await _cut(layout.namespace, rng.uniform(1.0, 4.0))  # past the nodes' TTL at times
        elif action == "pause":
            await _paused(rng.choice(live), rng.uniform(1.0, 4.0))
        elif action == "pause-redis" and redis.pid is not None:
            os.kill(redis.pid, signal.SIGSTOP)
            await asyncio.sleep(rng.uniform(0.5, 2.5))
            os.kill(redis.pid, signal.SIGCONT)
        elif action == "kill-redis" and redis.pid is not None:
            os.kill(redis.pid, signal.SIGKILL)  # its supervisor starts it again, on its append-only file
            await asyncio.sleep(rng.uniform(0.5, 1.5))
        done.append(action)
    return done


async def _cut(namespace: RedisCutNamespace, seconds: float) -> None:
    await namespace.cut()
    try:
        await asyncio.sleep(seconds)
    finally:
        await namespace.heal()


async def _paused(node: NodeProcess, seconds: float) -> None:
    node.signal(signal.SIGSTOP)
    try:
        await asyncio.sleep(seconds)
    finally:
        node.signal(signal.SIGCONT)


async def settled(player: Player, service: Service, rng: random.Random, ask: Callable[[int], ClientMessage]) -> object:
    """``player``'s answer to ``ask`` once the service is whole again (connections and
    storage back; retried for up to a minute)."""
    deadline = time.monotonic() + 60
    while True:
        await player.ensure_connected(service, rng)
        try:
            return await player.client.request(ask, 5.0)
        except (ServerError, ConnectionError, TimeoutError) as error:
            if isinstance(error, ServerError) and error.code not in ("storage-unavailable", "not-finished"):
                return error
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


def check_log(log: RaceLog, racers: dict[int, Player]) -> None:
    for entry in log.racers:
        player = racers[entry.seat]
        moves = [text for text in entry.moves if not text.startswith("resign")]
        replay_log(log.variant, log.deal, log.options.autoplay, entry.moves)  # it replays
        # Every acknowledged move, in order (none lost)...
        position = 0
        for move in player.acked:
            while position < len(moves) and moves[position] != move:
                position += 1
            assert position < len(moves), f"{player.name}'s acknowledged {move} is not in the log {moves}"
            position += 1
        # ... and nothing but acknowledged or in-doubt moves (none twice, none without cause).
        assert len(moves) <= len(player.acked) + player.in_doubt, (moves, player.acked, player.in_doubt)


@contextlib.asynccontextmanager
async def layout_for_the_run(directory: Path) -> AsyncIterator[Layout]:
    """Redis, and the session's namespace if the machine allows one (else why not, printed)."""
    try:
        namespace: RedisCutNamespace | None = session_namespace()
    except NamespaceUnavailable as why:
        print(f"no cut-redis in this fault run: {why}")
        namespace = None
    redis = (
        EmbeddedRedis(directory / "redis")
        if namespace is None
        else TcpEmbeddedRedis(directory / "redis", namespace.redis_address, REDIS_PORT)
    )
    await redis.start()
    try:
        yield Layout(redis, namespace)
    finally:
        await redis.stop()


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.timeout(SECONDS + 120)  # the suite's 120 s for all but the run itself
async def test_a_randomized_fault_run_keeps_every_promise(tmp_path: Path, seed: int) -> None:
    async with layout_for_the_run(tmp_path) as layout:
        await fault_run(layout, tmp_path, seed)
    if layout.namespace is not None:
        # Cutting and healing (and the namespace itself, made before the session's tests)
        # changed no address the host's programs see: a browser in another test aborts its
        # loads with ERR_NETWORK_CHANGED on any such change.
        assert host_network() == os.environ[SESSION_NETWORK_VARIABLE]


async def fault_run(layout: Layout, directory: Path, seed: int) -> None:
    rng = random.Random(seed)
    service = Service(layout.redis.url, directory)
    try:
        await layout.start(service, 2)
        await layout.start(service, 1, inside=True)
        rooms: list[tuple[str, dict[int, Player]]] = []
        spectators: list[RaceClient] = []
        for k in range(ROOMS):
            owner_node, guest_node, watch_node = (service.nodes[(k + i) % 3] for i in range(3))
            ann = await RaceClient.connect(owner_node.url, f"Ann{k}", reconnect=False)
            bob = await RaceClient.connect(guest_node.url, f"Bob{k}", reconnect=False)
            service.clients += [ann, bob]
            code = await open_race(ann, bob, RoomOptions(public=True, spectator_delay=1, undo=False))
            eve = await RaceClient.connect(watch_node.url, f"Eve{k}", reconnect=True)
            service.clients.append(eve)
            assert isinstance(await eve.request(functools.partial(Spectate, room=code)), Joined)
            spectators.append(eve)
            await race_started(code, ann, bob)
            rooms.append((code, {0: Player(f"Ann{k}", ann), 1: Player(f"Bob{k}", bob)}))
        until = time.monotonic() + SECONDS
        racing = [
            race(player, code, seat, service, until, random.Random(f"{seed}-{code}-{seat}"))
            for code, racers in rooms
            for seat, player in racers.items()
        ]
        actions, *_ = await asyncio.gather(nemesis(service, layout, until, rng), *racing)
        assert actions, "the nemesis did nothing"
        players = [player for _, racers in rooms for player in racers.values()]
        counts = ", ".join(f"{action} {n}" for action, n in sorted(Counter(actions).items()))
        print(  # the run's figures, for a long run's report (pytest -s)
            f"seed {seed}, {SECONDS:g} s: nemesis {', '.join(actions)} ({counts});"
            f" {sum(len(p.acked) for p in players)} moves acknowledged, {sum(p.in_doubt for p in players)} in doubt"
        )
        for code, racers in rooms:
            for player in racers.values():
                service.clients.append(player.client)
                assert player.not_in_room == 0, f"{player.name} was told not-in-room ({actions})"
                assert player.late_updates == [], f"{player.name}: acks without their update {player.late_updates}"
            for player in racers.values():
                await settled(player, service, rng, functools.partial(Resign, room=code))
            log = await settled(racers[0], service, rng, functools.partial(AskRaceLog, room=code))
            assert isinstance(log, RaceLog), log
            check_log(log, racers)
    finally:
        await service.close()
