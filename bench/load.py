"""Load generator: bots race each other through real websocket clients.

Run::

    python -m bench.load --racers 1000 --rooms 500 --seconds 30 --spawn
    python -m bench.load --url ws://127.0.0.1:8765 --server-pid 1234 --racers 200 --rooms 100

Each room gets ``racers // rooms`` bots, each one a :class:`~client.lib.connection.RaceClient`
(its own connection and player). One bot creates the room, the others join, everyone
readies up, and after the countdown each bot loops: ask for its legal moves, pick one
at random (``deal`` only when nothing else is left or late in the race; an undo now and
then), play it, sleep to keep the pace. The pace is ``--rate`` moves a second in total:
each worker process hands out turns at its share of it to whichever of its bots are
racing (so bots waiting for a countdown or a rival do not lower the total), and no bot
moves more than ``--bot-rate`` times a second. A bot resigns when it is stuck (no legal
move) or has played ``--race-moves`` moves; when every racer of a room is done, the
creator asks for a rematch and the room races again, so the load stays steady.

Measured, per move: the time from sending it to its ``Ack``, and the time from sending it
to the moment each rival's client reads the ``Update`` that carries it (a rival sees a
``ProgressChanged`` whose version is the mover's ``Ack.version``; both bots of a room
live in the same process, so the two ends meet in a dict keyed by (room, version)).
Client timestamps are taken when the client library dispatches the frame, so a client
process that is short of CPU inflates the figures: the report gives the load
generator's own CPU use so that can be judged.

Only the measured window counts (after every room is racing, plus ``--settle``
seconds); ramp-up is excluded. ``--spawn`` starts the server itself (``python -m server``
on a free loopback port with a temporary data directory and its embedded Redis) and
stops it at the end; otherwise ``--server-pid`` names a running server to measure.
Server CPU time and RSS come from ``/proc/<pid>/stat`` and ``/proc/<pid>/status``.

The bots run in ``--workers`` processes (each room wholly inside one), because one
Python process cannot drive thousands of moves a second and also read its frames on
time; each worker collects garbage rarely, so its own pauses do not pass for server
latency. Everything runs on this machine, so the server, its Redis and the load generator
compete for the same cores; the report says how many there are.

The helpers for spawning and measuring a server (:func:`spawn_server`,
:class:`ProcSample`, :func:`raise_nofile_limit`) are shared with ``bench.idle``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import gc
import multiprocessing
import multiprocessing.connection
import os
import random
import resource
import signal
import socket
import subprocess
import sys
import tempfile
import time
from array import array
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    Ack,
    AskLegalMoves,
    BoardChanged,
    ClientMessage,
    CreateRoom,
    Joined,
    JoinRoom,
    Leave,
    LegalMoves,
    PlayMove,
    ProgressChanged,
    RacerFinished,
    RacerResigned,
    Ready,
    Rematch,
    Resign,
    RoomOptions,
    ServerMessage,
    Snapshot,
    StateChanged,
    Undo,
    Update,
)

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")

# -- the server process: spawning and measuring (shared with bench.idle) ----------------------


def raise_nofile_limit() -> int:
    """Raise the soft limit of open files to the hard limit; return the new soft limit."""
    _soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def check_loopback(url: str) -> None:
    """Refuse to load anything but this machine: the tool is for local measurements."""
    host = urlsplit(url).hostname or ""
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise SystemExit(f"refusing to load {host!r}: only loopback addresses (127.0.0.1, localhost, ::1)")


@dataclass(frozen=True, slots=True)
class ProcSample:
    """CPU time and memory of one process at one moment, read from /proc."""

    pid: int
    cpu: float  # seconds of user + system time
    rss_kb: int
    hwm_kb: int  # peak RSS so far

    @classmethod
    def read(cls, pid: int) -> ProcSample:
        with open(f"/proc/{pid}/stat") as stat:
            # The command name (field 2) may hold spaces; the fields after it are fixed.
            fields = stat.read().rsplit(")", 1)[1].split()
        cpu = (int(fields[11]) + int(fields[12])) / CLOCK_TICKS  # utime, stime
        status = {}
        with open(f"/proc/{pid}/status") as text:
            for line in text:
                key, _, value = line.partition(":")
                status[key] = value.split()
        return cls(pid, cpu, int(status["VmRSS"][0]), int(status["VmHWM"][0]))


def child_pids(parent: int) -> Iterator[tuple[int, str]]:
    """(pid, command name) of every process whose parent is ``parent``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                text = stat.read()
        except OSError:
            continue
        name = text[text.index("(") + 1 : text.rindex(")")]
        if int(text.rsplit(")", 1)[1].split()[1]) == parent:
            yield int(entry), name


def redis_child(server_pid: int) -> int | None:
    """The embedded Redis (valkey-server or redis-server) started by the race server, if any."""
    for pid, name in child_pids(server_pid):
        if "valkey" in name or "redis" in name:
            return pid
    return None


@dataclass
class SpawnedServer:
    """A race server started by the tool: ``python -m server`` with the embedded Redis."""

    process: subprocess.Popen[bytes]
    url: str
    data_dir: tempfile.TemporaryDirectory[str]
    log_path: Path

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """SIGTERM (the server shuts down cleanly, stopping its Redis), SIGKILL after 20 s."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.data_dir.cleanup()


def spawn_server(profile: Path | None = None, log_level: str = "WARNING") -> SpawnedServer:
    """Start ``python -m server`` on a free loopback port and wait until it accepts connections.

    The child gets the raised open-files limit (for many connections). With ``profile``,
    it runs under cProfile, which writes its statistics there when the server exits.
    """
    port = free_port()
    data_dir = tempfile.TemporaryDirectory(prefix="race-bench-")
    log_path = Path(data_dir.name) / "server.log"
    command = [sys.executable]
    if profile is not None:
        command += ["-m", "cProfile", "-o", str(profile)]
    # Solver workers off: the pool and daily deals would fill in the background and skew the figures.
    command += ["-m", "server", "--port", str(port), "--data-dir", str(Path(data_dir.name) / "redis")]
    command += ["--solver-workers", "0"]
    command += ["--log-level", log_level]
    with open(log_path, "wb") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, preexec_fn=raise_nofile_limit)
    server = SpawnedServer(process, f"ws://127.0.0.1:{port}", data_dir, log_path)
    deadline = time.monotonic() + 30
    while True:
        if process.poll() is not None:
            log_text = log_path.read_text(errors="replace")
            data_dir.cleanup()
            raise SystemExit(f"the server exited with {process.returncode} while starting:\n{log_text}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return server
        if time.monotonic() > deadline:
            server.stop()
            raise SystemExit("the server did not listen within 30 s")
        time.sleep(0.05)


def machine_cpu() -> tuple[float, float]:
    """(busy, idle) CPU seconds of the whole machine since boot, from /proc/stat."""
    with open("/proc/stat") as stat:
        fields = [int(n) for n in stat.readline().split()[1:]]
    idle = fields[3] + fields[4]  # idle, iowait
    busy = sum(fields[:8]) - idle  # user nice system idle iowait irq softirq steal
    return busy / CLOCK_TICKS, idle / CLOCK_TICKS


def describe_memory(sample: ProcSample) -> str:
    return f"{sample.rss_kb / 1024:.1f} MB (peak {sample.hwm_kb / 1024:.1f} MB)"


# -- what the bots measure -----------------------------------------------------------------


@dataclass
class Samples:
    """Times (monotonic seconds, comparable across processes on Linux) and latencies."""

    sent: array[float] = field(default_factory=lambda: array("d"))
    latency: array[float] = field(default_factory=lambda: array("d"))

    def add(self, sent: float, latency: float) -> None:
        self.sent.append(sent)
        self.latency.append(latency)

    def extend(self, other: Samples) -> None:
        self.sent.extend(other.sent)
        self.latency.extend(other.latency)

    def within(self, start: float, end: float) -> list[float]:
        """Latencies of the samples sent in [start, end), sorted."""
        return sorted(lat for sent, lat in zip(self.sent, self.latency, strict=True) if start <= sent < end)


@dataclass
class WorkerResult:
    """What one worker process measured; the parent merges them and cuts the window."""

    ack: Samples = field(default_factory=Samples)  # move (or undo) sent -> its Ack read
    rival: Samples = field(default_factory=Samples)  # move sent -> a rival read its Update
    legal: Samples = field(default_factory=Samples)  # AskLegalMoves sent -> reply read
    acked_at: array[float] = field(default_factory=lambda: array("d"))  # when each move's Ack came
    undos: int = 0
    errors: list[tuple[float, str]] = field(default_factory=list)
    races: int = 0  # races started
    endings: Counter[str] = field(default_factory=Counter)  # why bots stopped racing: stuck, move cap, won, ...
    connections: int = 0
    rooms_racing: int = 0


class Recorder:
    """Collects one worker's samples; matches moves to their rivals' updates by (room, version)."""

    def __init__(self) -> None:
        self.result = WorkerResult()
        # (room, version) -> when the move was sent, waiting for rivals' updates ...
        self._moves: dict[tuple[str, int], float] = {}
        # ... and rivals' updates read before the mover's Ack told us the version.
        self._early: dict[tuple[str, int], list[float]] = {}

    def acked(self, room: str, version: int, sent: float, now: float) -> None:
        self.result.ack.add(sent, now - sent)
        self.result.acked_at.append(now)
        key = (room, version)
        for seen in self._early.pop(key, ()):
            self.result.rival.add(sent, seen - sent)
        self._moves[key] = sent

    def seen(self, room: str, version: int, now: float) -> None:
        key = (room, version)
        sent = self._moves.get(key)
        if sent is None:
            self._early.setdefault(key, []).append(now)
        else:
            self.result.rival.add(sent, now - sent)

    def error(self, code: str) -> None:
        self.result.errors.append((time.monotonic(), code))

    def prune(self, older_than: float) -> None:
        """Forget moves and updates that will never be matched (a race's opening boards,
        a winning move whose Ack names a later version, rivals that left)."""
        self._moves = {k: t for k, t in self._moves.items() if t >= older_than}
        self._early = {k: ts for k, ts in self._early.items() if ts[-1] >= older_than}


# -- the bots -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    """What one worker process does (sent to it, so plain picklable data)."""

    url: str
    rooms: Sequence[int]
    per_room: int
    rate: float  # this worker's moves a second, shared by its racing bots
    bot_interval: float  # the shortest time between two moves of one bot
    variant: str
    race_moves: int
    deal_after: int
    undo_share: float
    connect_concurrency: int
    seed: int


def choose_move(moves: list[str], plays: int, deal_after: int, rng: random.Random) -> str:
    """A random legal move; ``deal`` only when it is the only one, or now and then late in the race."""
    others = [move for move in moves if move != "deal"]
    if len(others) < len(moves) and (not others or (plays >= deal_after and rng.random() < 0.25)):
        return "deal"
    return rng.choice(others)


class Pacer:
    """Hands out turns to move at a steady ``rate`` a second, first come first served.

    Sharing one pacer keeps the total rate at the target however many bots race at the
    moment (others wait for a countdown or a rival). A turn not taken is not saved up:
    when the bots fall behind (slow replies) they go on from now, never in a burst.
    """

    def __init__(self, rate: float) -> None:
        self.interval = 1 / rate
        self.next = time.monotonic()

    async def turn(self) -> None:
        now = time.monotonic()
        at = max(self.next, now)
        self.next = at + self.interval
        if at > now:
            await asyncio.sleep(at - now)


class Bot:
    """One racer: a client, its seat, and the room state it follows."""

    def __init__(self, client: RaceClient, recorder: Recorder, pacer: Pacer, plan: Plan, rng: random.Random) -> None:
        self.client = client
        self.pacer = pacer
        self.recorder = recorder
        self.plan = plan
        self.rng = rng
        self.room = ""
        self.seat = -1
        self.state = ""
        self.done = False  # finished or resigned in the current race
        self.changed = asyncio.Event()
        self._sent: dict[int, float] = {}
        client.listen(self._on_message)

    def _on_message(self, _room: str, message: ServerMessage) -> None:
        # Called by the client library as it dispatches each frame: the closest we get
        # to the moment the frame was read.
        now = time.monotonic()
        if isinstance(message, Ack):
            sent = self._sent.pop(message.id, None)
            if sent is not None and message.version is not None and message.room is not None:
                self.recorder.acked(message.room, message.version, sent, now)
        elif isinstance(message, Update):
            for event in message.events:
                if isinstance(event, ProgressChanged | BoardChanged):
                    if event.seat != self.seat:
                        self.recorder.seen(message.room, message.version, now)
                elif isinstance(event, StateChanged):
                    self._set_state(event.state)
                elif isinstance(event, RacerFinished | RacerResigned) and event.seat == self.seat:
                    self.done = True
        elif isinstance(message, Snapshot):
            self._set_state(message.view.state)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.changed.set()

    async def wait_state(self, state: str, stop: asyncio.Event) -> bool:
        """Wait until the room is in ``state``; False if the run is stopping first."""
        while self.state != state:
            if stop.is_set():
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), 0.5)
        return True

    async def call(self, build: Callable[[int], ClientMessage], timed: Samples | None = None) -> ServerMessage | None:
        """Send a request and return its reply; errors are counted, not raised."""
        sent = time.monotonic()
        try:
            reply = await self.client.request(build, timeout=30)
        except ServerError as error:
            self.recorder.error(error.code)
            return None
        except TimeoutError:
            self.recorder.error("timeout (client)")
            return None
        except ConnectionError:
            self.recorder.error("connection lost (client)")
            return None
        if timed is not None:
            timed.add(sent, time.monotonic() - sent)
        return reply

    async def resign(self, stop: asyncio.Event) -> None:
        """Resign, trying again if the server fails (else the room would never finish)."""
        for _ in range(10):
            if stop.is_set() or self.done or self.state != "racing":
                return
            if await self.call(lambda i: Resign(id=i, room=self.room)) is not None:
                return
            await asyncio.sleep(0.2)

    def _racing(self, stop: asyncio.Event) -> bool:
        if stop.is_set() or self.done or self.state != "racing":
            if self.done and not stop.is_set():
                self.recorder.result.endings["won"] += 1
            return False
        return True

    def _timed(self, message: PlayMove | Undo) -> PlayMove | Undo:
        """Note when a move goes out (called by the client library just before it sends)."""
        self._sent[message.id] = time.monotonic()
        return message

    def _play(self, room: str, move: str, request_id: int) -> PlayMove | Undo:
        return self._timed(PlayMove(id=request_id, room=room, move=move))

    async def race(self, stop: asyncio.Event) -> None:
        """Play the current race at the plan's pace until done, stuck, at the move cap or stopped."""
        self.done = False
        plays = 0
        room = self.room
        last = 0.0
        while self._racing(stop):
            # No faster than a brisk human (and the server's per-connection rate limit) ...
            delay = last + self.plan.bot_interval - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            # ... and in turn with the worker's other bots, at the worker's share of --rate.
            await self.pacer.turn()
            last = time.monotonic()
            if not self._racing(stop):
                break
            if plays > 0 and self.rng.random() < self.plan.undo_share:
                await self.call(lambda i: self._timed(Undo(id=i, room=room)))
                self.recorder.result.undos += 1
                continue
            reply = await self.call(lambda i: AskLegalMoves(id=i, room=room), self.recorder.result.legal)
            if not isinstance(reply, LegalMoves):
                self.recorder.result.endings["no legal-moves reply"] += 1
                break  # not racing any more (the race ended) or the connection went
            if not reply.moves or plays >= self.plan.race_moves:
                self.recorder.result.endings["stuck" if not reply.moves else "move cap"] += 1
                await self.resign(stop)
                return
            move = choose_move(reply.moves, plays, self.plan.deal_after, self.rng)
            await self.call(functools.partial(self._play, room, move))
            plays += 1


class Ramp:
    """Counts rooms that have settled (racing, or given up); says 'ready' to the parent once all have."""

    def __init__(self, rooms: int, pipe: multiprocessing.connection.Connection) -> None:
        self.rooms = rooms
        self.pipe = pipe
        self.settled = 0
        self.racing = 0
        self.started = time.monotonic()

    def settle(self, racing: bool) -> None:
        self.settled += 1
        self.racing += racing
        if self.settled == self.rooms:
            self.pipe.send(("ready", time.monotonic() - self.started, self.racing))


async def run_room(
    index: int,
    plan: Plan,
    recorder: Recorder,
    pacer: Pacer,
    gate: asyncio.Semaphore,
    stop: asyncio.Event,
    ramp: Ramp,
) -> None:
    """Seat ``plan.per_room`` bots in a new room and race, rematch, race ... until ``stop``."""
    rng = random.Random(plan.seed * 1_000_003 + index)
    bots: list[Bot] = []
    settled = False
    code = ""
    try:
        async with gate:
            for n in range(plan.per_room):
                try:
                    client = await RaceClient.connect(plan.url, f"bot{index}-{n}", reconnect=False)
                except (OSError, ServerError, TimeoutError) as error:
                    recorder.error(f"connect failed ({type(error).__name__})")
                    return
                recorder.result.connections += 1
                bots.append(Bot(client, recorder, pacer, plan, rng))
            creator = bots[0]
            options = RoomOptions(max_racers=plan.per_room)
            variant = plan.variant
            joined = await creator.call(lambda i: CreateRoom(id=i, variant=variant, options=options))  # type: ignore[arg-type]
            if not isinstance(joined, Joined):
                return
            code = joined.room
            creator.seat = joined.seat if joined.seat is not None else 0
            for bot in bots[1:]:
                reply = await bot.call(lambda i: JoinRoom(id=i, room=code))
                if not isinstance(reply, Joined) or reply.seat is None:
                    return
                bot.seat = reply.seat
            for bot in bots:
                bot.room = code
        while not stop.is_set():
            await asyncio.gather(*(bot.call(lambda i: Ready(id=i, room=code)) for bot in bots))
            if not all([await bot.wait_state("racing", stop) for bot in bots]):
                break
            recorder.result.races += 1
            if not settled:
                settled = True
                ramp.settle(True)
            await asyncio.gather(*(bot.race(stop) for bot in bots))
            if not all([await bot.wait_state("finished", stop) for bot in bots]):
                break
            await creator.call(lambda i: Rematch(id=i, room=code))
            if not all([await bot.wait_state("waiting", stop) for bot in bots]):
                break
        # Tidy up: leaving a race counts as resigning, so the server's room finishes now
        # rather than after the grace period of a dropped connection.
        for bot in bots:
            with contextlib.suppress(ServerError, TimeoutError, ConnectionError):
                await bot.client.request(lambda i: Leave(id=i, room=code), timeout=5)
    finally:
        if not settled:
            ramp.settle(False)
        await asyncio.gather(*(bot.client.close() for bot in bots), return_exceptions=True)


async def run_worker(plan: Plan, pipe: multiprocessing.connection.Connection) -> WorkerResult:
    """Drive the plan's rooms until the parent says stop; say 'ready' once all race."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()

    def on_pipe() -> None:
        if pipe.recv() == "stop":
            stop.set()

    loop.add_reader(pipe.fileno(), on_pipe)
    recorder = Recorder()
    ramp = Ramp(len(plan.rooms), pipe)
    gate = asyncio.Semaphore(plan.connect_concurrency)
    pacer = Pacer(plan.rate)
    tasks = [asyncio.create_task(run_room(index, plan, recorder, pacer, gate, stop, ramp)) for index in plan.rooms]

    async def prune() -> None:
        while True:
            await asyncio.sleep(5)
            recorder.prune(time.monotonic() - 10)

    pruner = asyncio.create_task(prune())
    await stop.wait()
    finished, unfinished = await asyncio.wait(tasks, timeout=20)
    for task in unfinished:
        task.cancel()
    for task in finished:
        error = task.exception()
        if error is not None:
            recorder.error(f"bot crashed ({type(error).__name__}: {error})")
    pruner.cancel()
    loop.remove_reader(pipe.fileno())
    recorder.result.rooms_racing = ramp.racing
    return recorder.result


def worker_main(plan: Plan, pipe: multiprocessing.connection.Connection) -> None:
    """Entry point of a worker process."""
    raise_nofile_limit()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and says stop
    # Full collections of the bots' many objects pause this process for 100 ms and more,
    # which would show up as server latency: collect rarely (memory is no concern here).
    gc.set_threshold(50_000, 50, 100)
    result = asyncio.run(run_worker(plan, pipe))
    pipe.send(("result", result))


# -- the parent: orchestration and the report -------------------------------------------------


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an already sorted list (nan when empty)."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, round(fraction * len(sorted_values) + 0.5) - 1))
    return sorted_values[rank]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.load", description="Bots race through real websocket clients; latency and cost."
    )
    parser.add_argument("--racers", type=int, default=1000, help="bots (connections), default 1000")
    parser.add_argument("--rooms", type=int, default=500, help="rooms, default 500 (racers/rooms bots each)")
    parser.add_argument("--seconds", type=float, default=30.0, help="length of the measured window")
    parser.add_argument("--rate", type=float, default=2000.0, help="moves a second in total (bots pace to it)")
    parser.add_argument("--bot-rate", type=float, default=8.0, help="most moves a second of one bot, default 8")
    parser.add_argument("--url", default="ws://127.0.0.1:8765", help="server to load (loopback only)")
    parser.add_argument("--spawn", action="store_true", help="start the server (embedded Redis) for the run")
    parser.add_argument("--server-pid", type=int, help="without --spawn: the server process to measure")
    parser.add_argument("--profile", type=Path, help="with --spawn: run the server under cProfile, stats here")
    parser.add_argument("--workers", type=int, default=2, help="load-generator processes, default 2")
    parser.add_argument("--variant", choices=["scorpion", "antares"], default="scorpion")
    parser.add_argument("--race-moves", type=int, default=200, help="a bot resigns after this many moves")
    parser.add_argument("--deal-after", type=int, default=40, help="moves before a bot deals by choice")
    parser.add_argument("--undo-share", type=float, default=0.02, help="share of turns that undo instead")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds after ramp-up before measuring")
    parser.add_argument("--ramp-timeout", type=float, default=120.0, help="longest wait for every room to race")
    parser.add_argument("--connect-concurrency", type=int, default=20, help="rooms set up at once per worker")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    if args.racers < args.rooms or args.rooms < 1 or args.racers // args.rooms > 8:
        parser.error("each room needs 1 to 8 racers: --racers must be 1 to 8 times --rooms")
    if args.profile is not None and not args.spawn:
        parser.error("--profile needs --spawn")
    return args


@dataclass
class Measurement:
    """Server-side figures at the two ends of the window."""

    server: tuple[ProcSample, ProcSample] | None = None
    redis: tuple[ProcSample, ProcSample] | None = None
    workers: list[tuple[ProcSample, ProcSample]] = field(default_factory=list)
    machine: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))  # machine_cpu() at both ends


def sample_all(server_pid: int | None, redis_pid: int | None, worker_pids: list[int]) -> list[ProcSample | None]:
    pids = [server_pid, redis_pid, *worker_pids]
    return [None if pid is None else ProcSample.read(pid) for pid in pids]


def report(args: argparse.Namespace, merged: WorkerResult, window: tuple[float, float], cost: Measurement) -> str:
    start, end = window
    seconds = end - start
    moves = sum(1 for t in merged.acked_at if start <= t < end)
    ack = merged.ack.within(start, end)
    rival = merged.rival.within(start, end)
    legal = merged.legal.within(start, end)
    errors_in = Counter(code for t, code in merged.errors if start <= t < end)
    errors_all = Counter(code for _, code in merged.errors)
    lines = [
        f"load: {args.racers} racers in {args.rooms} rooms ({args.racers // args.rooms} each), "
        f"{args.variant}, target {args.rate:g} moves/s, {args.workers} worker processes",
        f"machine: {os.cpu_count()} cores shared by the server, its Redis and the load generator",
        f"connections: {merged.connections}; rooms racing at the start of the window: {merged.rooms_racing}; "
        f"races started: {merged.races}; bots stopped racing: "
        + (", ".join(f"{why} x{n}" for why, n in merged.endings.most_common()) or "never"),
        f"window: {seconds:.1f} s; moves acked in it: {moves} ({moves / seconds:.0f} moves/s; "
        f"{merged.undos} undos over the whole run)",
        f"move -> ack:        p50 {ms(percentile(ack, 0.5))}  p90 {ms(percentile(ack, 0.9))}  "
        f"p99 {ms(percentile(ack, 0.99))}  max {ms(ack[-1] if ack else float('nan'))}  (n={len(ack)})",
        f"move -> rival diff: p50 {ms(percentile(rival, 0.5))}  p99 {ms(percentile(rival, 0.99))}  "
        f"max {ms(rival[-1] if rival else float('nan'))}  (n={len(rival)})",
        f"legal moves ask:    p50 {ms(percentile(legal, 0.5))}  p99 {ms(percentile(legal, 0.99))}  (n={len(legal)})",
    ]
    if cost.server is not None:
        before, after = cost.server
        cpu = after.cpu - before.cpu
        per_move = f"{cpu * 1000 / moves:.3f} ms" if moves else "n/a"
        lines.append(
            f"server: CPU {cpu:.2f} s in the window ({cpu / seconds * 100:.0f}% of a core), "
            f"{per_move} CPU per move (its legal-moves ask included); RSS {describe_memory(after)}"
        )
    if cost.redis is not None:
        before, after = cost.redis
        cpu = after.cpu - before.cpu
        lines.append(f"redis:  CPU {cpu:.2f} s ({cpu / seconds * 100:.0f}% of a core); RSS {describe_memory(after)}")
    ours = 0.0
    for pair in [cost.server, cost.redis, *cost.workers]:
        if pair is not None:
            ours += pair[1].cpu - pair[0].cpu
    if cost.workers:
        cpu = sum(after.cpu - before.cpu for before, after in cost.workers)
        lines.append(f"load generator: CPU {cpu:.2f} s ({cpu / seconds * 100:.0f}% of a core over its workers)")
    (busy0, idle0), (busy1, idle1) = cost.machine
    if busy1 + idle1 > busy0 + idle0:
        busy = busy1 - busy0
        share = busy / (busy + idle1 - idle0) * 100
        lines.append(
            f"machine: {share:.0f}% busy over the window; processes outside this test used {max(0.0, busy - ours):.1f} "
            "CPU seconds of it" + ("" if cost.server is not None else " (the server's share included: no pid given)")
        )
    lines.append(
        "errors in the window: " + (", ".join(f"{code} x{n}" for code, n in errors_in.most_common()) or "none")
    )
    if errors_all != errors_in:
        lines.append("errors over the whole run: " + ", ".join(f"{code} x{n}" for code, n in errors_all.most_common()))
    return "\n".join(lines)


def merge(results: list[WorkerResult]) -> WorkerResult:
    merged = WorkerResult()
    for result in results:
        merged.ack.extend(result.ack)
        merged.rival.extend(result.rival)
        merged.legal.extend(result.legal)
        merged.acked_at.extend(result.acked_at)
        merged.undos += result.undos
        merged.errors += result.errors
        merged.races += result.races
        merged.endings += result.endings
        merged.connections += result.connections
        merged.rooms_racing += result.rooms_racing
    return merged


def run(args: argparse.Namespace) -> str:
    raise_nofile_limit()
    spawned = spawn_server(args.profile) if args.spawn else None
    try:
        url = spawned.url if spawned is not None else args.url
        check_loopback(url)
        server_pid = spawned.pid if spawned is not None else args.server_pid
        redis_pid = redis_child(server_pid) if server_pid is not None else None
        per_room = args.racers // args.rooms
        context = multiprocessing.get_context("spawn")
        pipes: list[multiprocessing.connection.Connection] = []
        workers: list[multiprocessing.process.BaseProcess] = []
        for k in range(args.workers):
            plan = Plan(
                url=url,
                rooms=range(k, args.rooms, args.workers),
                per_room=per_room,
                rate=args.rate / args.workers,
                bot_interval=1 / args.bot_rate,
                variant=args.variant,
                race_moves=args.race_moves,
                deal_after=args.deal_after,
                undo_share=args.undo_share,
                connect_concurrency=args.connect_concurrency,
                seed=args.seed * 7919 + k,
            )
            ours, theirs = context.Pipe()
            process = context.Process(target=worker_main, args=(plan, theirs), name=f"load-worker-{k}")
            process.start()
            pipes.append(ours)
            workers.append(process)
        worker_pids = [w.pid for w in workers if w.pid is not None]
        ramp_start = time.monotonic()
        racing = 0
        for pipe in pipes:
            remaining = max(0.1, args.ramp_timeout - (time.monotonic() - ramp_start))
            if pipe.poll(remaining):
                _, _seconds, rooms = pipe.recv()
                racing += rooms
        ramp = time.monotonic() - ramp_start
        print(f"ramp-up: {racing} of {args.rooms} rooms racing after {ramp:.1f} s; measuring {args.seconds:g} s ...")
        time.sleep(args.settle)
        machine_before = machine_cpu()
        before = sample_all(server_pid, redis_pid, worker_pids)
        start = time.monotonic()
        time.sleep(args.seconds)
        end = time.monotonic()
        after = sample_all(server_pid, redis_pid, worker_pids)
        machine_after = machine_cpu()
        for pipe in pipes:
            pipe.send("stop")
        results = []
        for pipe in pipes:
            if pipe.poll(60):
                kind, result = pipe.recv()
                assert kind == "result"
                results.append(result)
        for worker in workers:
            worker.join(10)
            if worker.is_alive():
                worker.terminate()
        cost = Measurement(machine=(machine_before, machine_after))
        pairs = list(zip(before, after, strict=True))
        if pairs[0][0] is not None and pairs[0][1] is not None:
            cost.server = (pairs[0][0], pairs[0][1])
        if pairs[1][0] is not None and pairs[1][1] is not None:
            cost.redis = (pairs[1][0], pairs[1][1])
        cost.workers = [(b, a) for b, a in pairs[2:] if b is not None and a is not None]
        return report(args, merge(results), (start, end), cost)
    finally:
        if spawned is not None:
            spawned.stop()


def main(argv: list[str] | None = None) -> None:
    print(run(parse_args(argv)))


if __name__ == "__main__":
    main()
