"""One hostile address against another's openings, through the shipped balancer (issue 29).

    python -m bench.hostile [--seconds 20] [--baseline 10] [--settle 11] [--connections 600]
                            [--attack all|slow-heads|idle|duplicate-headers|lobby|peer-port|together]
                            [--log-level INFO] [--logs DIR]

The deployment's shape on one machine (bench/lib/deployment.py, as tests/nodes/deployment.py runs
it): a private embedded Redis, three ``python -m server`` nodes (``--trusted-proxies`` the
balancer's address, no solver or hint workers, each on a fixed peer port, each logging at
``--log-level``, INFO by default as in production, to a file of its own) and the shipped
HAProxy config (bench/lib/balancer.py) in front of them, its access log in a file too.

A legitimate client at 127.0.8.1 opens a fresh websocket through the balancer's TLS port every
100 ms, says hello as a new guest and times connect start -> welcome (an opening that fails or
takes over 10 s counts as failed). The nodes get ``IDENTITIES_PER_ADDRESS`` high, as every bench
that starts many guests does. The first phase (``--baseline`` seconds) has no attack; then each
attack (bench/lib/hostile_attacks.py) runs for ``--seconds`` from 127.0.9.1, in a process of its own
(so its loops do not delay the legitimate client's), ``--settle`` seconds apart (HAProxy counts
an address's connections over 10 s: an attack right after another would start already refused).
The attacks are listed in bench/lib/hostile_attacks.py (``--connections`` sizes the slow heads and
idle connections); ``all`` (the default) runs each in turn, then ``together``, all at once.

Printed, a phase a row: openings tried, succeeded, failed, p50/p99/max of the successful ones
(ms), the nodes' log lines a second (all three summed, counted in their files from the phase's
start to the end of its last opening and of the attack), HAProxy's log lines a second (an access
log: a line a request, reported apart), the CPU of the nodes with Redis, of HAProxy and of the
attacker (share of one core). Then each attack's tally (connections, answers, refusals) and
the lines the nodes logged most in each phase (digits folded to ``#``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import os
import re
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from websockets.asyncio.client import ClientConnection
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from bench.lib.balancer import Missing
from bench.lib.deployment import deployed
from bench.lib.hostile_attacks import (
    ATTACKS,
    HOSTILE,
    OPENING_TIMEOUT,
    Front,
    exchange,
    open_websocket,
    refusal,
    run_attacker,
)
from bench.lib.node_costs import cpu_of
from bench.lib.spawn import exit_on_sigterm, raise_nofile_limit
from bench.lib.stats import percentile
from protocol.messages import PROTOCOL_VERSION, Error, Hello, Welcome

#: The legitimate client's address (Linux routes all of 127/8 to loopback).
LEGITIMATE = "127.0.8.1"
#: Seconds between the legitimate client's openings.
OPENING_EVERY = 0.1
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+\s*")


# -- The legitimate client ---------------------------------------------------------------------


@dataclass
class Openings:
    """The legitimate client's openings of one phase."""

    latencies: list[float] = field(default_factory=list)
    failures: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def tried(self) -> int:
        return len(self.latencies) + sum(self.failures.values())


async def open_once(front: Front, n: int, into: Openings) -> None:
    """Connect through the balancer's TLS port, say hello as a new guest, time it to the welcome."""
    started = time.perf_counter()
    websocket: ClientConnection | None = None
    try:
        async with asyncio.timeout(OPENING_TIMEOUT):
            websocket = await open_websocket(front, True, LEGITIMATE)
            reply = await exchange(websocket, Hello(id=1, protocol=PROTOCOL_VERSION, name=f"visitor{n}"))
        if isinstance(reply, Welcome):
            into.latencies.append(time.perf_counter() - started)
        else:
            into.failures[f"hello: {reply.code if isinstance(reply, Error) else type(reply).__name__}"] += 1
    except TimeoutError:
        into.failures[f"over {OPENING_TIMEOUT:g} s"] += 1
    except ConnectionClosed as closed:
        into.failures[f"closed {closed.rcvd.code if closed.rcvd else 'without a close frame'}"] += 1
    except (OSError, InvalidHandshake) as error:
        into.failures[refusal(error)] += 1
    finally:
        if websocket is not None:
            with contextlib.suppress(Exception):
                await websocket.close()


async def open_every(front: Front, seconds: float, first: int) -> Openings:
    """An opening every :data:`OPENING_EVERY` seconds for ``seconds``, each on its own (a slow one
    delays no other); returns once the last has ended."""
    openings = Openings()
    tasks = []
    started = time.monotonic()
    n = 0
    while (due := started + n * OPENING_EVERY) < started + seconds:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        tasks.append(asyncio.create_task(open_once(front, first + n, openings)))
        n += 1
    await asyncio.gather(*tasks)
    return openings


class LogWatch:
    """New lines of some log files since the last look."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = list(paths)
        self.offsets = [0] * len(self.paths)

    def take(self) -> list[str]:
        lines: list[str] = []
        for k, path in enumerate(self.paths):
            with path.open("rb") as log:
                log.seek(self.offsets[k])
                data = log.read()
            whole = data.rpartition(b"\n")[0]  # a line still being written waits for the next look
            if whole:
                self.offsets[k] += len(whole) + 1
                lines += whole.decode(errors="replace").split("\n")
        return lines


# -- Phases and the report ---------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    openings: Openings
    seconds: float
    node_lines: list[str]
    haproxy_lines: int
    service_cpu: float
    haproxy_cpu: float
    attacker_cpu: float | None = None
    tally: dict[str, int] | None = None


async def run_phase(
    name: str,
    attack: str | None,
    seconds: float,
    args: argparse.Namespace,
    front: Front,
    watches: tuple[LogWatch, LogWatch],
    pids: tuple[list[int], int],
    first: int,
) -> Phase:
    node_watch, haproxy_watch = watches
    service_pids, haproxy_pid = pids
    node_watch.take()
    haproxy_watch.take()
    service_before, haproxy_before = cpu_of(service_pids), cpu_of([haproxy_pid])
    started = time.monotonic()
    legitimate = asyncio.ensure_future(open_every(front, seconds, first))
    if attack is None:
        tally, attacker_cpu = None, None
    else:
        tally, attacker_cpu = await run_attacker(attack, front, seconds, args.connections)
    openings = await legitimate
    elapsed = time.monotonic() - started
    return Phase(
        name, openings, elapsed, node_watch.take(), len(haproxy_watch.take()),
        (cpu_of(service_pids) - service_before) / elapsed, (cpu_of([haproxy_pid]) - haproxy_before) / elapsed,
        None if attacker_cpu is None else attacker_cpu / elapsed, tally,
    )  # fmt: skip


def share(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value * 100:.0f} %"


def report(phases: list[Phase]) -> str:
    header = (
        f"{'phase':<18} {'tried':>5} {'ok':>5} {'failed':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
        f" {'node lines/s':>12} {'haproxy lines/s':>15} {'nodes+Redis CPU':>15} {'haproxy CPU':>11}"
        f" {'attacker CPU':>12}"
    )
    lines = [header]
    for phase in phases:
        values = sorted(phase.openings.latencies)
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        top = values[-1] if values else float("nan")
        lines.append(
            f"{phase.name:<18} {phase.openings.tried:>5} {len(values):>5} {sum(phase.openings.failures.values()):>6}"
            f" {p50 * 1e3:>8.1f} {p99 * 1e3:>8.1f} {top * 1e3:>8.1f}"
            f" {len(phase.node_lines) / phase.seconds:>12.2f} {phase.haproxy_lines / phase.seconds:>15.2f}"
            f" {share(phase.service_cpu):>15} {share(phase.haproxy_cpu):>11} {share(phase.attacker_cpu):>12}"
        )
    for phase in phases:
        lines.append(f"-- {phase.name} ({phase.seconds:.1f} s)")
        if phase.openings.failures:
            failures = ", ".join(f"{what} x{n}" for what, n in phase.openings.failures.most_common())
            lines.append(f"  legitimate openings failed: {failures}")
        if phase.tally is not None:
            lines.append("  attack: " + "; ".join(f"{what} {n}" for what, n in sorted(phase.tally.items())))
        if phase.node_lines:
            lines.append(f"  node log lines: {len(phase.node_lines)}, most repeated:")
            lines += [f"    {n:>5} x {line}" for line, n in most_repeated(phase.node_lines)]
    return "\n".join(lines)


def most_repeated(lines: list[str], count: int = 6) -> list[tuple[str, int]]:
    """The commonest lines with their timestamps cut and digits folded to ``#`` (an example of each)."""
    examples: dict[str, str] = {}
    counts: collections.Counter[str] = collections.Counter()
    for line in lines:
        text = _TIMESTAMP.sub("", line)
        key = re.sub(r"\d+", "#", text)
        counts[key] += 1
        examples.setdefault(key, text)
    return [(examples[key][:300], n) for key, n in counts.most_common(count)]


async def main_async(args: argparse.Namespace) -> str:
    attacks = [*ATTACKS, "together"] if args.attack == "all" else [args.attack]
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as scratch:
        logs = args.logs or Path(scratch)
        logs.mkdir(parents=True, exist_ok=True)
        async with deployed(Path(scratch), logs, args.log_level, node_ttl=None) as deployment:
            front = Front(deployment.plain_port, deployment.tls_port, deployment.certificate, deployment.peers)
            await asyncio.sleep(2.0)  # every node's health checks passed twice (rise 2, every 0.5 s)
            watches = (LogWatch([node.log for node in deployment.nodes]), LogWatch([deployment.balancer_log]))
            pids = (deployment.service_pids(), deployment.balancer.pid)
            phases = [await run_phase("baseline", None, args.baseline, args, front, watches, pids, 0)]
            print(f"baseline: {len(phases[0].openings.latencies)} openings", file=sys.stderr)
            for k, attack in enumerate(attacks, 1):
                await asyncio.sleep(args.settle)
                phases.append(await run_phase(attack, attack, args.seconds, args, front, watches, pids, k * 100_000))
                print(f"{attack}: {len(phases[-1].openings.latencies)} openings", file=sys.stderr)
    title = (
        f"bench.hostile: attacks from {HOSTILE}, a TLS opening every {OPENING_EVERY * 1e3:.0f} ms from {LEGITIMATE},"
        f" through HAProxy to 3 nodes (log level {args.log_level}); baseline {args.baseline:g} s, each attack"
        f" {args.seconds:g} s, {args.settle:g} s apart; {os.cpu_count()} cores"
    )
    return title + "\n" + report(phases)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of each attack (default 20)")
    parser.add_argument("--baseline", type=float, default=10.0, help="seconds with no attack first (default 10)")
    parser.add_argument(
        "--settle", type=float, default=11.0, help="seconds between phases, no attack, not measured (default 11)"
    )
    parser.add_argument(
        "--attack", choices=["all", *ATTACKS, "together"], default="all",
        help="one attack, or all in turn and then together (default)",
    )  # fmt: skip
    parser.add_argument(
        "--connections", type=int, default=600,
        help="bare connections the idle attack tries to hold (slow heads: half as many; default 600)",
    )  # fmt: skip
    parser.add_argument("--log-level", default="INFO", help="the nodes' log level (default INFO, production's)")
    parser.add_argument("--logs", type=Path, help="keep the nodes' and HAProxy's logs in this folder")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    raise_nofile_limit()
    try:
        print(asyncio.run(main_async(args)))
    except Missing as missing:
        raise SystemExit(f"bench.hostile needs the balancer: {missing}") from None


if __name__ == "__main__":
    main()
