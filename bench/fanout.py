"""Fan-out cost: the server's CPU per frame delivered to spectators, against a bare ``broadcast()``.

Run::

    python -m bench.fanout --spawn --rooms 10 --rate 100 --counts 1,10,100 --seconds 10

Bots (``bench.bots``) race in ``--rooms`` two-racer rooms (spectator delay 0) at ``--rate``
moves a second in all. Spectators are added phase by phase until every room has 0 (twice:
the spread of those two windows shows the noise), then each of ``--counts`` spectators; in
every phase's window the server's CPU (to the nanosecond, from schedstat) and the frames all
spectators received are counted. The cost of a delivery is the CPU above what the same moves
cost with no spectator (CPU per move of the 0-spectator windows times the moves of the
window), divided by the frames delivered.

The frames one spectator of each room received are recorded, and :mod:`bench.bare_broadcast`
plays them back with websockets ``broadcast()`` at the recorded times to the same numbers of
connections: the same bytes at the same rate, with nothing else. Its cost per delivery is
its CPU above its 0-watcher rate, divided by the frames delivered. The ratio column is
server / bare.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from bench.bare_broadcast import Recording
from bench.bots import paced_pairs
from bench.fleet import Fleet
from bench.peers import Spectator
from bench.spawn import Target, add_target_arguments, exit_on_sigterm, parse_cpus, spawn_server, target
from bench.stats import ratio


@dataclass(frozen=True, slots=True)
class Window:
    per_room: int  # spectators per room
    start: float
    end: float
    cpu: float  # CPU seconds of the process measured
    deliveries: int  # frames received by all spectators

    @property
    def seconds(self) -> float:
        return self.end - self.start


Join = Callable[[int, int], Awaitable[Spectator]]  # (room index, spectator number) -> spectator


async def phases(
    server: Target, rooms: int, counts: list[int], join: Join, seconds: float, settle: float
) -> tuple[list[Window], list[list[Spectator]]]:
    """Grow every room's spectators to each count in turn; measure a window at each."""
    watchers: list[list[Spectator]] = [[] for _ in range(rooms)]
    windows = []
    gate = asyncio.Semaphore(20)
    number = 0

    async def add(room: int, n: int) -> None:
        async with gate:
            watchers[room].append(await join(room, n))

    for count in counts:
        missing = []
        for room in range(rooms):
            for _ in range(count - len(watchers[room])):
                missing.append(add(room, number))
                number += 1
        await asyncio.gather(*missing)
        await asyncio.sleep(settle)
        everyone = [s for room in watchers for s in room]
        frames0, cpu0, start = sum(s.frames for s in everyone), server.cpu(), time.monotonic()
        await asyncio.sleep(seconds)
        frames1, cpu1, end = sum(s.frames for s in everyone), server.cpu(), time.monotonic()
        windows.append(Window(count, start, end, cpu1 - cpu0, frames1 - frames0))
        print(f"... {count} a room: {frames1 - frames0} frames, CPU {cpu1 - cpu0:.3f} s", flush=True)
    return windows, watchers


async def close_all(watchers: list[list[Spectator]]) -> None:
    await asyncio.gather(*(s.close() for room in watchers for s in room), return_exceptions=True)


async def measure_server(
    args: argparse.Namespace, server: Target, counts: list[int]
) -> tuple[list[Window], list[int], Recording]:
    """The server's windows, the moves acknowledged in each, and one spectator's frames per room."""
    plan = paced_pairs(server.url, args.rooms, args.rate, 1, parse_cpus(args.client_cpus), "fan")
    with Fleet([plan]) as fleet:
        fleet.wait_ready(60)
        codes = fleet.rooms

        async def join(room: int, n: int) -> Spectator:
            return await Spectator.join(server.url, f"fan{n}", codes[room], keep=n < len(codes))

        windows, watchers = await phases(server, len(codes), counts, join, args.seconds, args.settle)
        result = fleet.stop()
    await close_all(watchers)
    moves = [sum(1 for t in result.acked_at if w.start <= t < w.end) for w in windows]
    # The recording: what the first spectator of each room got during the first window with spectators.
    first = next(w for w in windows if w.per_room > 0)
    rooms = [
        [(t - first.start, frame) for t, frame in (room[0].kept or []) if first.start <= t < first.end]
        for room in watchers
        if room
    ]
    return windows, moves, Recording(first.seconds, rooms)


async def measure_bare(bare: Target, rooms: int, counts: list[int], seconds: float, settle: float) -> list[Window]:
    async def join(room: int, _n: int) -> Spectator:
        return await Spectator.listen(f"{bare.url}/{room}")

    windows, watchers = await phases(bare, rooms, counts, join, seconds, settle)
    await close_all(watchers)
    return windows


def describe(args: argparse.Namespace, server: list[Window], moves: list[int], bare: list[Window]) -> str:
    base_windows = [k for k, w in enumerate(server) if w.per_room == 0]
    per_move = [server[k].cpu / moves[k] for k in base_windows if moves[k]]
    base = sum(server[k].cpu for k in base_windows) / max(1, sum(moves[k] for k in base_windows))
    spread = max(per_move) - min(per_move) if per_move else float("nan")
    bare_idle = sum(bare[k].cpu for k in base_windows) / sum(bare[k].seconds for k in base_windows)
    lines = [
        f"fanout: {args.rooms} two-racer rooms racing at {args.rate:g} moves/s in all, {args.seconds:g} s windows",
        "server CPU per move with no spectator: "
        + ", ".join(f"{value * 1e6:.0f} us" for value in per_move)
        + f" (two windows: their spread is the noise the figures below carry); bare idle "
        f"{bare_idle * 100:.1f}% of a core",
        f"  {'spectators a room':>18} {'deliveries/s':>13} {'server us/delivery':>19} {'noise +-':>9} "
        f"{'bare us/delivery':>17} {'ratio':>7}",
    ]
    for k, (ours, theirs) in enumerate(zip(server, bare, strict=True)):
        if ours.per_room == 0:
            continue
        cost = (ours.cpu - moves[k] * base) / ours.deliveries if ours.deliveries else float("nan")
        floor = (theirs.cpu - bare_idle * theirs.seconds) / theirs.deliveries if theirs.deliveries else float("nan")
        # The base's spread, spread over this window's deliveries: how far off the cost may be.
        noise = spread * moves[k] / ours.deliveries if ours.deliveries else float("nan")
        lines.append(
            f"  {ours.per_room:>18} {ours.deliveries / ours.seconds:>13.0f} {cost * 1e6:>19.1f} {noise * 1e6:>9.1f} "
            f"{floor * 1e6:>17.1f} {ratio(cost, floor):>7}   (bare: {theirs.deliveries / theirs.seconds:.0f} "
            "deliveries/s)"
        )
    return "\n".join(lines)


async def fanout(args: argparse.Namespace, server: Target) -> str:
    counts = [0, 0, *args.counts]
    windows, moves, recording = await measure_server(args, server, counts)
    with tempfile.TemporaryDirectory(prefix="fanout-") as scratch:
        path = Path(scratch) / "recording.msgpack"
        path.write_bytes(msgspec.msgpack.encode(recording))
        with spawn_server(
            module="bench.bare_broadcast", cpus=parse_cpus(args.server_cpus), extra=["--frames", str(path)]
        ) as spawned:
            bare = await measure_bare(
                Target(spawned.url, spawned.pid), len(recording.rooms), counts, args.seconds, args.settle
            )
    return describe(args, windows, moves, bare)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.fanout", description=__doc__.splitlines()[0])
    add_target_arguments(parser, "pin the server (and the bare broadcaster), e.g. 0", "pin the bots, e.g. 1")
    parser.add_argument("--rooms", type=int, default=10, help="two-racer rooms, default 10")
    parser.add_argument("--rate", type=float, default=100.0, help="moves a second in all, default 100")
    parser.add_argument(
        "--counts", type=lambda text: [int(n) for n in text.split(",")], default=[1, 10, 100],
        help="spectators a room, in increasing order; default 1,10,100",
    )  # fmt: skip
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each window")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds after spectators join before a window")
    args = parser.parse_args(argv)
    if args.server_pid is None and not args.spawn:
        parser.error("the server's pid is needed to measure its CPU: --spawn or --server-pid")
    return args


def main(argv: list[str] | None = None) -> None:
    exit_on_sigterm()
    args = parse_args(argv)
    with target(args) as server:
        print(asyncio.run(fanout(args, server)))


if __name__ == "__main__":
    main()
