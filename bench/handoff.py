"""What a racer on another node sees when its room's owner goes away: its longest stall.

    python -m bench.handoff [--rooms 8] [--rate 4] [--runs 1] [--before 2] [--tree DIR] [--logs DIR]

Three real ``python -m server`` nodes (lease TTL 2 s) on a private embedded Redis. ``--rooms``
rooms run on node 0, each with one racer on node 0 and one on node 1 or 2 (in turn). The
racers on nodes 1 and 2 connect without automatic reconnection, so a dropped connection
shows as one, and each plays ``--rate`` moves a second, worked out from its own board. After
``--before`` seconds node 0 stops: by SIGTERM (a planned drain: its rooms are handed over) in
one run, by SIGKILL (a failover) in the next. For each of those racers: its stall, the time
from its last ack before the stop to its first ack after it (none within 10 s counts as
10 s), and whether its connection survived. Printed, per kind of stop: the median and the
largest stall over the racers, and how many were disconnected (racers whose random moves
left them without a legal move are left out, and counted); ``--runs N`` repeats both.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import random
import signal
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from bench.lib.bots import local_legal_moves
from bench.lib.node_fleet import ROOT, caught_up, close_all, open_room, play, start_nodes, stop_nodes
from client.lib.connection import RaceClient, ServerError
from protocol.messages import Ack
from server.games import variant_class
from server.storage.embedded import EmbeddedRedis

#: Seconds of moves before the stop (``--before``), and the longest wait for an ack after it.
BEFORE, AFTER = 2.0, 10.0


@dataclass
class Stop:
    at: float | None = None  # when the owner was signalled (monotonic)


@dataclass
class Racer:
    client: RaceClient
    code: str
    acks: list[float] = field(default_factory=list)  # monotonic times of its acks
    dropped: bool = False
    stuck: bool = False  # no legal move left
    stall: float = 0.0  # from its last ack before the stop to its first after it


async def race(racer: Racer, rate: float, until: float, stop: Stop) -> None:
    """Play ``rate`` moves a second until ``until`` or the first ack after the stop, asking
    again while the room moves."""
    game, rng, version = variant_class("antares"), random.Random(racer.code), 0
    while time.monotonic() < until and not (stop.at is not None and racer.acks and racer.acks[-1] > stop.at):
        try:
            mirror = await racer.client.wait_room(
                racer.code, functools.partial(caught_up, version=version, seat=1), timeout=until - time.monotonic()
            )
            board = mirror.board(1)
            moves = [] if board is None else local_legal_moves(game, board)
            if not moves:
                racer.stuck = True
                return
            reply = await racer.client.request(functools.partial(play, room=racer.code, move=rng.choice(moves)))
        except (ServerError, TimeoutError):
            await asyncio.sleep(0.05)
            continue
        except ConnectionError:
            racer.dropped = True
            return
        if isinstance(reply, Ack) and reply.version is not None:
            racer.acks.append(time.monotonic())
            version = reply.version
        await asyncio.sleep(1.0 / rate)


def stall_of(acks: list[float], stopped: float) -> float:
    """From the last ack before ``stopped`` to the first after it (the end of the run if none)."""
    before = max((t for t in acks if t <= stopped), default=stopped)
    after = min((t for t in acks if t > stopped), default=stopped + AFTER)
    return after - before


async def one_run(how: signal.Signals, args: argparse.Namespace, redis_url: str, logs: Path) -> list[Racer]:
    nodes = await start_nodes(3, redis_url, logs, tree=args.tree)
    clients: list[RaceClient] = []
    try:
        racers = []
        for k in range(args.rooms):
            owner = await RaceClient.connect(nodes[0].url, f"owner{k}", reconnect=True)
            guest = await RaceClient.connect(nodes[1 + k % 2].url, f"guest{k}", reconnect=False)
            clients += [owner, guest]
            racers.append(Racer(guest, await open_room(owner, guest)))
        for racer in racers:
            await racer.client.wait_room(racer.code, functools.partial(caught_up, version=0, seat=1))
        start = time.monotonic()
        stop = Stop()
        running = [asyncio.ensure_future(race(r, args.rate, start + args.before + AFTER, stop)) for r in racers]
        await asyncio.sleep(args.before)
        stopped = stop.at = time.monotonic()
        nodes[0].process.send_signal(how)
        await asyncio.gather(*running)
        for racer in racers:
            racer.stall = stall_of(racer.acks, stopped)
        return racers
    finally:
        await close_all(clients)
        stop_nodes(nodes)


def report(how: signal.Signals, runs: list[list[Racer]]) -> str:
    measured = [r for run in runs for r in run if not r.stuck]
    stalls = [r.stall for r in measured if not r.dropped]
    dropped = sum(r.dropped for r in measured)
    total, stuck = len(measured), sum(len(run) for run in runs) - len(measured)
    kind = "drain (SIGTERM)" if how is signal.SIGTERM else "failover (SIGKILL)"
    if not stalls:
        return f"{kind}: every racer disconnected ({dropped} of {total}; {stuck} out of moves)"
    return (
        f"{kind}: stall per racer median {statistics.median(stalls) * 1000:.0f} ms,"
        f" max {max(stalls) * 1000:.0f} ms; disconnected {dropped} of {total} ({stuck} more out of moves)"
    )


async def main_async(args: argparse.Namespace) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        logs = args.logs or Path(scratch)
        redis = EmbeddedRedis(logs / "redis")
        url = await redis.start()
        try:
            results: dict[signal.Signals, list[list[Racer]]] = {signal.SIGTERM: [], signal.SIGKILL: []}
            for _ in range(args.runs):
                for how in results:
                    results[how].append(await one_run(how, args, url, logs))
        finally:
            await redis.stop()
    return "\n".join(report(how, runs) for how, runs in results.items())


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.handoff", description=__doc__.splitlines()[0])
    parser.add_argument("--rooms", type=int, default=8, help="rooms on the node that stops")
    parser.add_argument("--rate", type=float, default=4.0, help="moves a second of each measured racer")
    parser.add_argument("--runs", type=int, default=1, help="runs of each kind of stop")
    parser.add_argument(
        "--before", type=float, default=BEFORE, help=f"seconds of moves before the stop (default {BEFORE:g})"
    )
    parser.add_argument("--tree", type=Path, default=ROOT, help="the checkout whose server runs (an older one: before)")
    parser.add_argument("--logs", type=Path, help="keep the nodes' logs in this folder (BENCH_NODE_LOG=INFO for more)")
    print(asyncio.run(main_async(parser.parse_args(argv))))


if __name__ == "__main__":
    main()
