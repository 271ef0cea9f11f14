"""One measured window of the load generator (``bench.load``): its options, the plan the bots
follow, and what the bots saw and the processes spent in the window. ``bench.load`` prints
one; :mod:`bench.lib.compare` and ``bench.ab`` run several against different servers.
"""

from __future__ import annotations

import argparse
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.lib.bot_fleet import Fleet, split_plan
from bench.lib.bot_results import WorkerResult
from bench.lib.bots import Plan
from bench.lib.spawn import ProcSample, machine_cpu, parse_cpus, redis_child


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
    parser.add_argument("--relay", action="store_true", help="start and load the bare relay (bench.relay) instead")
    parser.add_argument("--server-pid", type=int, help="without --spawn: the server process to measure")
    parser.add_argument("--profile", type=Path, help="with --spawn: run the server under cProfile, stats here")
    parser.add_argument("--workers", type=int, default=2, help="load-generator processes, default 2")
    parser.add_argument("--variant", choices=["scorpion", "antares"], default="scorpion")
    parser.add_argument("--race-moves", type=int, default=200, help="a bot resigns after this many moves")
    parser.add_argument("--deal-after", type=int, default=40, help="moves before a bot deals by choice")
    parser.add_argument("--undo-share", type=float, default=0.02, help="share of turns that undo instead")
    parser.add_argument(
        "--no-legal-ask",
        dest="ask_legal",
        action="store_false",
        help="bots work out their legal moves with their own rules engine instead of asking",
    )
    parser.add_argument("--settle", type=float, default=2.0, help="seconds after ramp-up before measuring")
    parser.add_argument("--ramp-timeout", type=float, default=120.0, help="longest wait for every room to race")
    parser.add_argument("--connect-concurrency", type=int, default=20, help="rooms set up at once per worker")
    parser.add_argument("--server-cpus", help="with --spawn/--relay: pin the server and its Redis, e.g. 0")
    parser.add_argument("--client-cpus", help="pin the load generator's workers, e.g. 1")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--compare", action="store_true", help="relay against server, side by side (see bench.lib.compare)"
    )
    parser.add_argument(
        "--phases",
        type=lambda text: {int(n) for n in text.split(",")},
        help="with --compare: only these phases (1-4: paced/asked, paced/not, saturated/asked, saturated/not)",
    )
    parser.add_argument(
        "--saturation-bot-rate", type=float, default=20.0, help="with --compare: most moves a second a bot saturating"
    )
    args = parser.parse_args(argv)
    if args.racers < args.rooms or args.rooms < 1 or args.racers // args.rooms > 8:
        parser.error("each room needs 1 to 8 racers: --racers must be 1 to 8 times --rooms")
    if args.profile is not None and not (args.spawn or args.relay):
        parser.error("--profile needs --spawn or --relay")
    return args


def plan_of(args: argparse.Namespace, url: str) -> Plan:
    """The whole load (every room, the total rate) as one plan; :func:`split_plan` shares it out."""
    return Plan(
        url=url,
        rooms=range(args.rooms),
        per_room=args.racers // args.rooms,
        rate=args.rate,
        bot_interval=1 / args.bot_rate,
        variant=args.variant,
        race_moves=args.race_moves,
        deal_after=args.deal_after,
        undo_share=args.undo_share,
        connect_concurrency=args.connect_concurrency,
        seed=args.seed,
        ask_legal=args.ask_legal,
        cpus=parse_cpus(args.client_cpus),
    )


@dataclass
class Measurement:
    """Server-side figures at the two ends of the window."""

    server: tuple[ProcSample, ProcSample] | None = None
    redis: tuple[ProcSample, ProcSample] | None = None
    workers: list[tuple[ProcSample, ProcSample]] = field(default_factory=list)
    machine: tuple[tuple[float, float], tuple[float, float]] = ((0.0, 0.0), (0.0, 0.0))  # machine_cpu() at both ends

    def server_cpu(self) -> float:
        return float("nan") if self.server is None else self.server[1].cpu - self.server[0].cpu

    def workers_cpu(self) -> float:
        return sum(after.cpu - before.cpu for before, after in self.workers)


@dataclass
class LoadRun:
    """One measured window of load: what the bots saw and what the processes spent."""

    result: WorkerResult
    start: float
    end: float
    cost: Measurement
    rooms_racing: int = 0
    ramp_seconds: float = 0.0

    @property
    def seconds(self) -> float:
        return self.end - self.start

    def moves(self) -> int:
        """Moves (and undos) acknowledged within the window."""
        return sum(1 for t in self.result.acked_at if self.start <= t < self.end)

    def ack(self) -> list[float]:
        return self.result.ack.within(self.start, self.end)

    def cpu_per_move(self) -> float:
        """Server CPU seconds per acknowledged move in the window (nan without a server pid)."""
        moves = self.moves()
        return self.cost.server_cpu() / moves if moves else float("nan")


def _sample(pid: int | None) -> ProcSample | None:
    return None if pid is None else ProcSample.read(pid)


def measure(
    plan: Plan, workers: int, seconds: float, settle: float, ramp_timeout: float, server_pid: int | None
) -> LoadRun:
    """Run ``plan`` over ``workers`` processes, measure ``seconds`` after ramp-up and ``settle``."""
    redis_pid = redis_child(server_pid) if server_pid is not None else None
    with Fleet(split_plan(plan, workers)) as fleet:
        racing, ramp = fleet.wait_ready(ramp_timeout)
        time.sleep(settle)
        pids = [server_pid, redis_pid, *fleet.pids]
        machine_before = machine_cpu()
        before = [_sample(pid) for pid in pids]
        start = time.monotonic()
        time.sleep(seconds)
        end = time.monotonic()
        after = [_sample(pid) for pid in pids]
        machine_after = machine_cpu()
        result = fleet.stop()
    cost = Measurement(machine=(machine_before, machine_after))
    pairs = list(zip(before, after, strict=True))
    if pairs[0][0] is not None and pairs[0][1] is not None:
        cost.server = (pairs[0][0], pairs[0][1])
    if pairs[1][0] is not None and pairs[1][1] is not None:
        cost.redis = (pairs[1][0], pairs[1][1])
    cost.workers = [(b, a) for b, a in pairs[2:] if b is not None and a is not None]
    return LoadRun(result, start, end, cost, racing, ramp)
