"""A fleet of ``python -m server`` nodes on one Redis, and two-racer rooms racing on them: what
the node benches (``bench.nodes``, ``bench.nodes_side_by_side``, ``bench.nodes_split``,
``bench.handoff``) and the deployment (:mod:`bench.lib.deployment`) start, drive and stop.

Rooms are Antares, two bot racers each, created on one node and joined from another
(:func:`open_rooms`), so a guest's moves may be forwarded; each racer plays a legal move
worked out from its own board at its ``rate`` (:func:`racer_loop`), and :class:`Turn` lets
a service's bots move only in its turns. :func:`failover` SIGKILLs a room's owner and times
its guest's next ack on another node.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.lib.bots import local_legal_moves
from bench.lib.node_report import Latencies
from bench.lib.spawn import free_port, precise_cpu
from client.lib.connection import RaceClient, ServerError
from protocol.messages import Ack, CreateRoom, Joined, JoinRoom, PlayMove, Ready, Resign, RoomOptions
from protocol.mirror import RoomMirror
from server.games import variant_class
from server.storage.embedded import EmbeddedRedis

#: This checkout: the default tree whose server the nodes run.
ROOT = Path(__file__).resolve().parents[2]
#: The lease TTL of the runs: a dead owner's rooms move within about this long.
NODE_TTL = 2.0
#: Seconds of the idle sample (rooms open, nobody moving) taken before each run's moves.
IDLE_SECONDS = 3.0


@dataclass
class Node:
    process: subprocess.Popen[bytes]
    port: int
    log: Path
    host: str = "127.0.0.1"  # the address it listens on (its peer port too)
    route: str | None = None  # its name at the balancer (``--route``), if it was given one

    @property
    def url(self) -> str:
        return f"ws://{self.host}:{self.port}"


Room = tuple[str, RaceClient, RaceClient, bool]  # code, owner's racer, guest racer, guest on another node


def pid_of(redis: EmbeddedRedis) -> int:
    """The pid of the running embedded Redis (its CPU is part of what a move costs)."""
    pid = redis.pid
    if pid is None:
        raise RuntimeError(f"the embedded Redis at {redis.url} is not running")
    return pid


async def close_all(clients: list[RaceClient]) -> None:
    """Close every client, whatever became of its connection."""
    await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)


async def start_nodes(
    count: int,
    redis_url: str,
    logs: Path,
    profile: Path | None = None,
    tree: Path = ROOT,
    *,
    ports: Sequence[int] = (),
    peer_ports: Sequence[int] = (),
    hosts: Sequence[str] = (),
    node_ttl: float | None = NODE_TTL,
    extra: Sequence[str] = (),
    routes: bool = False,
) -> list[Node]:
    """``profile``: run each node under cProfile, its statistics written there at its stop;
    ``tree``: the checkout whose server runs (another one measures an older version);
    ``ports``: the first nodes' ports (a node restarted behind a balancer comes back on its
    own; its log goes on after the old one's), free ones for the rest; ``peer_ports``: the
    first nodes' peer ports (any free one for the rest); ``hosts``: the first nodes' addresses
    (``--host``: their peer ports' too; 127.0.0.1 for the rest); ``node_ttl``: their lease TTL (None:
    the server's default); ``extra``: more flags; ``routes``: each named at the balancer
    (``--route node1``, ...), so that it sends clients home (:func:`open_rooms`)."""
    nodes = []
    for index in range(count):
        host = hosts[index] if index < len(hosts) else "127.0.0.1"
        port = ports[index] if index < len(ports) else free_port(host)
        # The flag only when asked for: an older tree (``tree``) runs as it always did.
        listen = ["--host", host] if index < len(hosts) else []
        log_path = logs / f"node-{port}.log"
        log = log_path.open("ab")
        profiler = [] if profile is None else ["-m", "cProfile", "-o", str(profile / f"{count}-nodes-{index}.prof")]
        peer = ["--peer-port", str(peer_ports[index])] if index < len(peer_ports) else []
        ttl = [] if node_ttl is None else ["--node-ttl", str(node_ttl)]
        route = f"node{index + 1}" if routes else None
        command = [
            sys.executable, *profiler, "-m", "server", *listen, "--port", str(port), *peer, "--redis-url", redis_url,
            "--solver-workers", "0", *ttl, "--log-level", os.environ.get("BENCH_NODE_LOG", "WARNING"), *extra,
        ] + ([] if route is None else ["--route", route])  # fmt: skip
        # Every bot is a new guest from 127.0.0.1, and the runs share one Redis: the limit on
        # new guests an address (300 an hour) would refuse the later pairs' bots.
        env = {**os.environ, "IDENTITIES_PER_ADDRESS": "1000000000"}
        process = subprocess.Popen(command, cwd=tree, stdout=log, stderr=subprocess.STDOUT, env=env)
        nodes.append(Node(process, port, log_path, host, route))
    try:
        for node in nodes:
            await answering(node)
    except BaseException:
        stop_nodes(nodes)  # none left running when one does not start
        raise
    return nodes


async def answering(node: Node) -> None:
    """Return once ``node`` answers a hello; RuntimeError if it exits first, OSError after 30 s."""
    deadline = time.monotonic() + 30
    while True:
        try:
            client = await RaceClient.connect(node.url, "probe", reconnect=False)
            await client.close()
            return
        except OSError:
            if node.process.poll() is not None:
                tail = "\n".join(node.log.read_text(errors="replace").splitlines()[-20:])
                raise RuntimeError(f"node on port {node.port} exited while starting:\n{tail}") from None
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.1)


def stop_nodes(nodes: list[Node]) -> None:
    for node in nodes:
        if node.process.poll() is None:
            node.process.terminate()
    for node in nodes:
        try:
            node.process.wait(20)
        except subprocess.TimeoutExpired:
            tail = "\n".join(node.log.read_text().splitlines()[-40:])
            print(f"node on port {node.port} did not stop within 20 s: killed\n{tail}", file=sys.stderr)
            node.process.kill()
            node.process.wait()


def caught_up(mirror: RoomMirror, version: int, seat: int) -> bool:
    """The racer's copy has every update up to ``version`` and shows its board, racing."""
    return mirror.version >= version and mirror.view().state == "racing" and mirror.board(seat) is not None


def play(request_id: int, room: str, move: str) -> PlayMove:
    return PlayMove(id=request_id, room=room, move=move)


def resign(request_id: int, room: str) -> Resign:
    return Resign(id=request_id, room=room)


@dataclass
class Turn:
    """A service's bots move only while ``on`` is set (bench.nodes_side_by_side takes turns);
    ``drained`` is set whenever none of their moves waits for its ack."""

    on: asyncio.Event = field(default_factory=asyncio.Event)
    drained: asyncio.Event = field(default_factory=asyncio.Event)
    in_flight: int = 0
    over: bool = False  # set (with ``on``) to end the racers' loops

    def __post_init__(self) -> None:
        self.drained.set()

    def started(self) -> None:
        self.in_flight += 1
        self.drained.clear()

    def ended(self) -> None:
        self.in_flight -= 1
        if not self.in_flight:
            self.drained.set()


async def racer_loop(
    racer: RaceClient,
    code: str,
    seat: int,
    rate: float,
    until: float,
    into: list[float],
    stats: Latencies,
    turn: Turn | None = None,
) -> None:
    game = variant_class("antares")
    rng = random.Random(seat * 7919 + hash(code))
    version = 0
    # Each racer at its own phase: all of them moving at the same instant would measure a
    # queue of simultaneous moves, not what one move costs.
    next_at = time.monotonic() + rng.random() / rate
    while time.monotonic() < until and not (turn is not None and turn.over):
        mirror = await racer.wait_room(code, functools.partial(caught_up, version=version, seat=seat))
        board = mirror.board(seat)
        assert board is not None
        moves = [move for move in local_legal_moves(game, board) if move != "deal"] or local_legal_moves(game, board)
        if not moves or mirror.view().state != "racing":
            return
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        next_at += 1.0 / rate
        if turn is not None:
            if turn.over:
                return
            if not turn.on.is_set():
                await turn.on.wait()
                next_at = time.monotonic() + rng.random() / rate  # a new turn: each at its own phase again
                continue
            turn.started()
        started = time.perf_counter()
        try:
            reply = await racer.request(functools.partial(play, room=code, move=rng.choice(moves)))
        except ServerError:
            stats.refused += 1
            continue
        finally:
            if turn is not None:
                turn.ended()
        into.append(time.perf_counter() - started)
        if isinstance(reply, Ack) and reply.version is not None:
            version = reply.version


async def play_rooms(rooms: list[Room], rate: float, until: float, stats: Latencies, turn: Turn | None = None) -> None:
    """Both racers of every room play until ``until`` (or ``turn`` is over); a guest's moves
    count as forwarded when it is on another node than the room's owner."""
    await asyncio.gather(
        *(racer_loop(owner, code, 0, rate, until, stats.local, stats, turn) for code, owner, _, _ in rooms),
        *(
            racer_loop(guest, code, 1, rate, until, stats.forwarded if remote else stats.local, stats, turn)
            for code, _, guest, remote in rooms
        ),
    )


async def open_room(owner: RaceClient, guest: RaceClient) -> str:
    created = await owner.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(undo=False)))
    assert isinstance(created, Joined)
    joined = await guest.request(lambda i: JoinRoom(id=i, room=created.room))
    assert isinstance(joined, Joined)
    for racer in (owner, guest):
        await racer.request(lambda i: Ready(id=i, room=created.room))
    return created.room


async def open_rooms(
    nodes: list[Node], count: int, clients: list[RaceClient], split: bool = False
) -> tuple[list[Room], Room | None]:
    """``count`` rooms of two racers, each created on the next node and joined from the one
    after (``split``: every room created on the first node and joined from the last), every
    racer's board shown (the clients go in ``clients``, to be closed by the caller); and with
    several nodes, unless ``split``, the failover probe's room, where nobody moves. Nodes
    with routes (:func:`start_nodes`) send each guest home to its room's owner, as a balancer
    routing ``?home=`` would (the probe's guest stays, to time a failover from another node)."""
    addresses = {node.route: node.url for node in nodes if node.route is not None}
    home = None if not addresses else functools.partial(_home_of, addresses)
    rooms = []
    for k in range(count):
        if split:
            owner_node, guest_node = nodes[0], nodes[-1]
        else:
            owner_node, guest_node = nodes[k % len(nodes)], nodes[(k + 1) % len(nodes)]
        owner = await RaceClient.connect(owner_node.url, f"own{k}", reconnect=False)
        guest = await RaceClient.connect(guest_node.url, f"guest{k}", reconnect=len(nodes) > 1, home_address=home)
        clients += [owner, guest]
        code = await open_room(owner, guest)
        if home is not None:
            await _arrived(guest, owner_node.url)
        rooms.append((code, owner, guest, guest.url != owner_node.url))
    probe: Room | None = None
    if len(nodes) > 1 and not split:
        # The failover probe's own room, on the first node with its guest on the second:
        # nobody moves in it until the kill, so its guest surely has a move then.
        owner = await RaceClient.connect(nodes[0].url, "probe-owner", reconnect=False)
        guest = await RaceClient.connect(nodes[1].url, "probe-guest", reconnect=True, home_address=None)
        clients += [owner, guest]
        probe = (await open_room(owner, guest), owner, guest, True)
    for code, owner, guest, _ in rooms + ([probe] if probe else []):
        for seat, racer in enumerate((owner, guest)):
            await racer.wait_room(code, functools.partial(caught_up, version=0, seat=seat))
    return rooms, probe


def _home_of(addresses: dict[str, str], _url: str, home: str) -> str:
    """The address of the node named ``home`` (the balancer's routing, without a balancer)."""
    return addresses[home]


async def _arrived(client: RaceClient, url: str) -> None:
    """Return once ``client`` moved to ``url`` (RuntimeError after 10 s)."""
    deadline = time.monotonic() + 10
    while client.url != url:
        if time.monotonic() > deadline:
            raise RuntimeError(f"a guest was not sent home to {url}")
        await asyncio.sleep(0.01)


async def resign_all(rooms: list[Room]) -> None:
    """End every race (a room left racing would be restored by the next node on its Redis)."""
    for code, owner, guest, _ in rooms:
        for racer in (owner, guest):
            if racer.connected.is_set():
                with contextlib.suppress(ServerError, ConnectionError, TimeoutError):
                    await racer.request(functools.partial(resign, room=code), timeout=3)


async def failover(owner: Node, code: str, guest: RaceClient, verbose: bool = False) -> float:
    """SIGKILL ``owner``, the node running room ``code``; seconds until the next ack of the
    room's racer ``guest`` on another node (nan when none comes within 30 s); ``verbose``:
    print why each attempt failed."""
    game = variant_class("antares")

    def guest_moves() -> list[str]:
        mirror = guest.rooms.get(code)
        board = mirror.board(1) if mirror is not None else None
        return [] if board is None else local_legal_moves(game, board)

    owner.process.send_signal(signal.SIGKILL)
    killed = time.monotonic()
    while time.monotonic() - killed < 30:
        try:
            moves = guest_moves() if guest.connected.is_set() else []
            if moves:
                reply = await guest.request(functools.partial(play, room=code, move=moves[0]), timeout=3)
                if isinstance(reply, Ack):
                    return time.monotonic() - killed
        except (ServerError, ConnectionError, TimeoutError) as error:
            if verbose:
                print(f"{time.monotonic() - killed:.2f}", type(error).__name__, error)
        await asyncio.sleep(0.05)
    return float("nan")


async def warm_up(redis_url: str, logs: Path, tree: Path) -> None:
    """Run one node on the new Redis until it is quiet: the first node of a service fills the
    pools of winnable deals and prepares the daily deals, solving for seconds, which would
    otherwise land in the first run's CPU (it did: 15 wake-ups a move against 1.4)."""
    (node,) = await start_nodes(1, redis_url, logs, None, tree)
    try:
        deadline = time.monotonic() + 120
        last = precise_cpu(node.process.pid)
        while time.monotonic() < deadline:
            await asyncio.sleep(1.0)
            now = precise_cpu(node.process.pid)
            if now - last < 0.05:  # under 5% of a core: only heartbeats and timers left
                return
            last = now
    finally:
        stop_nodes([node])


def add_wait_arguments(parser: argparse.ArgumentParser, idle: bool = True) -> None:
    """The waits before a run's moves, which a smoke run turns down: ``--warm-up`` (:func:`warm_up`
    on each new Redis first) and, with ``idle``, ``--idle`` seconds of the idle sample."""
    parser.add_argument(
        "--warm-up", action=argparse.BooleanOptionalAction, default=True,
        help="run one node on each new Redis until it is quiet, before the measured nodes (default: on)",
    )  # fmt: skip
    if idle:
        parser.add_argument(
            "--idle", type=float, default=IDLE_SECONDS, metavar="SECONDS",
            help=f"seconds of the idle sample, rooms open and nobody moving (default {IDLE_SECONDS:g})",
        )  # fmt: skip


def add_load_arguments(
    parser: argparse.ArgumentParser, seconds: float = 10.0, what: str = "seconds of play per run"
) -> None:
    """The load every node bench takes: ``--rooms`` of two bots, each moving ``--rate`` a
    second, for ``--seconds``."""
    parser.add_argument("--rooms", type=int, default=12, help="rooms of two racers (default 12)")
    parser.add_argument("--rate", type=float, default=4.0, help="moves a second per racer (default 4)")
    parser.add_argument("--seconds", type=float, default=seconds, help=f"{what} (default {seconds:g})")
