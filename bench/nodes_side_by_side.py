"""One node and three nodes at once, taking turns: what forwarding costs, with the machine's
drift cancelled.

    python -m bench.nodes_side_by_side [--rooms 12] [--rate 4] [--seconds 20] [--turn 1] [--no-warm-up] [--home]

Two services run at the same time, each on its own embedded Redis: one node, and three
nodes with half the racers on a node that does not own their room (the rooms and bots of
:mod:`bench.nodes`). With ``--home`` the three nodes have routes, and those racers go home
to their room's node after joining (PROTOCOL.md, "Going home"), as behind the shipped
balancer: what three nodes cost when clients follow their rooms.

Their bots take turns: for ``--turn`` seconds only the one-node
service's bots move, then only the three-node service's, then the three-node's again and the
one-node's (ABBA, so neither always goes first), until each has had ``--seconds`` of moves.
A turn ends once its last move is acknowledged.

Each service's CPU (its nodes and its Redis, the scheduler's nanosecond count) is summed over
its own turns; its idle cost is its CPU during the other's turns, so what is subtracted was
measured in the same minutes too. Why: this machine's speed drifts by a third over tens of
seconds, so :mod:`bench.nodes`' pairs of runs, 15 s apart, gave single ratios from 0.86x to
2.07x. Turns of a second see the same machine. Printed as :mod:`bench.nodes` prints a pair,
then the ratio round by round (a round: one turn of each service; each turn's own CPU a move,
less the run's idle rates).
"""

from __future__ import annotations

import argparse
import asyncio
import math
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.lib.node_costs import batches_sent, cpu_of, kernel_and_wakeups, redis_calls
from bench.lib.node_fleet import (
    ROOT,
    Node,
    Room,
    Turn,
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
from bench.lib.node_report import Latencies, RunResult, net_per_move, report_pair
from client.lib.connection import RaceClient
from server.storage.embedded import EmbeddedRedis


@dataclass
class Service:
    """One service under test: its Redis, nodes, rooms and what its turns have cost."""

    label: str
    redis: EmbeddedRedis
    nodes: list[Node]
    rooms: list[Room]
    probe: Room | None
    clients: list[RaceClient]
    pids: list[int]  # the nodes', then Redis's
    turn: Turn = field(default_factory=Turn)
    stats: Latencies = field(default_factory=Latencies)
    own_seconds: float = 0.0
    own_cpu: float = 0.0
    own_redis_cpu: float = 0.0
    own_system: float = 0.0
    own_wakeups: int = 0
    other_seconds: float = 0.0
    other_cpu: float = 0.0
    other_wakeups: int = 0
    calls: dict[str, int] = field(default_factory=dict)  # Redis's commands during its own turns
    #: Each turn's (seconds, CPU, moves), for the per-round ratios.
    turns: list[tuple[float, float, int]] = field(default_factory=list)

    def moves(self) -> int:
        return len(self.stats.local) + len(self.stats.forwarded)

    def sample(self) -> tuple[float, float, float, int]:
        """CPU (nodes and Redis), Redis's CPU, the nodes' kernel time and wake-ups, so far."""
        system, wakeups = kernel_and_wakeups(self.pids[:-1])
        return cpu_of(self.pids), cpu_of(self.pids[-1:]), system, wakeups

    def idle_rate(self) -> float:
        """CPU seconds a second while the other service's bots moved."""
        return self.other_cpu / max(1e-9, self.other_seconds)


async def start_service(count: int, rooms: int, logs: Path, warm: bool = True, routes: bool = False) -> Service:
    redis = EmbeddedRedis(logs / f"redis-{count}")
    await redis.start()
    if warm:
        await warm_up(redis.url, logs, ROOT)
    nodes = await start_nodes(count, redis.url, logs, routes=routes)
    clients: list[RaceClient] = []
    opened, probe = await open_rooms(nodes, rooms, clients)
    label = f"{count} node{'s' if count > 1 else ''}"
    return Service(label, redis, nodes, opened, probe, clients, [node.process.pid for node in nodes] + [pid_of(redis)])


async def stop_service(service: Service) -> None:
    await close_all(service.clients)
    stop_nodes(service.nodes)
    await service.redis.stop()


async def take_turn(service: Service, other: Service, seconds: float) -> None:
    """Let ``service``'s bots move for ``seconds``, then wait for their last ack."""
    calls_before = await redis_calls(service.redis.url)
    before, other_before = service.sample(), other.sample()
    started, moves_before = time.monotonic(), service.moves()
    service.turn.on.set()
    await asyncio.sleep(seconds)
    service.turn.on.clear()
    await service.turn.drained.wait()
    await asyncio.sleep(0.02)  # the other racer's update of the last move
    elapsed = time.monotonic() - started
    after, other_after = service.sample(), other.sample()
    cpu = after[0] - before[0]
    service.own_seconds += elapsed
    service.own_cpu += cpu
    service.own_redis_cpu += after[1] - before[1]
    service.own_system += after[2] - before[2]
    service.own_wakeups += after[3] - before[3]
    service.turns.append((elapsed, cpu, service.moves() - moves_before))
    for name, n in (await redis_calls(service.redis.url)).items():
        service.calls[name] = service.calls.get(name, 0) + n - calls_before.get(name, 0)
    other.other_seconds += elapsed
    other.other_cpu += other_after[0] - other_before[0]
    other.other_wakeups += other_after[3] - other_before[3]


def result_of(service: Service, batches: int) -> RunResult:
    """The service's turns as :func:`bench.lib.node_report.report_pair` prints a run."""
    return RunResult(
        service.label, service.moves(), service.own_seconds, service.own_cpu, service.stats, service.idle_rate(),
        service.calls, service.own_redis_cpu, node_system=service.own_system, node_wakeups=service.own_wakeups,
        idle_wakeups=service.other_wakeups / max(1e-9, service.other_seconds), batches=batches,
    )  # fmt: skip


def round_ratios(one: Service, three: Service) -> list[float]:
    """Three nodes' CPU a move against one node's, round by round (a round: one turn each)."""
    ratios = []
    for (s1, c1, m1), (s3, c3, m3) in zip(one.turns, three.turns, strict=False):
        net1 = max(0.0, c1 - one.idle_rate() * s1) / max(1, m1)
        net3 = max(0.0, c3 - three.idle_rate() * s3) / max(1, m3)
        if net1 > 0:
            ratios.append(net3 / net1)
    return ratios


async def main_async(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory(prefix="bench-side-by-side-") as directory:
        logs = Path(directory)
        one = await start_service(1, args.rooms, logs, args.warm_up)
        try:
            three = await start_service(3, args.rooms, logs, args.warm_up, routes=args.home)
            try:
                return await measure(one, three, args)
            finally:
                await stop_service(three)
        finally:
            await stop_service(one)


async def measure(one: Service, three: Service, args: argparse.Namespace) -> str:
    racing = asyncio.gather(
        *(play_rooms(service.rooms, args.rate, math.inf, service.stats, service.turn) for service in (one, three))
    )
    batches_before = await batches_sent([node.port for node in three.nodes])
    rounds = max(1, round(args.seconds / args.turn))
    try:
        for k in range(rounds):
            order = (one, three) if k % 2 == 0 else (three, one)
            for service, other in (order, order[::-1]):
                await take_turn(service, other, args.turn)
    finally:
        for service in (one, three):
            service.turn.over = True
            service.turn.on.set()
        await racing
    batches = await batches_sent([node.port for node in three.nodes]) - batches_before
    results = [result_of(one, 0), result_of(three, batches)]
    if three.probe is not None:
        results[1].failover = await failover(three.nodes[0], three.probe[0], three.probe[2])
    await resign_all(one.rooms)
    await resign_all(three.rooms)
    overall = net_per_move(results[1]) / max(1e-12, net_per_move(results[0]))
    spread = sorted(round_ratios(one, three)) or [math.nan]
    return "\n".join(
        [
            f"{rounds} rounds of turns of {args.turn:g} s: {one.own_seconds:.1f} s of moves on one node,"
            f" {three.own_seconds:.1f} s on three",
            report_pair(results[0], results[1]),
            f"-- three nodes' CPU a move against one node's: {overall:.2f}x over every turn;"
            f" round by round median {statistics.median(spread):.2f}x, quartiles {spread[len(spread) // 4]:.2f}"
            f"-{spread[(3 * len(spread)) // 4]:.2f}x, range {spread[0]:.2f}-{spread[-1]:.2f}x",
        ]
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.nodes_side_by_side", description=__doc__.split("\n\n")[0])
    add_load_arguments(parser, 20.0, "seconds of moves for each service")
    add_wait_arguments(parser, idle=False)
    parser.add_argument("--turn", type=float, default=1.0, help="seconds of one turn (default 1)")
    parser.add_argument(
        "--home", action="store_true", help="three nodes with routes: racers go home to their room's node"
    )
    print(asyncio.run(main_async(parser.parse_args(argv))))


if __name__ == "__main__":
    main()
