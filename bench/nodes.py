"""One node against three, in one run: what forwarding costs, and how long a failover takes.

    python -m bench.nodes [--rooms 12] [--rate 4] [--seconds 10] [--pairs 1] [--profile DIR] [--tree DIR]
                          [--syscalls] [--idle 3] [--no-warm-up]

Both runs use one private embedded Redis and real ``python -m server`` processes. Every
room has two bot racers; each plays ``--rate`` moves a second (worked out from its own
board, so the server answers only moves). With one node, both racers are on it. With three,
rooms are created on every node in turn (owners spread out) and the second racer of each
room connects to the next node: half the racers are on a node that does not own their room,
so each of their moves is forwarded (sent to the owner on the nodes' direct link, run there,
the answer sent back).

Printed: moves/s, p50/p99 move->ack for local and forwarded moves, the server CPU per move
(every node process plus Redis, the scheduler's nanosecond count, less each run's idle cost),
and for three nodes the failover time: SIGKILL of a room's owner -> the next acknowledged move
of its racer on another node (which reconnects with its resume token and is seated on the
room's new owner; the probe room's own, where nobody has moved). ``--pairs N`` alternates N
one-node and three-node runs and ends with the medians of their ratios. ``--syscalls`` counts
the nodes' system calls a move during the moves (``strace -c``; it slows every call, so read
that run's counts, not its times).
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bench.lib.node_costs import batches_sent, cpu_of, kernel_and_wakeups, redis_calls, start_strace, stop_strace
from bench.lib.node_fleet import (
    ROOT,
    add_load_arguments,
    add_wait_arguments,
    close_all,
    failover,
    open_rooms,
    pid_of,
    play_rooms,
    resign_all,
    start_nodes,
    stop_nodes,
    warm_up,
)
from bench.lib.node_report import Latencies, RunResult, report
from client.lib.connection import RaceClient
from server.storage.embedded import EmbeddedRedis


async def one_run(count: int, args: argparse.Namespace, redis: EmbeddedRedis, logs: Path) -> RunResult:
    nodes = await start_nodes(count, redis.url, logs, args.profile, args.tree)
    clients: list[RaceClient] = []
    try:
        stats = Latencies()
        rooms, probe = await open_rooms(nodes, args.rooms, clients)
        redis_pid = pid_of(redis)
        pids = [node.process.pid for node in nodes] + [redis_pid]
        # The idle cost (heartbeats, lease renewals, sweeps, the matcher), to tell it apart.
        idle_before, idle_started = cpu_of(pids), time.monotonic()
        idle_wakeups_before = kernel_and_wakeups(pids[:-1])[1]
        await asyncio.sleep(args.idle)
        idle_seconds = time.monotonic() - idle_started
        idle = (cpu_of(pids) - idle_before) / idle_seconds
        idle_wakeups = (kernel_and_wakeups(pids[:-1])[1] - idle_wakeups_before) / idle_seconds
        calls_before, batches_before = await redis_calls(redis.url), await batches_sent([node.port for node in nodes])
        system_before, wakeups_before = kernel_and_wakeups(pids[:-1])
        tracer = start_strace(pids[:-1], logs / f"strace-{count}.txt") if args.syscalls else None
        cpu_before, redis_before, started = cpu_of(pids), cpu_of([redis_pid]), time.monotonic()
        until = started + args.seconds
        await play_rooms(rooms, args.rate, until, stats)
        seconds, cpu = time.monotonic() - started, cpu_of(pids) - cpu_before
        redis_cpu = cpu_of([redis_pid]) - redis_before
        syscalls = stop_strace(tracer, logs / f"strace-{count}.txt") if tracer is not None else {}
        system_after, wakeups_after = kernel_and_wakeups(pids[:-1])
        calls_after, batches_after = await redis_calls(redis.url), await batches_sent([node.port for node in nodes])
        calls = {name: n - calls_before.get(name, 0) for name, n in calls_after.items()}
        moves = len(stats.local) + len(stats.forwarded)
        label = f"{count} node{'s' if count > 1 else ''}"
        result = RunResult(
            label, moves, seconds, cpu, stats, idle, calls, redis_cpu, node_system=system_after - system_before,
            node_wakeups=wakeups_after - wakeups_before, idle_wakeups=idle_wakeups,
            batches=batches_after - batches_before, syscalls=syscalls,
        )  # fmt: skip
        if probe is not None:
            result.failover = await failover(nodes[0], probe[0], probe[2], verbose=args.verbose)
        await resign_all(rooms)
        return result
    finally:
        await close_all(clients)
        stop_nodes(nodes)


async def main_async(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory(prefix="bench-nodes-") as directory:
        logs = Path(directory)
        redis = EmbeddedRedis(logs / "redis")
        await redis.start()
        try:
            if args.warm_up:
                await warm_up(redis.url, logs, args.tree)
            pairs = []
            for _ in range(args.pairs):
                one = await one_run(1, args, redis, logs)
                pairs.append((one, await one_run(3, args, redis, logs)))
        finally:
            await redis.stop()
    return report(pairs)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.nodes", description=__doc__.split("\n\n")[0])
    add_load_arguments(parser)
    add_wait_arguments(parser)
    parser.add_argument(
        "--pairs", type=int, default=1, help="one-node and three-node runs, alternated, with their medians (default 1)"
    )
    parser.add_argument(
        "--profile", type=Path, metavar="DIR", help="run the nodes under cProfile; their statistics go to DIR"
    )
    parser.add_argument("--verbose", action="store_true", help="say why each failover attempt failed")
    parser.add_argument(
        "--syscalls", action="store_true", help="count the nodes' system calls a move (strace -c; slows the run)"
    )
    parser.add_argument(
        "--tree", type=Path, default=ROOT, help="the checkout whose server is measured (default: this one)"
    )
    print(asyncio.run(main_async(parser.parse_args(argv))))


if __name__ == "__main__":
    main()
