"""The server against the bare relay, under the same load generator, in one run (issue 16).

Run (through ``bench.load``, whose flags it takes)::

    python -m bench.load --compare --racers 1000 --rooms 500 --seconds 20 --server-cpus 0 --client-cpus 1

It starts both the relay (:mod:`bench.relay`) and the race server, each with its own
embedded Redis, pinned to ``--server-cpus``, and loads them in turn (relay, then server,
phase by phase, so that a change in the machine's other load hits both alike) with the
same bots (pinned to ``--client-cpus``):

- paced at ``--rate`` moves a second (2,000 by default), with and without the legal-moves
  ask: server CPU per move, move->ack p50/p99;
- saturated (no pacing, each bot at most ``--saturation-bot-rate`` moves a second, every
  bot waiting for each reply before its next request), with and without the ask: moves a
  second, and CPU per move there.

Every phase gets fresh connections and rooms. The ratio column is server / relay.
``--phases 1,3`` runs only those of the four (numbered as listed above: paced with the ask,
paced without, saturated with, saturated without).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from collections import Counter

from bench.lib.bots import Plan
from bench.lib.load_run import LoadRun, measure, plan_of
from bench.lib.spawn import SpawnedServer, check_loopback, parse_cpus, raise_nofile_limit, spawn_server
from bench.lib.stats import ms, percentile, ratio

TARGETS = ("relay", "server")


@dataclasses.dataclass(frozen=True, slots=True)
class Phase:
    name: str
    ask_legal: bool
    saturated: bool


PHASES = (
    Phase("paced, legal moves asked", ask_legal=True, saturated=False),
    Phase("paced, no legal-moves ask", ask_legal=False, saturated=False),
    Phase("saturated, legal moves asked", ask_legal=True, saturated=True),
    Phase("saturated, no legal-moves ask", ask_legal=False, saturated=True),
)


def phase_plan(args: argparse.Namespace, phase: Phase, url: str) -> Plan:
    """The load of ``phase`` against the server at ``url``."""
    plan = dataclasses.replace(plan_of(args, url), ask_legal=phase.ask_legal)
    if phase.saturated:
        plan = dataclasses.replace(plan, rate=1_000_000.0, bot_interval=1 / args.saturation_bot_rate)
    return plan


def run_phase(args: argparse.Namespace, phase: Phase, target: SpawnedServer) -> LoadRun:
    plan = phase_plan(args, phase, target.url)
    return measure(plan, args.workers, args.seconds, args.settle, args.ramp_timeout, target.pid)


def _row(label: str, relay: float, server: float, unit: str, scale: float = 1.0, digits: int = 3) -> str:
    return (
        f"  {label:<34} {relay * scale:>10.{digits}f}{unit:<5} {server * scale:>10.{digits}f}{unit:<5} "
        f"{ratio(server, relay):>8}"
    )


def describe(phase: Phase, runs: dict[str, LoadRun]) -> list[str]:
    relay, server = runs["relay"], runs["server"]
    lines = [f"{phase.name}:", f"  {'':<34} {'relay':>15} {'server':>15} {'ratio':>8}"]
    lines.append(_row("moves/s", relay.moves() / relay.seconds, server.moves() / server.seconds, "", digits=0))
    lines.append(_row("server CPU per move", relay.cpu_per_move(), server.cpu_per_move(), " ms", 1000))
    lines.append(
        _row(
            "server CPU share of a core",
            relay.cost.server_cpu() / relay.seconds,
            server.cost.server_cpu() / server.seconds,
            " %",
            100,
            0,
        )
    )
    lines.append(
        _row(
            "load generator CPU share",
            relay.cost.workers_cpu() / relay.seconds,
            server.cost.workers_cpu() / server.seconds,
            " %",
            100,
            0,
        )
    )
    for label, fraction in (("move->ack p50", 0.5), ("move->ack p99", 0.99)):
        lines.append(_row(label, percentile(relay.ack(), fraction), percentile(server.ack(), fraction), " ms", 1000, 2))
    for name, run in runs.items():
        errors = Counter(code for t, code in run.result.errors if run.start <= t < run.end)
        if errors:
            listed = ", ".join(f"{code} x{n}" for code, n in errors.most_common())
            lines.append(f"  {name}: errors in the window: {listed}")
    return lines


def run_compare(args: argparse.Namespace) -> str:
    raise_nofile_limit()
    cpus = parse_cpus(args.server_cpus)
    targets: dict[str, SpawnedServer] = {}
    try:
        targets["relay"] = spawn_server(module="bench.relay", cpus=cpus)
        targets["server"] = spawn_server(module="server", cpus=cpus)
        for target in targets.values():
            check_loopback(target.url)
        lines = [
            f"compare: {args.racers} racers in {args.rooms} rooms, {args.variant}, {args.seconds:g} s windows, "
            f"paced at {args.rate:g} moves/s, saturated at most {args.saturation_bot_rate:g} moves/s a bot; "
            f"{os.cpu_count()} cores; server and its Redis on CPUs {args.server_cpus or 'any'}, "
            f"load generator ({args.workers} workers) on CPUs {args.client_cpus or 'any'}",
        ]
        for number, phase in enumerate(PHASES, 1):
            if args.phases and number not in args.phases:
                continue
            runs = {}
            for name in TARGETS:
                runs[name] = run_phase(args, phase, targets[name])
                print(
                    f"... {phase.name}, {name}: {runs[name].moves() / runs[name].seconds:.0f} moves/s, "
                    f"p99 {ms(percentile(runs[name].ack(), 0.99))}",
                    flush=True,
                )
            lines += describe(phase, runs)
        return "\n".join(lines)
    finally:
        for target in targets.values():
            target.stop()
