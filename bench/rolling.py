"""A rolling restart of every node behind the balancer while races run: no race aborted, no
acknowledged move lost, and the longest stall a racer sees (issue 29).

    python -m bench.rolling [--races 200] [--rate 1] [--drain 3] [--before 30] [--after 5] [--logs DIR]

A private embedded Redis, three real ``python -m server`` nodes on it (lease TTL 2 s,
``--trusted-proxies`` the balancer, no solver or hint workers, ``--drain``) and the shipped
HAProxy config in front of them (bench/balancer.py: its certificate, its environment).
``--races`` races of two racers each, every racer a :class:`RaceClient` with automatic
reconnection, as a real client has it, connected through the balancer's plain port from a
loopback address of its own (a real player's address: the balancer and the nodes limit
connections per address). Each plays ``--rate`` legal moves a second, worked out from its own
board (looking a few moves ahead, so that it does not play itself into a dead end), and
records the time, room version and move of every ack.

After ``--before`` seconds of play, each node in turn gets SIGTERM (it turns not ready, drains
``--drain`` s, closes its clients, which reconnect through the balancer, and hands its rooms
over), and once it has exited a replacement starts on the same port (the balancer's server
lines name the three ports); the next node goes once the replacement answers /readyz and the
balancer has marked it UP. After ``--after`` more seconds of play, the racers stop, and every
room is read back from Redis: its state (a race still racing or finished, no seat resigned,
or else it was aborted) and its move logs, which must hold every acknowledged move of each
seat in order (an ack's version also must not be acknowledged twice, nor be past the stored
version).

Printed: for the restart window and for a window as long just before it (the baseline),
the longest gap between two acks of a racer (p50, p99 and max over the racers; racers out
of legal moves or finished are left out, and counted), and how many racers' connections
dropped, and move->ack; then races, racers, acked moves, moves lost, races aborted, the
total restart time, the CPU used, the error replies to moves, the time from a dropped
connection to the racer's next ack, the restart's timings node by node and the nodes'
warnings (alike ones counted together). Lost moves and aborted races are listed with the
nodes' log lines about their rooms (the nodes log at BENCH_NODE_LOG, INFO by default here;
``--logs`` keeps the logs, the balancer's included).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import contextvars
import functools
import itertools
import os
import random
import signal
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio import client as websockets_client

import client.lib.connection as client_connection
from bench.balancer import FRONT, SOURCE, certificate, environment, haproxy
from bench.bots import local_legal_moves
from bench.nodes import Node, caught_up, close_all, open_room, play, start_nodes, stop_nodes
from bench.spawn import exit_on_sigterm, free_port, machine_cpu, raise_nofile_limit
from bench.stats import percentile
from client.lib.connection import RaceClient, ServerError
from protocol.messages import Ack
from protocol.mirror import RoomMirror
from server.games import Game, variant_class
from server.games.options import Options
from server.rooms.record import SeatStatus, decode_record
from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis
from server.storage.rooms import RoomStore

VARIANT = "antares"
#: Seconds of play before the baseline window may start (countdowns over, first moves made).
SETTLE = 2.0
#: Moves a racer looks ahead: a move is played only if some line of this many more follows it.
#: Random play with none ran most Antares deals into a dead end within 30 moves; with 5, one
#: deal in 200 within 120 moves (the engine alone, 0.1 ms a move).
LOOKAHEAD = 5
#: The longest wait for a restarted node to be ready, and then for the balancer to mark it UP.
START_TIMEOUT = 60.0
#: Seconds before a racer tries again after its move was refused (storage-unavailable, ...).
RETRY = 0.05
#: Racers opening their connections and rooms at once.
OPENING = 16

#: The loopback address the client being built connects from (see :class:`Player`).
_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("rolling_source", default=None)


class _FromSource(websockets_client.connect):
    """websockets' ``connect``, from the address in :data:`_SOURCE` when one is set."""

    def __init__(self, uri: str, **options: Any) -> None:
        source = _SOURCE.get()
        if source is not None:
            options.setdefault("local_addr", (source, 0))
        super().__init__(uri, **options)


class Player(RaceClient):
    """A :class:`RaceClient` whose connections, its reconnections included, all leave from the
    address that was in :data:`_SOURCE` when it was built, as a real player's leave from
    theirs. The client library connects with the module's ``connect``, which
    :func:`from_own_addresses` replaces with :class:`_FromSource` meanwhile."""

    def __init__(self, url: str, name: str, resume: str | None, reconnect: bool, bot: bool = False) -> None:
        super().__init__(url, name, resume, reconnect, bot)
        self.source = _SOURCE.get()

    async def _open(self) -> None:
        token = _SOURCE.set(self.source)
        try:
            await super()._open()
        finally:
            _SOURCE.reset(token)


@contextlib.contextmanager
def from_own_addresses() -> Iterator[None]:
    """While inside, the client library connects from the address of the :class:`Player`."""
    names = vars(client_connection)
    original, names["connect"] = names["connect"], _FromSource
    try:
        yield
    finally:
        names["connect"] = original


def address_of(racer: int) -> str:
    """The loopback address of the ``racer``-th racer (from 0): 127.1.0.1, 127.1.0.2, ..."""
    return f"127.1.{racer // 250}.{racer % 250 + 1}"


async def connect_from(url: str, name: str, source: str) -> RaceClient:
    token = _SOURCE.set(source)
    try:
        return await Player.connect(url, name, reconnect=True)
    finally:
        _SOURCE.reset(token)


def _alive(game: Game, depth: int) -> bool:
    """Some line of ``depth`` more moves follows the position."""
    moves = game.legal_moves()
    if not moves or depth == 0:
        return bool(moves)
    for move in moves:
        game.push(move)
        found = _alive(game, depth - 1)
        game.pop()
        if found:
            return True
    return False


def choose_move(variant: type[Game], board: list[list[int | None]], rng: random.Random) -> str | None:
    """A random legal move (``deal`` only when no other), among those after which some line of
    :data:`LOOKAHEAD` more moves exists if there are any; None when there is no legal move."""
    texts = local_legal_moves(variant, board)
    if not texts:
        return None
    rng.shuffle(texts)
    texts.sort(key=lambda text: text == "deal")  # stable: the others first, in random order
    piles = [[card for card in pile if card is not None] for pile in board]
    if sum(map(len, piles)) != sum(map(len, board)):
        return texts[0]  # face-down cards (not in Antares): no lookahead
    game = variant(None, Options(), piles, [0] * len(piles))
    for text in texts:
        game.push(game.parse_move(text))
        found = _alive(game, LOOKAHEAD)
        game.pop()
        if found:
            return text
    return texts[0]


async def http_status(host: str, port: int, path: str) -> int:
    """The status of ``GET path`` at host:port (0: no answer)."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), 5)
    except (OSError, TimeoutError):
        return 0
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readline(), 5)
    except (OSError, TimeoutError):
        return 0
    finally:
        writer.close()
        with contextlib.suppress(OSError):
            await writer.wait_closed()
    parts = head.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


@dataclass(frozen=True, slots=True)
class Acked:
    at: float  # monotonic
    sent: float  # when the move was sent
    version: int
    move: str


@dataclass
class Racer:
    client: RaceClient
    code: str
    seat: int
    restored: asyncio.Event = field(default_factory=asyncio.Event)
    acks: list[Acked] = field(default_factory=list)
    drops: list[float] = field(default_factory=list)  # when its connection dropped
    errors: Counter[str] = field(default_factory=Counter)  # error replies to its moves, by code
    in_doubt: int = 0  # moves sent whose reply never came (dropped connection, timeout)
    stopped: str | None = None  # why it stopped moving before the end, if it did

    def __post_init__(self) -> None:
        self.restored.set()
        self.client.listen_connection(self._connection)

    def _connection(self, up: bool) -> None:
        if up:
            self.restored.set()
        else:
            self.drops.append(time.monotonic())
            self.restored.clear()

    @property
    def out_of_play(self) -> bool:
        """Out of legal moves or finished: no stall to measure."""
        return self.stopped in ("stuck", "finished")


@dataclass
class Play:
    over: bool = False


def version_at_least(mirror: RoomMirror, version: int) -> bool:
    return mirror.version >= version


async def race(racer: Racer, rate: float, game: Play) -> None:
    """Play ``rate`` moves a second until ``game.over``, from the racer's own copy of the board
    once it has the update of its last acked move. After a drop it moves as soon as its rooms
    are restored, and after a refusal :data:`RETRY` s later, so that its stalls measure the
    service rather than its pace."""
    variant, rng = variant_class(VARIANT), random.Random(f"{racer.code}/{racer.seat}")
    client, version = racer.client, 0
    next_at = time.monotonic() + rng.random() / rate  # each racer at its own phase
    while not game.over:
        await asyncio.sleep(max(0.0, next_at - time.monotonic()))
        if game.over:
            break
        if not (racer.restored.is_set() and client.connected.is_set()):
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    await racer.restored.wait()
                    await client.connected.wait()
            next_at = time.monotonic()
            continue
        next_at = max(next_at + 1 / rate, time.monotonic())  # late: go on from now, no burst
        try:
            mirror = await client.wait_room(racer.code, functools.partial(version_at_least, version=version), 5.0)
        except TimeoutError:
            if racer.code not in client.rooms and racer.restored.is_set():
                racer.stopped = "seat lost"  # its copy was dropped after a reconnection
                return
            racer.errors["no update of its ack within 5 s"] += 1
            continue
        state = mirror.view().state
        if state != "racing":
            racer.stopped = "finished" if state == "finished" else f"room {state}"
            return
        board = mirror.board(racer.seat)
        if board is None:
            continue
        move = choose_move(variant, board, rng)
        if move is None:
            racer.stopped = "stuck"
            return
        sent = time.monotonic()
        try:
            reply = await client.request(functools.partial(play, room=racer.code, move=move))
        except ServerError as error:
            racer.errors[str(error.code)] += 1
            next_at = time.monotonic() + RETRY
            continue
        except (ConnectionError, TimeoutError):
            racer.in_doubt += 1
            next_at = time.monotonic()
            continue
        if isinstance(reply, Ack) and reply.version is not None:
            racer.acks.append(Acked(time.monotonic(), sent, reply.version, reply.move or move))
            version = reply.version


@dataclass
class Restart:
    port: int
    signalled: float
    exited: float = 0.0
    ready: float = 0.0
    up: float = 0.0
    exit_code: int | None = None


def count_in(log: Path, text: str) -> int:
    """How many times ``text`` is in ``log`` so far (HAProxy's: its servers' state changes)."""
    return log.read_text(errors="replace").count(text) if log.exists() else 0


async def wait_for(what: str, check: Callable[[], Awaitable[bool]], timeout: float) -> None:
    """Poll the coroutine function ``check`` until it is true; RuntimeError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout:.0f} s")
        await asyncio.sleep(0.05)


async def restart(
    nodes: list[Node], index: int, balancer: Path, redis_url: str, logs: Path, extra: list[str]
) -> Restart:
    """SIGTERM node ``index``; once it has exited, start a replacement on its port and wait
    until it is ready and the balancer has marked it UP (its server line is node<index + 1>)."""
    old = nodes[index]
    name = f"node{index + 1} is UP"
    ups = count_in(balancer, name)
    timing = Restart(old.port, time.monotonic())
    old.process.send_signal(signal.SIGTERM)

    async def exited() -> bool:
        return old.process.poll() is not None

    await wait_for(f"node on port {old.port} to exit after SIGTERM", exited, 60)
    timing.exited, timing.exit_code = time.monotonic(), old.process.returncode
    (new,) = await start_nodes(1, redis_url, logs, ports=[old.port], extra=extra)
    nodes[index] = new

    async def ready() -> bool:
        if new.process.poll() is not None:
            raise RuntimeError(f"the node restarted on port {new.port} exited: see {new.log}")
        return await http_status("127.0.0.1", new.port, "/readyz") == 200

    await wait_for(f"node on port {new.port} to be ready", ready, START_TIMEOUT)
    timing.ready = time.monotonic()

    async def up() -> bool:
        return count_in(balancer, name) > ups

    await wait_for(f"the balancer to mark {name.split()[0]} UP", up, START_TIMEOUT)
    timing.up = time.monotonic()
    return timing


def longest_gap(times: list[float], start: float, end: float, last: float) -> float:
    """The longest time between consecutive acks over [start, end]: from the last ack before
    ``start`` (``start`` if none) through the acks within to the first after ``end`` (``last``,
    the end of play, if none)."""
    before = max((t for t in times if t <= start), default=start)
    inside = [t for t in times if start < t <= end]
    after = min((t for t in times if t > end), default=last)
    points = [before, *inside, after]
    return max(b - a for a, b in itertools.pairwise(points))


def lcs(acked: list[str], stored: list[str]) -> int:
    """The length of the longest common subsequence: how many acked moves the log holds in order."""
    row = [0] * (len(stored) + 1)
    for move in acked:
        previous = 0
        for j, entry in enumerate(stored, 1):
            current = row[j]
            row[j] = previous + 1 if move == entry else max(row[j], row[j - 1])
            previous = current
    return row[-1]


@dataclass
class Checked:
    acked: int = 0
    lost: list[str] = field(default_factory=list)  # one line per lost move
    aborted: list[str] = field(default_factory=list)  # one line per aborted race
    twice: list[str] = field(default_factory=list)  # a version acknowledged twice in a room
    unacked_stored: int = 0  # moves stored whose ack never came (in doubt)
    states: Counter[str] = field(default_factory=Counter)


async def check_rooms(redis_url: str, races: list[tuple[Racer, Racer]]) -> Checked:
    """Every room as Redis holds it against what its racers were told."""
    checked = Checked()
    storage = await Storage.connect(redis_url)
    try:
        store = RoomStore(storage)
        for pair in races:
            code = pair[0].code
            stored = await store.load(code)
            if stored is None:
                checked.aborted.append(f"{code}: no record in Redis")
                checked.lost += [f"{code} seat {r.seat} v{a.version} {a.move}: room gone" for r in pair for a in r.acks]
                continue
            record = decode_record(stored.record)
            checked.states[record.state] += 1
            resigned = [seat for seat in record.seats if seat.status is SeatStatus.RESIGNED]
            if record.state not in ("racing", "finished") or resigned or record.race != 1:
                seats = ", ".join(f"seat {s.seat} {s.status.value} {s.resigned or ''}".strip() for s in record.seats)
                checked.aborted.append(f"{code}: {record.state}, race {record.race}, version {stored.version}; {seats}")
            logs = await store.logs(code, record.race)
            versions = Counter(a.version for r in pair for a in r.acks)
            checked.twice += [f"{code} v{v}: acknowledged {n} times" for v, n in versions.items() if n > 1]
            for racer in pair:
                moves, log = [a.move for a in racer.acks], logs.get(racer.seat, [])
                checked.acked += len(moves)
                found = lcs(moves, log)
                checked.unacked_stored += max(0, len(log) - found)
                if found < len(moves):
                    # Name them: the acked moves the log does not hold in order, matched greedily
                    # (the count is the exact one above).
                    position, kept = 0, set()
                    for k, move in enumerate(moves):
                        at = position
                        while at < len(log) and log[at] != move:
                            at += 1
                        if at < len(log):
                            kept.add(k)
                            position = at + 1
                    checked.lost += [
                        f"{code} seat {racer.seat} v{a.version} {a.move!r} (stored version {stored.version},"
                        f" log {len(log)} entries)"
                        for k, a in enumerate(racer.acks)
                        if k not in kept
                    ][: len(moves) - found]
                top = max((a.version for a in racer.acks), default=0)
                if top > stored.version:
                    checked.lost.append(f"{code} seat {racer.seat}: acked version {top} > stored {stored.version}")
    finally:
        await storage.close()
    return checked


@dataclass
class Load:
    bench: float  # this process's share of a core
    machine: float  # the machine's busy share of all its cores
    load: float  # the 1-minute load average when the play began


@dataclass
class Window:
    label: str
    start: float
    end: float


def window_row(window: Window, racers: list[Racer], last: float) -> str:
    measured = [r for r in racers if not r.out_of_play]
    gaps = sorted(longest_gap([a.at for a in r.acks], window.start, window.end, last) * 1000 for r in measured)
    dropped = sum(any(window.start <= t <= window.end for t in r.drops) for r in racers)
    drops = sum(window.start <= t <= window.end for r in racers for t in r.drops)
    acks = sum(window.start < a.at <= window.end for r in racers for a in r.acks)
    stalls = (
        f"{percentile(gaps, 0.5):>9.0f} {percentile(gaps, 0.99):>9.0f} {max(gaps):>9.0f}"
        if gaps
        else f"{'-':>9} {'-':>9} {'-':>9}"
    )
    latencies = sorted((a.at - a.sent) * 1000 for r in racers for a in r.acks if window.start < a.at <= window.end)
    latency = f"{percentile(latencies, 0.5):>7.1f} {percentile(latencies, 0.99):>7.0f}" if latencies else " " * 15
    return (
        f"{window.label:<18} {window.end - window.start:>7.1f} {len(measured):>7} {acks:>7} {dropped:>12}"
        f" {drops:>6} {stalls} {latency}"
    )


def report(
    args: argparse.Namespace,
    racers: list[Racer],
    checked: Checked,
    windows: list[Window],
    restarts: list[Restart],
    last: float,
    logs: Path,
    codes: list[str],
    cpu: Load,
    refused: list[str],
) -> str:
    out_of_play = Counter(r.stopped for r in racers if r.out_of_play)
    others = Counter(r.stopped for r in racers if r.stopped is not None and not r.out_of_play)
    errors: Counter[str] = Counter()
    for r in racers:
        errors.update(r.errors)
    lines = [
        f"rolling restart: {args.races} races ({len(racers)} racers) through HAProxy, {args.rate:g} move/s a racer,"
        f" --drain {args.drain:g}, 3 nodes restarted one after the other on their ports; {os.cpu_count()} cores",
        f"{'window':<18} {'seconds':>7} {'racers':>7} {'acks':>7} {'disconnected':>12} {'drops':>6}"
        f" {'stall p50':>9} {'p99':>9} {'max (ms)':>9} {'ack p50':>7} {'p99':>7}",
        *(window_row(window, racers, last) for window in windows),
        "  (stall: a racer's longest gap between two acks over the window; racers out of legal moves"
        f" or finished left out: {sum(out_of_play.values())}; ack: move->ack ms)",
        f"CPU from the first move to the check: this process (the racers) {cpu.bench:.0%} of a core,"
        f" the machine {cpu.machine:.0%} of its {os.cpu_count()} cores; load average at the start {cpu.load:.2f}",
        f"races {args.races}, racers {len(racers)}, acked moves {checked.acked}, moves lost {len(checked.lost)},"
        f" races aborted {len(checked.aborted)}, racers disconnected {sum(bool(r.drops) for r in racers)},"
        f" total restart time {restarts[-1].up - restarts[0].signalled:.1f} s",
        "rooms at the end: " + ", ".join(f"{n} {state}" for state, n in sorted(checked.states.items())),
        f"versions acknowledged twice: {len(checked.twice)};"
        f" moves stored whose ack never came: {checked.unacked_stored};"
        f" moves in doubt (no reply): {sum(r.in_doubt for r in racers)}",
        "error replies to moves: " + (", ".join(f"{code} {n}" for code, n in errors.most_common()) or "none"),
    ]
    back = [
        min((a.at for a in r.acks if a.at > drop), default=last) - drop
        for r in racers
        if not r.out_of_play
        for drop in r.drops
    ]
    if back:
        ms = sorted(b * 1000 for b in back)
        lines.append(
            f"from a dropped connection to the racer's next ack: p50 {percentile(ms, 0.5):.0f} ms,"
            f" p99 {percentile(ms, 0.99):.0f} ms, max {max(ms):.0f} ms ({len(ms)} drops)"
        )
    if refused:
        lines.append(f"room openings refused (another room opened instead): {len(refused)}: " + "; ".join(refused))
    if others:
        lines.append("racers stopped early: " + ", ".join(f"{why} {n}" for why, n in others.most_common()))
    for k, t in enumerate(restarts, 1):
        lines.append(
            f"  node{k} (port {t.port}): SIGTERM -> exit {t.exited - t.signalled:.2f} s (code {t.exit_code}),"
            f" start -> ready {t.ready - t.exited:.2f} s, ready -> UP at the balancer {t.up - t.ready:.2f} s"
        )
    for title, items in (("LOST", checked.lost), ("ABORTED", checked.aborted), ("TWICE", checked.twice)):
        for item in items[:30]:
            lines.append(f"{title} {item}")
    lines += log_warnings(logs)
    troubled = {item.split()[0].rstrip(":") for item in checked.lost + checked.aborted + checked.twice}
    for code in sorted(troubled & set(codes))[:10]:
        for log in sorted(logs.glob("node-*.log")):
            hits = [line for line in log.read_text(errors="replace").splitlines() if code in line]
            lines += [f"  {log.name}: {line}" for line in hits[:10]]
    return "\n".join(lines)


def log_warnings(logs: Path) -> list[str]:
    """The nodes' warnings and errors over the run, alike ones counted together (room codes,
    node ids and other words with digits blanked)."""
    seen: Counter[str] = Counter()
    for log in logs.glob("node-*.log"):
        for line in log.read_text(errors="replace").splitlines():
            message = line.partition(" WARNING ")[2] or line.partition(" ERROR ")[2]
            if message or line.startswith("Traceback"):
                words = [blank(word) for word in (message or line).split()]
                seen[" ".join(words)] += 1
    return [f"  node log: {n} x {text}" for text, n in seen.most_common(12)]


def blank(word: str) -> str:
    """``…`` for a room code, a node id or a number; else the word."""
    return "…" if any(c.isdigit() for c in word) or (word.isupper() and len(word) > 5) else word


async def open_races(url: str, count: int, clients: list[RaceClient], refused: list[str]) -> list[tuple[Racer, Racer]]:
    """``count`` rooms of two racers through the balancer, every racer on its own address,
    every race started and every racer's board shown. A room whose opening is refused is
    left as it is and another opened (twice at most), each refusal noted in ``refused``."""
    gate = asyncio.Semaphore(OPENING)

    async def one(k: int) -> tuple[Racer, Racer]:
        async with gate:
            owner = await connect_from(url, f"own{k}", address_of(2 * k))
            clients.append(owner)
            guest = await connect_from(url, f"guest{k}", address_of(2 * k + 1))
            clients.append(guest)
            for attempt in range(3):
                try:
                    code = await open_room(owner, guest)
                    break
                except ServerError as error:
                    refused.append(f"race {k}: {error.code} ({error})")
                    if attempt == 2:
                        raise
        return Racer(owner, code, 0), Racer(guest, code, 1)

    races = await asyncio.gather(*(one(k) for k in range(count)))
    for pair in races:
        for racer in pair:
            await racer.client.wait_room(racer.code, functools.partial(caught_up, version=0, seat=racer.seat), 30)
    return list(races)


async def run(args: argparse.Namespace, logs: Path) -> str:
    redis = EmbeddedRedis(logs / "redis")
    redis_url = await redis.start()
    extra = ["--trusted-proxies", SOURCE, "--hint-workers", "0", "--drain", f"{args.drain:g}"]
    nodes: list[Node] = []
    clients: list[RaceClient] = []
    try:
        nodes = await start_nodes(3, redis_url, logs, extra=extra)
        plain, tls = free_port(), free_port()
        pem = certificate(logs / "certs")
        balancer = logs / "haproxy.log"
        with haproxy(environment(plain, tls, pem, [node.port for node in nodes]), balancer), from_own_addresses():
            try:
                return await measure(args, f"ws://{FRONT}:{plain}", nodes, balancer, redis_url, logs, extra, clients)
            finally:
                await close_all(clients)  # before the balancer goes: no reconnection attempts
    finally:
        stop_nodes(nodes)
        await redis.stop()


async def measure(
    args: argparse.Namespace,
    url: str,
    nodes: list[Node],
    balancer: Path,
    redis_url: str,
    logs: Path,
    extra: list[str],
    clients: list[RaceClient],
) -> str:
    """The races, the rolling restart during them, the check, the report."""
    front = urlsplit(url)

    async def serving() -> bool:
        return await http_status(FRONT, front.port or 80, "/healthz") == 200

    await wait_for("the balancer to serve", serving, 20)
    refused: list[str] = []
    races = await open_races(url, args.races, clients, refused)
    racers = [racer for pair in races for racer in pair]
    game = Play()
    started, load = time.monotonic(), os.getloadavg()[0]
    cpu_before, (busy_before, idle_before) = time.process_time(), machine_cpu()
    playing = [asyncio.ensure_future(race(racer, args.rate, game)) for racer in racers]
    await asyncio.sleep(args.before)
    restarts = [await restart(nodes, index, balancer, redis_url, logs, extra) for index in range(len(nodes))]
    await asyncio.sleep(args.after)
    game.over = True
    await asyncio.gather(*playing)
    last = time.monotonic()
    busy, idle = machine_cpu()
    cpu = Load(
        (time.process_time() - cpu_before) / (last - started),
        (busy - busy_before) / max(1e-9, busy - busy_before + idle - idle_before),
        load,
    )
    checked = await check_rooms(redis_url, races)
    begun, ended = restarts[0].signalled, restarts[-1].up
    windows = [
        Window("before (baseline)", max(started + SETTLE, begun - (ended - begun)), begun),
        Window("rolling restart", begun, ended),
    ]
    codes = [pair[0].code for pair in races]
    return report(args, racers, checked, windows, restarts, last, logs, codes, cpu, refused)


async def main_async(args: argparse.Namespace) -> str:
    raise_nofile_limit()  # 2 descriptors a racer here, and HAProxy sizes its limit from ours
    os.environ.setdefault("BENCH_NODE_LOG", "INFO")
    if args.logs is not None:
        args.logs.mkdir(parents=True, exist_ok=True)
        return await run(args, args.logs)
    with tempfile.TemporaryDirectory(prefix="bench-rolling-") as scratch:
        return await run(args, Path(scratch))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rolling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=200, help="races of two racers (default 200)")
    parser.add_argument("--rate", type=float, default=1.0, help="moves a second of each racer (default 1)")
    parser.add_argument("--drain", type=float, default=3.0, help="the nodes' --drain, seconds (default 3)")
    parser.add_argument("--before", type=float, default=30.0, help="seconds of play before the restart (default 30)")
    parser.add_argument("--after", type=float, default=5.0, help="seconds of play after it (default 5)")
    parser.add_argument("--logs", type=Path, help="keep the nodes' and the balancer's logs in this folder")
    args = parser.parse_args(argv)
    if not 1 <= args.races <= 25_000:
        parser.error("--races: 1 to 25000")
    exit_on_sigterm()
    print(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
