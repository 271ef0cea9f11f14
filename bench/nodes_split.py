"""Who pays for forwarding: every room owned by one node, every second racer on another.

    python -m bench.nodes_split [--rooms 12] [--rate 4] [--seconds 10] [--repeats 2] [--idle 3] [--no-warm-up]

One node on its own embedded Redis, then two nodes on another: node A creates every room
and holds its first racer, node B holds every second racer. Each of B's racers' moves is
forwarded to A and answered back; each of A's racers' moves is sent to B for the other
racer. That is the mix of :mod:`bench.nodes`' three nodes (half the moves forwarded), with
the two roles in separate processes, so each one's CPU a move (the scheduler's nanosecond
count, less its idle rate) and wake-ups a move are read apart: the owner's against one
node's, and what the client's node adds. ``--repeats`` alternates the two runs.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from bench.lib.node_costs import cpu_of, kernel_and_wakeups
from bench.lib.node_fleet import (
    ROOT,
    add_load_arguments,
    add_wait_arguments,
    close_all,
    open_rooms,
    pid_of,
    play_rooms,
    resign_all,
    start_nodes,
    stop_nodes,
    warm_up,
)
from bench.lib.node_report import Latencies
from bench.lib.stats import latency_line
from client.lib.connection import RaceClient
from server.storage.embedded import EmbeddedRedis


@dataclass
class Split:
    """One run: CPU (µs) and wake-ups a move of each node, then Redis's CPU a move."""

    label: str
    moves: int
    cpu: list[float]  # µs a move, less idle: each node, then Redis
    wakeups: list[float]  # a move, less idle: each node
    stats: Latencies


async def one_run(count: int, args: argparse.Namespace, logs: Path) -> Split:
    directory = logs / f"redis-{count}-{time.monotonic_ns()}"
    redis = EmbeddedRedis(directory)
    await redis.start()
    clients: list[RaceClient] = []
    nodes = []
    try:
        if args.warm_up:
            await warm_up(redis.url, logs, ROOT)
        nodes = await start_nodes(count, redis.url, logs)
        rooms, _ = await open_rooms(nodes, args.rooms, clients, split=True)
        pids = [node.process.pid for node in nodes] + [pid_of(redis)]

        def sample() -> tuple[list[float], list[int]]:
            return [cpu_of([pid]) for pid in pids], [kernel_and_wakeups([pid])[1] for pid in pids[:-1]]

        (cpu0, wake0), idle_started = sample(), time.monotonic()
        await asyncio.sleep(args.idle)
        (cpu1, wake1), idle_seconds = sample(), time.monotonic() - idle_started
        stats = Latencies()
        started = time.monotonic()
        until = started + args.seconds
        await play_rooms(rooms, args.rate, until, stats)
        (cpu2, wake2), seconds = sample(), time.monotonic() - started
        moves = max(1, len(stats.local) + len(stats.forwarded))
        scale = seconds / idle_seconds
        cpu = [((c2 - c1) - (c1 - c0) * scale) / moves * 1e6 for c0, c1, c2 in zip(cpu0, cpu1, cpu2, strict=True)]
        wakeups = [((w2 - w1) - (w1 - w0) * scale) / moves for w0, w1, w2 in zip(wake0, wake1, wake2, strict=True)]
        await resign_all(rooms)
        label = "one node" if count == 1 else "owner A + client node B"
        return Split(label, moves, cpu, wakeups, stats)
    finally:
        await close_all(clients)
        stop_nodes(nodes)
        await redis.stop()


def report(one: Split, two: Split) -> str:
    lines = []
    for run in (one, two):
        names = ["node"] if len(run.cpu) == 2 else ["A (owner)", "B (client's node)"]
        nodes = zip(names, run.cpu[:-1], run.wakeups, strict=True)  # cpu ends with Redis's
        parts = [f"{name} {cpu:.0f} µs, {wake:.2f} wake-ups" for name, cpu, wake in nodes]
        lines.append(
            f"{run.label}: {run.moves} moves; a move: " + "; ".join(parts) + f"; Redis {run.cpu[-1]:.0f} µs;"
            f" in all {sum(run.cpu):.0f} µs"
        )
        for label, values in (("local", run.stats.local), ("forwarded", run.stats.forwarded)):
            if values:
                lines.append("  " + latency_line(f"{label} move->ack", sorted(values)))
    owner, client = two.cpu[0], two.cpu[1]
    lines.append(
        f"  the owner against one node: {owner / max(1e-9, one.cpu[0]):.2f}x; the client's node adds"
        f" {client / max(1e-9, sum(one.cpu)):.2f} of one node's whole cost; both nodes and Redis"
        f" {sum(two.cpu) / max(1e-9, sum(one.cpu)):.2f}x"
    )
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory(prefix="bench-split-") as directory:
        logs = Path(directory)
        blocks = []
        for k in range(args.repeats):
            one = await one_run(1, args, logs)
            two = await one_run(2, args, logs)
            blocks.append(f"-- repeat {k + 1} --\n{report(one, two)}")
        return "\n".join(blocks)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.nodes_split", description=__doc__.split("\n\n")[0])
    add_load_arguments(parser)
    add_wait_arguments(parser)
    parser.add_argument("--repeats", type=int, default=2, help="one-node and split runs, alternated (default 2)")
    print(asyncio.run(main_async(parser.parse_args(argv))))


if __name__ == "__main__":
    main()
