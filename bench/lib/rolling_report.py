"""The report of :mod:`bench.rolling`: for each window (the restart, and a baseline as long
just before it) the racers' longest gaps between acks, their drops and move->ack times; then
the totals, what the check found, the time from a drop to the next ack, the restart's timings
node by node (among them drain → DOWN: from SIGTERM to the balancer marking the node DOWN) and
their longest drain → DOWN, the nodes' warnings (alike ones counted together), and for each
room in trouble the nodes' log lines about it.
"""

from __future__ import annotations

import argparse
import itertools
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.lib.deployment import Restart
from bench.lib.rolling_check import Checked
from bench.lib.rolling_racers import Racer
from bench.lib.stats import percentile


def longest_gap(times: list[float], start: float, end: float, last: float) -> float:
    """The longest time between consecutive acks over [start, end]: from the last ack before
    ``start`` (``start`` if none) through the acks within to the first after ``end`` (``last``,
    the end of play, if none)."""
    before = max((t for t in times if t <= start), default=start)
    inside = [t for t in times if start < t <= end]
    after = min((t for t in times if t > end), default=last)
    points = [before, *inside, after]
    return max(b - a for a, b in itertools.pairwise(points))


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
        f" --drain {args.drain:g}, 3 nodes restarted one after the other, each back on its address and ports;"
        f" {os.cpu_count()} cores",
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
            f"  node{k} ({t.host} port {t.port}): drain → DOWN: {seconds(t.drain_to_down)},"
            f" SIGTERM -> exit {t.exited - t.signalled:.2f} s (code {t.exit_code}),"
            f" start -> ready {t.ready - t.exited:.2f} s, ready -> UP at the balancer {t.up - t.ready:.2f} s"
        )
    downs = [t.drain_to_down for t in restarts if t.drain_to_down is not None]
    unseen = f" ({len(restarts) - len(downs)} not seen)" if len(downs) < len(restarts) else ""
    lines.append(
        "drain → DOWN (SIGTERM to the balancer marking the node DOWN, its log read every 20 ms):"
        f" max {seconds(max(downs, default=None))}{unseen}"
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


def seconds(value: float | None) -> str:
    """``1.23 s``, or ``not seen`` for a time that never came."""
    return "not seen" if value is None else f"{value:.2f} s"


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
