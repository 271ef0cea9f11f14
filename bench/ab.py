"""Two (or more) checkouts of the server under the same load generator, interleaved, repeated.

Run::

    python -m bench.ab --tree old=../wt-old --tree new=. --repeats 3 --phases 1,2 \\
        --racers 1000 --rooms 500 --seconds 15
    python -m bench.ab --tree off=. --tree uvloop=. --flags 'uvloop=--event-loop uvloop' --repeats 3

Each ``--tree NAME=PATH`` names a checkout with its own venv (``PATH/.venv/bin/python``, or
this interpreter if it has none): its server is started from ``PATH`` (so ``-m server``
imports that tree) on a free loopback port, with its embedded Redis (the same
``valkey-server``, socket and persistence settings in every tree since ``7d9b562``) and no
solver workers; ``--flags NAME=...`` adds server flags to one of them. ``--relay`` adds the
bare relay (:mod:`bench.relay`) as a target. The load generator is this tree's
(:mod:`bench.load`, whose flags it takes after its own), and so are the phases
(:mod:`bench.lib.compare`: ``--phases 1,2`` for paced with and without the legal-moves ask).

Every repeat runs each phase against every target in turn, the order rotating from one
repeat to the next, so that a change in the machine's other load falls on all of them
alike. It prints each window as it ends, then per phase and target the medians over the
repeats (server CPU per move, moves/s, move->ack p50/p99), and the median of the per-repeat
ratios of each target's CPU per move to the first target's: the figure to compare, since it
is taken within the same minute of the machine's load.

``--turns SECONDS`` loads every target at once instead, each with its own bots, which take
turns of that many seconds until each target had ``--seconds`` of moves in a phase
(:mod:`bench.lib.turns`): the ratios are then taken round by round, seconds apart, and each
server's idle cost is taken off (with ``--relay``, each tree is also set against the first
tree). ``--repeats`` runs the phases again with fresh bots.
"""

from __future__ import annotations

import argparse
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from bench.lib.compare import PHASES, Phase, run_phase
from bench.lib.load_run import LoadRun, parse_args
from bench.lib.spawn import SpawnedServer, exit_on_sigterm, parse_cpus, raise_nofile_limit, spawn_server
from bench.lib.stats import median, ms, percentile
from bench.lib.turns import describe as describe_turns
from bench.lib.turns import take_turns


@dataclass(frozen=True, slots=True)
class TreeTarget:
    """A server to start: a checkout (or the relay) and extra flags."""

    name: str
    tree: Path | None  # None: the relay of this tree
    flags: tuple[str, ...] = ()

    def describe(self) -> str:
        return f"{self.name}={self.tree or 'relay'} {shlex.join(self.flags)}".rstrip()

    def spawn(self, cpus: tuple[int, ...] | None, profile_dir: Path | None) -> SpawnedServer:
        profile = None if profile_dir is None else profile_dir / f"{self.name}.prof"
        if self.tree is None:
            return spawn_server(profile, module="bench.relay", cpus=cpus, extra=self.flags)
        venv_python = self.tree / ".venv" / "bin" / "python"
        python = str(venv_python) if venv_python.exists() else sys.executable
        return spawn_server(profile, module="server", cpus=cpus, extra=self.flags, python=python, cwd=self.tree)


def parse(argv: list[str] | None = None) -> tuple[argparse.Namespace, argparse.Namespace]:
    """(this bench's own options, :mod:`bench.load`'s options from the rest of the arguments)."""
    parser = argparse.ArgumentParser(
        prog="python -m bench.ab",
        description="Checkouts of the server under the same load, interleaved and repeated; medians.",
        epilog="Every other argument goes to bench.load (--racers, --rooms, --seconds, --phases, ...).",
    )
    parser.add_argument("--tree", action="append", default=[], help="NAME=PATH of a checkout (repeatable)")
    parser.add_argument("--flags", action="append", default=[], help="NAME=FLAGS: extra server flags of a target")
    parser.add_argument("--relay", action="store_true", help="add the bare relay as a target")
    parser.add_argument("--repeats", type=int, default=3, help="rounds over every phase and target, default 3")
    parser.add_argument("--profile-dir", type=Path, help="run every target under cProfile, NAME.prof here")
    parser.add_argument(
        "--turns", type=float, help="load every target at once, their bots taking turns of this many seconds"
    )
    own, rest = parser.parse_known_args(argv)
    load = parse_args(rest)
    if not own.tree and not own.relay:
        parser.error("give at least one --tree NAME=PATH (or --relay)")
    if own.repeats < 1:
        parser.error("--repeats must be at least 1")
    if own.turns is not None and own.turns <= 0:
        parser.error("--turns must be a positive number of seconds")
    return own, load


def targets_of(own: argparse.Namespace) -> list[TreeTarget]:
    flags: dict[str, tuple[str, ...]] = {}
    for item in own.flags:
        name, _, text = item.partition("=")
        flags[name] = tuple(shlex.split(text))
    found = [TreeTarget("relay", None, flags.get("relay", ()))] if own.relay else []
    for item in own.tree:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            raise SystemExit(f"--tree wants NAME=PATH, not {item!r}")
        found.append(TreeTarget(name, Path(path).resolve(), flags.get(name, ())))
    names = [target.name for target in found]
    if len(set(names)) != len(names):
        raise SystemExit(f"target names must differ: {names}")
    return found


def _window(run: LoadRun) -> tuple[float, float, float, float]:
    """(CPU per move in ms, moves/s, p50 ms, p99 ms) of one window."""
    ack = run.ack()
    return (
        run.cpu_per_move() * 1000,
        run.moves() / run.seconds,
        percentile(ack, 0.5) * 1000,
        percentile(ack, 0.99) * 1000,
    )


def summary(phase: Phase, names: list[str], windows: dict[str, list[tuple[float, float, float, float]]]) -> list[str]:
    base = names[0]
    lines = [
        f"{phase.name}: medians over {len(windows[base])} windows each",
        f"  {'target':<12} {'CPU/move':>10} {'moves/s':>9} {'p50':>10} {'p99':>10} {'CPU/move vs ' + base:>22}",
    ]
    for name in names:
        runs = windows[name]
        cpu, rate, p50, p99 = (median([w[i] for w in runs]) for i in range(4))
        ratios = [w[0] / b[0] for w, b in zip(runs, windows[base], strict=True) if b[0] > 0]
        each = " ".join(f"{r:.2f}" for r in ratios)
        lines.append(
            f"  {name:<12} {cpu:>7.3f} ms {rate:>9.0f} {p50:>7.2f} ms {p99:>7.2f} ms"
            f" {median(ratios):>9.3f}x (each: {each})"
        )
    return lines


def run_ab(own: argparse.Namespace, load: argparse.Namespace) -> str:
    raise_nofile_limit()
    targets = targets_of(own)
    cpus = parse_cpus(load.server_cpus)
    if own.profile_dir is not None:
        own.profile_dir.mkdir(parents=True, exist_ok=True)
    phases = [(n, p) for n, p in enumerate(PHASES, 1) if not load.phases or n in load.phases]
    names = [t.name for t in targets]
    windows: dict[int, dict[str, list[tuple[float, float, float, float]]]] = {
        n: {name: [] for name in names} for n, _ in phases
    }
    spawned: dict[str, SpawnedServer] = {}
    try:
        for target in targets:
            spawned[target.name] = target.spawn(cpus, own.profile_dir)
        header = (
            f"ab: {', '.join(t.describe() for t in targets)}; "
            f"{load.racers} racers in {load.rooms} rooms, {load.variant}, {load.seconds:g} s windows, "
            f"paced at {load.rate:g} moves/s; {own.repeats} repeats"
        )
        print(header, flush=True)
        if own.turns is not None:
            return "\n".join([header, *_in_turns(own, load, phases, spawned)])
        for repeat in range(own.repeats):
            order = names[repeat % len(names) :] + names[: repeat % len(names)]
            for number, phase in phases:
                for name in order:
                    window = _window(run_phase(load, phase, spawned[name]))
                    windows[number][name].append(window)
                    print(
                        f"... repeat {repeat + 1}, {phase.name}, {name}: {window[0]:.3f} ms CPU/move, "
                        f"{window[1]:.0f} moves/s, p50 {ms(window[2] / 1000)}, p99 {ms(window[3] / 1000)}",
                        flush=True,
                    )
        lines = [header]
        for number, phase in phases:
            lines += summary(phase, names, windows[number])
        return "\n".join(lines)
    finally:
        for server in spawned.values():
            server.stop()


def _in_turns(
    own: argparse.Namespace,
    load: argparse.Namespace,
    phases: list[tuple[int, Phase]],
    spawned: dict[str, SpawnedServer],
) -> list[str]:
    # With the relay first, each tree is also compared with the first tree.
    first_tree = next((t.name for t in targets_of(own) if t.tree is not None), None)
    lines = []
    for repeat in range(own.repeats):
        for _, phase in phases:
            found = describe_turns(phase, take_turns(load, phase, spawned, own.turns), also=first_tree)
            print(f"... repeat {repeat + 1}:", *found, sep="\n", flush=True)
            lines += found
    return lines


def main(argv: list[str] | None = None) -> None:
    exit_on_sigterm()
    own, load = parse(argv)
    print(run_ab(own, load))


if __name__ == "__main__":
    main()
