"""Load generator: bots race each other through real websocket clients.

Run::

    python -m bench.load --racers 1000 --rooms 500 --seconds 30 --spawn
    python -m bench.load --racers 1000 --rooms 500 --seconds 30 --spawn --server-cpus 0 --client-cpus 1
    python -m bench.load --url ws://127.0.0.1:8765 --server-pid 1234 --racers 200 --rooms 100
    python -m bench.load --compare --seconds 20      # the relay and the server, side by side

The bots are described in :mod:`bench.lib.bots`: each room gets ``racers // rooms`` of them,
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
:mod:`bench.lib.compare`.
"""

from __future__ import annotations

import argparse
import os
from collections import Counter

from bench.lib.compare import run_compare
from bench.lib.load_run import LoadRun, measure, parse_args, plan_of
from bench.lib.spawn import (
    SpawnedServer,
    check_loopback,
    describe_memory,
    exit_on_sigterm,
    parse_cpus,
    raise_nofile_limit,
    spawn_server,
)
from bench.lib.stats import latency_line, ms, percentile


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
        print(run_compare(args))
    else:
        print(run(args))


if __name__ == "__main__":
    main()
