"""What a run of :mod:`bench.nodes` measured and how it is printed: a run's figures, one node's
run beside three nodes', and the medians over several such pairs (shared with
:mod:`bench.nodes_side_by_side` and :mod:`bench.nodes_split`)."""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from bench.lib.stats import latency_line, ms


@dataclass
class Latencies:
    local: list[float] = field(default_factory=list)
    forwarded: list[float] = field(default_factory=list)
    refused: int = 0


@dataclass
class RunResult:
    label: str
    moves: int
    seconds: float
    cpu: float
    stats: Latencies
    idle: float = 0.0  # CPU seconds per second with the rooms open and nobody moving
    calls: dict[str, int] = field(default_factory=dict)  # Redis commands during the moves
    redis_cpu: float = 0.0  # Redis's share of ``cpu``
    node_system: float = 0.0  # the nodes' CPU in the kernel during the moves
    node_wakeups: int = 0  # the nodes' wake-ups during the moves
    idle_wakeups: float = 0.0  # the nodes' wake-ups per second with nobody moving
    failover: float | None = None
    batches: int = 0  # batches the nodes sent each other during the moves
    syscalls: dict[str, int] = field(default_factory=dict)  # the nodes' system calls during the moves


def net_per_move(result: RunResult) -> float:
    """CPU seconds a move, less what the processes spend idle (heartbeats, renewals, sweeps)."""
    return max(0.0, result.cpu - result.idle * result.seconds) / max(1, result.moves)


def report_pair(one: RunResult, three: RunResult) -> str:
    """One node's run and three nodes' run, as measured one after the other."""
    lines = []
    for result in (one, three):
        moves = max(1, result.moves)
        per_move, net = result.cpu / moves, net_per_move(result)
        wakeups = max(0.0, result.node_wakeups - result.idle_wakeups * result.seconds) / moves
        lines.append(
            f"{result.label}: {result.moves / result.seconds:.0f} moves/s, server CPU {per_move * 1e3:.3f} ms/move,"
            f" {net * 1e3:.3f} ms/move without the idle {result.idle * 1e3:.0f} ms/s"
            f" ({net / max(1e-9, net_per_move(one)):.2f}x one node), refused {result.stats.refused}"
        )
        commands = sorted(((n, name) for name, n in result.calls.items() if n), reverse=True)
        total = sum(n for n, _ in commands)
        lines.append(
            f"  of which Redis {result.redis_cpu / moves * 1e3:.3f} ms/move, the nodes' kernel"
            f" {result.node_system / moves * 1e3:.3f} ms/move; node wake-ups a move"
            f" {result.node_wakeups / moves:.2f}, without the idle {result.idle_wakeups:.0f}/s {wakeups:.2f};"
            f" Redis commands per move {total / moves:.2f}: "
            + ", ".join(f"{name} {n / moves:.2f}" for n, name in commands[:6])
        )
        if result.batches:
            lines.append(
                f"  batches between nodes: {result.batches / moves:.2f} a move,"
                f" {result.batches / max(1, len(result.stats.forwarded)):.2f} a forwarded move"
            )
        if result.syscalls:
            top = sorted(((n, name) for name, n in result.syscalls.items()), reverse=True)
            lines.append(
                f"  system calls a move {sum(result.syscalls.values()) / moves:.2f}: "
                + ", ".join(f"{name} {n / moves:.2f}" for n, name in top[:8])
            )
        for label, values in (("local", result.stats.local), ("forwarded", result.stats.forwarded)):
            if values:
                lines.append("  " + latency_line(f"{label} move->ack", sorted(values)))
        if result.failover is not None:
            lines.append(f"  failover (SIGKILL of the owner -> next ack on another node): {ms(result.failover)}")
    return "\n".join(lines)


def report(pairs: list[tuple[RunResult, RunResult]]) -> str:
    """Every pair, then (for several) the medians over the pairs: the machine's speed drifts
    between runs, so each ratio compares runs made one right after the other."""
    lines = [f"-- pair {k + 1} --\n{report_pair(one, three)}" for k, (one, three) in enumerate(pairs)]
    if len(pairs) > 1:
        ratios = [net_per_move(three) / max(1e-9, net_per_move(one)) for one, three in pairs]
        added = [
            statistics.median(three.stats.forwarded) - statistics.median(one.stats.local)
            for one, three in pairs
            if three.stats.forwarded and one.stats.local
        ]
        failovers = [three.failover for _, three in pairs if three.failover is not None]
        lines.append(
            f"-- median of {len(pairs)} pairs: three nodes' CPU a move {statistics.median(ratios):.2f}x one node's"
            f" (each pair: {', '.join(f'{r:.2f}' for r in ratios)});"
            f" a forwarded move's p50 {statistics.median(added) * 1e3:+.2f} ms against one node's local p50;"
            f" failover {statistics.median(failovers):.2f} s"
        )
    return "\n".join(lines)
