"""A rolling restart of every node behind the balancer while races run: no race aborted, no
acknowledged move lost, and the longest stall a racer sees (issue 29).

    python -m bench.rolling [--races 200] [--rate 1] [--drain 3] [--before 30] [--after 5] [--logs DIR]

A private embedded Redis on TCP, three real ``python -m server`` nodes on it (lease TTL 2 s,
``--trusted-proxies`` the balancer, no solver or hint workers, ``--drain``, each on a loopback
address of its own with a fixed port and peer port there) and the shipped HAProxy config in
front of them, its server lines naming those addresses (bench/lib/deployment.py).
``--races`` races of two racers each, every racer a :class:`RaceClient` with automatic
reconnection, as a real client has it, connected through the balancer's plain port from a
loopback address of its own (a real player's address: the balancer and the nodes limit
connections per address). Each plays ``--rate`` legal moves a second, worked out from its own
board (looking a few moves ahead, so that it does not play itself into a dead end), and
records the time, room version and move of every ack (bench/lib/rolling_racers.py).

After ``--before`` seconds of play, each node in turn gets SIGTERM (it turns not ready, drains
``--drain`` s, closes its clients, which reconnect through the balancer, and hands its rooms
over), and once it has exited a replacement starts on the same address and ports (the
balancer's server lines name them); the next node goes once the replacement answers /readyz
and the balancer has marked it UP. After ``--after`` more seconds of play, the racers stop, and every
room is read back from Redis (bench/lib/rolling_check.py): its state (a race still racing or
finished, no seat resigned, or else it was aborted) and its move logs, which must hold every
acknowledged move of each seat in order (an ack's version also must not be acknowledged
twice, nor be past the stored version).

Printed (bench/lib/rolling_report.py): for the restart window and for a window as long just
before it (the baseline), the longest gap between two acks of a racer (p50, p99 and max over
the racers; racers out of legal moves or finished are left out, and counted), and how many
racers' connections dropped, and move->ack; then races, racers, acked moves, moves lost,
races aborted, the total restart time, the CPU used, the error replies to moves, the time
from a dropped connection to the racer's next ack, the restart's timings node by node (drain
→ DOWN: from SIGTERM to the balancer's log saying the node is DOWN, its health check having
seen /readyz turn 503; and the longest of the three) and the nodes' warnings (alike ones
counted together). Lost moves and aborted races are listed
with the nodes' log lines about their rooms (the nodes log at BENCH_NODE_LOG, INFO by default
here; ``--logs`` keeps the logs, the balancer's included).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import tempfile
import time
from pathlib import Path

from bench.lib.deployment import Deployment, deployed
from bench.lib.node_fleet import close_all
from bench.lib.rolling_check import check_rooms
from bench.lib.rolling_racers import Play, open_races, race
from bench.lib.rolling_report import Load, Window, report
from bench.lib.sources import from_own_addresses
from bench.lib.spawn import exit_on_sigterm, machine_cpu, raise_nofile_limit
from client.lib.connection import RaceClient

#: Seconds of play before the baseline window may start (countdowns over, first moves made).
SETTLE = 2.0


async def run(args: argparse.Namespace, logs: Path) -> str:
    level = os.environ.get("BENCH_NODE_LOG", "INFO")
    clients: list[RaceClient] = []
    async with deployed(logs, logs, level, flags=["--drain", f"{args.drain:g}"]) as deployment:
        with from_own_addresses():
            try:
                return await measure(args, deployment, clients)
            finally:
                await close_all(clients)  # before the balancer goes: no reconnection attempts


async def measure(args: argparse.Namespace, deployment: Deployment, clients: list[RaceClient]) -> str:
    """The races, the rolling restart during them, the check, the report."""
    refused: list[str] = []
    races = await open_races(deployment.plain_url, args.races, clients, refused)
    racers = [racer for pair in races for racer in pair]
    game = Play()
    started, load = time.monotonic(), os.getloadavg()[0]
    cpu_before, (busy_before, idle_before) = time.process_time(), machine_cpu()
    playing = [asyncio.ensure_future(race(racer, args.rate, game)) for racer in racers]
    await asyncio.sleep(args.before)
    restarts = [await deployment.restart(index) for index in range(len(deployment.nodes))]
    await asyncio.sleep(args.after)
    game.over = True
    await asyncio.gather(*playing)
    last = time.monotonic()
    busy, idle = machine_cpu()
    cpu = Load(
        (time.process_time() - cpu_before) / (last - started),
        (busy - busy_before) / max(1e-9, busy - busy_before + idle - idle_before),
        load,
    )
    checked = await check_rooms(deployment.redis_url, races)
    begun, ended = restarts[0].signalled, restarts[-1].up
    windows = [
        Window("before (baseline)", max(started + SETTLE, begun - (ended - begun)), begun),
        Window("rolling restart", begun, ended),
    ]
    codes = [pair[0].code for pair in races]
    return report(args, racers, checked, windows, restarts, last, deployment.logs, codes, cpu, refused)


async def main_async(args: argparse.Namespace) -> str:
    raise_nofile_limit()  # 2 descriptors a racer here, and HAProxy sizes its limit from ours
    if args.logs is not None:
        args.logs.mkdir(parents=True, exist_ok=True)
        return await run(args, args.logs)
    with tempfile.TemporaryDirectory(prefix="bench-rolling-") as scratch:
        return await run(args, Path(scratch))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.rolling", description=__doc__.split("\n\n")[0])
    parser.add_argument("--races", type=int, default=200, help="races of two racers (default 200)")
    parser.add_argument("--rate", type=float, default=1.0, help="moves a second of each racer (default 1)")
    parser.add_argument("--drain", type=float, default=3.0, help="the nodes' --drain, seconds (default 3)")
    parser.add_argument("--before", type=float, default=30.0, help="seconds of play before the restart (default 30)")
    parser.add_argument("--after", type=float, default=5.0, help="seconds of play after it (default 5)")
    parser.add_argument("--logs", type=Path, help="keep the nodes' and the balancer's logs in this folder")
    args = parser.parse_args(argv)
    if not 1 <= args.races <= 25_000:
        parser.error("--races: 1 to 25000")
    exit_on_sigterm()
    print(asyncio.run(main_async(args)))


if __name__ == "__main__":
    main()
