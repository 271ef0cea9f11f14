"""Load generator: bots race each other through real websocket clients.

Run::

    python -m bench.load --racers 1000 --rooms 500 --seconds 30 --spawn
    python -m bench.load --racers 1000 --rooms 500 --seconds 30 --spawn --server-cpus 0 --client-cpus 1
    python -m bench.load --url ws://127.0.0.1:8765 --server-pid 1234 --racers 200 --rooms 100
    python -m bench.load --compare --seconds 20      # the relay and the server, side by side

The bots are described in :mod:`bench.bots`: each room gets ``racers // rooms`` of them,
each asks for its legal moves (or, with ``--no-legal-ask``, works them out with its own
rules engine from its board), plays one, and sleeps to keep the pace: ``--rate`` moves a
second in total, no bot faster than ``--bot-rate``.

Measured, per move: the time from sending it to its ``Ack``, and the time from sending it
to the moment each rival's client reads the ``Update`` that carries it. Client timestamps
are taken when the client library dispatches the frame, so a client process that is short
of CPU inflates the figures: the report gives the load generator's own CPU use so that can
be judged, and ``--server-cpus``/``--client-cpus`` pin the server (with its Redis) and the
load generator to separate cores.

Only the measured window counts (after every room is racing, plus ``--settle``
seconds); ramp-up is excluded. ``--spawn`` starts the server itself (``python -m server``
on a free loopback port with a temporary data directory and its embedded Redis) and
stops it at the end; ``--relay`` starts the bare relay of :mod:`bench.relay` instead;
otherwise ``--server-pid`` names a running server to measure. Server CPU time and RSS
come from ``/proc/<pid>/stat`` and ``/proc/<pid>/status``. ``--compare`` runs
:mod:`bench.compare`.
"""

from __future__ import annotations

import argparse
import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from bench.bot_results import WorkerResult
from bench.bots import Plan
from bench.fleet import Fleet, split_plan
from bench.spawn import (
    ProcSample,
    SpawnedServer,
    check_loopback,
    describe_memory,
    exit_on_sigterm,
    machine_cpu,
    parse_cpus,
    raise_nofile_limit,
    redis_child,
    spawn_server,
)
from bench.stats import latency_line, ms, percentile

# -- the parent: orchestration and the report -------------------------------------------------


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
    parser.add_argument("--compare", action="store_true", help="relay against server, side by side (see bench.compare)")
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


def report(args: argparse.Namespace, run: LoadRun) -> str:
    merged, start, end, cost = run.result, run.start, run.end, run.cost
    seconds = run.seconds
    moves = run.moves()
    rival = merged.rival.within(start, end)
    legal = merged.legal.within(start, end)
    errors_in = Counter(code for t, code in merged.errors if start <= t < end)
    errors_all = Counter(code for _, code in merged.errors)
    lines = [
        f"load: {args.racers} racers in {args.rooms} rooms ({args.racers // args.rooms} each), "
        f"{args.variant}, target {args.rate:g} moves/s, {args.workers} worker processes, "
        + ("legal moves asked" if args.ask_legal else "legal moves worked out by the bots"),
        f"machine: {os.cpu_count()} cores shared by the server, its Redis and the load generator"
        + (f" (server pinned to {args.server_cpus})" if args.server_cpus else "")
        + (f" (load generator pinned to {args.client_cpus})" if args.client_cpus else ""),
        f"ramp-up: {run.rooms_racing} of {args.rooms} rooms racing after {run.ramp_seconds:.1f} s",
        f"connections: {merged.connections}; rooms racing at the start of the window: {merged.rooms_racing}; "
        f"races started: {merged.races}; bots stopped racing: "
        + (", ".join(f"{why} x{n}" for why, n in merged.endings.most_common()) or "never"),
        f"window: {seconds:.1f} s; moves acked in it: {moves} ({moves / seconds:.0f} moves/s; "
        f"{merged.undos} undos over the whole run)",
        latency_line("move -> ack:       ", run.ack()),
        f"move -> rival diff: p50 {ms(percentile(rival, 0.5))}  p99 {ms(percentile(rival, 0.99))}  "
        f"max {ms(rival[-1] if rival else float('nan'))}  (n={len(rival)})",
        f"legal moves ask:    p50 {ms(percentile(legal, 0.5))}  p99 {ms(percentile(legal, 0.99))}  (n={len(legal)})",
    ]
    if cost.server is not None:
        cpu = cost.server_cpu()
        per_move = f"{cpu * 1000 / moves:.3f} ms" if moves else "n/a"
        asked = "its legal-moves ask included" if args.ask_legal else "no legal-moves ask"
        lines.append(
            f"server: CPU {cpu:.2f} s in the window ({cpu / seconds * 100:.0f}% of a core), "
            f"{per_move} CPU per move ({asked}); RSS {describe_memory(cost.server[1])}"
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
        cpu = cost.workers_cpu()
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


def run(args: argparse.Namespace) -> str:
    raise_nofile_limit()
    spawned: SpawnedServer | None = None
    if args.spawn or args.relay:
        module = "bench.relay" if args.relay else "server"
        spawned = spawn_server(args.profile, module=module, cpus=parse_cpus(args.server_cpus))
    try:
        url = spawned.url if spawned is not None else args.url
        check_loopback(url)
        server_pid = spawned.pid if spawned is not None else args.server_pid
        load = measure(plan_of(args, url), args.workers, args.seconds, args.settle, args.ramp_timeout, server_pid)
        return report(args, load)
    finally:
        if spawned is not None:
            spawned.stop()


def main(argv: list[str] | None = None) -> None:
    exit_on_sigterm()
    args = parse_args(argv)
    if args.compare:
        from bench.compare import run_compare

        print(run_compare(args))
    else:
        print(run(args))


if __name__ == "__main__":
    main()
