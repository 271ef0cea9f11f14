"""Several servers loaded at once, their bots taking turns: CPU per move with the machine's
drift cancelled (``bench.ab --turns``).

Every target gets its own fleet of bots (the same plan, each pointed at its server), all
started paused; then, round after round, each fleet in turn moves for ``turn`` seconds while
the others wait (the order rotating each round: AB, BA, ... for two). A turn ends once its
server has gone quiet again (its last requests answered), so what a turn's moves cost is
inside it. Each server's own CPU is summed over its turns; its idle cost is its CPU during
the others' turns, so what is subtracted was measured in the same minutes. Why: a shared
machine's speed drifts within a minute, so windows tens of seconds apart (``bench.ab``
without ``--turns``) compare the targets on different machines, in effect; turns of a couple
of seconds see the same one.
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections import Counter
from contextlib import ExitStack
from dataclasses import dataclass, field

from bench.lib.bot_fleet import Fleet, split_plan
from bench.lib.bot_results import WorkerResult
from bench.lib.compare import Phase, phase_plan
from bench.lib.spawn import SpawnedServer
from bench.lib.stats import median, percentile

#: A server is quiet again once it spends less than this share of a core (after a turn).
QUIET_SHARE = 0.1
#: How often a turn's end looks at the server's CPU, and the longest it waits for quiet.
QUIET_POLL, QUIET_LONGEST = 0.05, 3.0


@dataclass
class Contender:
    """One target under turns: its server, its fleet, and what its turns cost."""

    name: str
    server: SpawnedServer
    fleet: Fleet
    #: Each own turn's (start, end, server CPU seconds), on time.monotonic().
    turns: list[tuple[float, float, float]] = field(default_factory=list)
    #: The server's kernel time in its own turns (part of their CPU).
    own_system: float = 0.0
    idle_seconds: float = 0.0
    idle_cpu: float = 0.0
    result: WorkerResult = field(default_factory=WorkerResult)

    def idle_rate(self) -> float:
        """CPU seconds a second of the server while the others' bots moved."""
        return self.idle_cpu / max(1e-9, self.idle_seconds)

    def moves_in(self, start: float, end: float) -> int:
        return sum(1 for t in self.result.acked_at if start <= t < end)

    def net_per_move(self) -> list[float]:
        """Each turn's CPU a move (seconds), its idle cost taken off; turns without moves left out."""
        rate = self.idle_rate()
        found = []
        for start, end, cpu in self.turns:
            moves = self.moves_in(start, end)
            if moves:
                found.append(max(0.0, cpu - rate * (end - start)) / moves)
        return found


def _cpu(server: SpawnedServer) -> float:
    return server.sample().cpu


def _wait_quiet(server: SpawnedServer) -> None:
    """Until the server spends less than QUIET_SHARE of a core (or QUIET_LONGEST passed)."""
    deadline = time.monotonic() + QUIET_LONGEST
    before = _cpu(server)
    while time.monotonic() < deadline:
        time.sleep(QUIET_POLL)
        now = _cpu(server)
        if now - before < QUIET_SHARE * QUIET_POLL:
            return
        before = now


def _take_turn(own: Contender, others: list[Contender], seconds: float) -> None:
    before = {c.name: c.server.sample() for c in (own, *others)}
    start = time.monotonic()
    own.fleet.go()
    time.sleep(seconds)
    own.fleet.pause()
    _wait_quiet(own.server)
    end = time.monotonic()
    after = own.server.sample()
    own.turns.append((start, end, after.cpu - before[own.name].cpu))
    own.own_system += after.system - before[own.name].system
    for other in others:
        other.idle_seconds += end - start
        other.idle_cpu += _cpu(other.server) - before[other.name].cpu


def take_turns(
    args: argparse.Namespace, phase: Phase, servers: dict[str, SpawnedServer], turn: float
) -> list[Contender]:
    """Every server loaded at once by its own fleet of ``args``' plan in ``phase``, the fleets
    taking turns of ``turn`` seconds until each had ``args.seconds`` of moves."""
    rounds = max(1, round(args.seconds / turn))
    with ExitStack() as stack:
        contenders = []
        for k, (name, server) in enumerate(servers.items()):
            plan = dataclasses.replace(phase_plan(args, phase, server.url), paused=True, name=f"b{k}")
            fleet = stack.enter_context(Fleet(split_plan(plan, args.workers)))
            contenders.append(Contender(name, server, fleet))
        for contender in contenders:
            contender.fleet.wait_ready(args.ramp_timeout)
        for k in range(rounds):
            shift = k % len(contenders)
            for own in contenders[shift:] + contenders[:shift]:
                _take_turn(own, [c for c in contenders if c is not own], turn)
        for contender in contenders:
            contender.result = contender.fleet.stop()
    return contenders


def _spread(ratios: list[float]) -> str:
    """median (quartiles, range) of the ratios."""
    if not ratios:
        return "-"
    ordered = sorted(ratios)
    quartiles = f"{percentile(ordered, 0.25):.2f}-{percentile(ordered, 0.75):.2f}"
    return f"{median(ordered):.3f}x ({quartiles}, {ordered[0]:.2f}-{ordered[-1]:.2f})"


def _against(contender: Contender, base: Contender) -> list[float]:
    """The contender's CPU a move over the base's, round by round (turn k of each)."""
    pairs = zip(contender.net_per_move(), base.net_per_move(), strict=False)
    return [mine / theirs for mine, theirs in pairs if theirs > 0]


def describe(phase: Phase, contenders: list[Contender], also: str | None = None) -> list[str]:
    """Per target: the median turn's net CPU a move, moves a second in its turns, move->ack
    p50/p99, and its CPU a move against the first target's, round by round; with ``also``,
    against that target's as well."""
    base = contenders[0]
    second = next((c for c in contenders if c.name == also and c is not base), None)
    heading = f"vs {base.name}" + ("" if second is None else f"; vs {second.name}")
    lines = [
        f"{phase.name}: turns, {len(base.turns)} each; CPU a move net of the server's idle cost"
        " (kernel: its share of the turns' CPU)",
        f"  {'target':<12} {'CPU/move':>10} {'kernel':>7} {'moves/s':>9} {'p50':>10} {'p99':>10}"
        f"   {heading}, round by round: median (quartiles, range)",
    ]
    for contender in contenders:
        net = contender.net_per_move()
        seconds = sum(end - start for start, end, _ in contender.turns)
        moves = sum(contender.moves_in(start, end) for start, end, _ in contender.turns)
        ack = sorted(x for start, end, _ in contender.turns for x in contender.result.ack.within(start, end))
        spread = _spread(_against(contender, base))
        if second is not None:
            spread += f"; {_spread(_against(contender, second))}"
        kernel = contender.own_system / max(1e-9, sum(cpu for _, _, cpu in contender.turns))
        lines.append(
            f"  {contender.name:<12} {median(net) * 1000:>7.3f} ms {kernel:>6.0%}"
            f" {moves / max(1e-9, seconds):>9.0f} {percentile(ack, 0.5) * 1000:>7.2f} ms"
            f" {percentile(ack, 0.99) * 1000:>7.2f} ms   {spread}"
        )
        errors = Counter(code for _, code in contender.result.errors)
        if errors:
            listed = ", ".join(f"{code} x{n}" for code, n in errors.most_common())
            lines.append(f"  {contender.name}: bot errors: {listed}")
    return lines
