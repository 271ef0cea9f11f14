"""Fan-out cost: the server's CPU per frame delivered to spectators, against a bare ``broadcast()``.

Run::

    python -m bench.fanout --spawn --rooms 10 --rate 100 --counts 1,10,100 --seconds 10
    python -m bench.fanout --spawn --rooms 100 --rate 1000 --counts 1,10 --seconds 5 --repeats 5

Bots (``bench.lib.bots``) race in ``--rooms`` two-racer rooms (spectator delay 0) at ``--rate``
moves a second in all. Windows with no spectator and windows with each of ``--counts``
spectators a room take turns: 0, then for each count its window (every room grows to that
many) and another 0 once they have all left, ``--repeats`` times for each count. In every
window the server's CPU (to the nanosecond, from schedstat) and the frames all spectators
received are counted. The cost of a delivery is the CPU above what the same moves cost with
no spectator (CPU per move of the two 0-spectator windows either side), divided by the frames
delivered. Taking the base from both sides cancels a drift of the machine's speed over the
run, which a base measured once, at the start, would put into the cost: at one spectator a
room, where the deliveries are few, that made runs of the same tree differ by 5x. The table
gives each count's median over its repeats, and their range as the noise.

The frames one spectator of each room received are recorded, and :mod:`bench.bare_broadcast`
plays them back with websockets ``broadcast()`` at the recorded times to the same numbers of
connections: the same bytes at the same rate, with nothing else. Its cost per delivery is
its CPU above its rate with no watcher (the windows either side), divided by the frames
delivered. The ratio column is server / bare.
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

from bench.lib.bot_fleet import Fleet
from bench.lib.bots import paced_pairs
from bench.lib.recording import Recording
from bench.lib.spawn import Target, add_target_arguments, exit_on_sigterm, parse_cpus, spawn_server, target
from bench.lib.spectators import Spectator
from bench.lib.stats import median, ratio


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


#: (room index, spectator number, keep its frames) -> a spectator of that room.
Join = Callable[[int, int, bool], Awaitable[Spectator]]


async def phases(
    server: Target, rooms: int, counts: list[int], join: Join, seconds: float, settle: float, repeats: int = 1
) -> tuple[list[Window], list[Spectator]]:
    """Windows with no spectator and with each count in turn (0, c1, 0, c1, 0, ..., c2, 0, ...,
    each count ``repeats`` times); returns
    them, and the first spectator of each room in the first count's window (its frames kept)."""
    windows: list[Window] = []
    kept: list[Spectator] = []
    gate = asyncio.Semaphore(20)
    number = 0

    async def measure(count: int, everyone: list[Spectator]) -> None:
        await asyncio.sleep(settle)
        frames0, cpu0, start = sum(s.frames for s in everyone), server.cpu(), time.monotonic()
        await asyncio.sleep(seconds)
        frames1, cpu1, end = sum(s.frames for s in everyone), server.cpu(), time.monotonic()
        windows.append(Window(count, start, end, cpu1 - cpu0, frames1 - frames0))
        print(f"... {count} a room: {frames1 - frames0} frames, CPU {cpu1 - cpu0:.3f} s", flush=True)

    async def add(room: int, n: int, keep: bool) -> Spectator:
        async with gate:
            return await join(room, n, keep)

    await measure(0, [])
    for count in (count for count in counts for _ in range(repeats)):
        joining = []
        for room in range(rooms):
            for k in range(count):
                joining.append(add(room, number, not kept and k == 0))
                number += 1
        everyone = list(await asyncio.gather(*joining))
        if not kept:
            kept = everyone[::count]
        await measure(count, everyone)
        await close_all(everyone)
        await measure(0, [])
    return windows, kept


async def close_all(watchers: list[Spectator]) -> None:
    await asyncio.gather(*(s.close() for s in watchers), return_exceptions=True)


async def measure_server(
    args: argparse.Namespace, server: Target, counts: list[int]
) -> tuple[list[Window], list[int], Recording]:
    """The server's windows, the moves acknowledged in each, and one spectator's frames per room."""
    plan = paced_pairs(server.url, args.rooms, args.rate, 1, parse_cpus(args.client_cpus), "fan")
    with Fleet([plan]) as fleet:
        fleet.wait_ready(60)
        codes = fleet.rooms

        async def join(room: int, n: int, keep: bool) -> Spectator:
            return await Spectator.join(server.url, f"fan{n}", codes[room], keep=keep)

        windows, kept = await phases(server, len(codes), counts, join, args.seconds, args.settle, args.repeats)
        result = fleet.stop()
    moves = [sum(1 for t in result.acked_at if w.start <= t < w.end) for w in windows]
    # The recording: what the first spectator of each room got during the first window with spectators.
    first = next(w for w in windows if w.per_room > 0)
    rooms = [
        [(t - first.start, frame) for t, frame in (one.kept or []) if first.start <= t < first.end] for one in kept
    ]
    return windows, moves, Recording(first.seconds, rooms)


async def measure_bare(
    bare: Target, rooms: int, counts: list[int], seconds: float, settle: float, repeats: int
) -> list[Window]:
    async def join(room: int, _n: int, _keep: bool) -> Spectator:
        return await Spectator.listen(f"{bare.url}/{room}")

    windows, _ = await phases(bare, rooms, counts, join, seconds, settle, repeats)
    return windows


def describe(args: argparse.Namespace, server: list[Window], moves: list[int], bare: list[Window]) -> str:
    """The table: each count's windows (odd positions) against the 0-spectator windows either
    side; the median over a count's repeats, and their range."""
    per_move = [w.cpu / m for w, m in zip(server, moves, strict=True) if w.per_room == 0 and m]
    idle = [w.cpu / w.seconds for w in bare if w.per_room == 0]
    lines = [
        f"fanout: {args.rooms} two-racer rooms racing at {args.rate:g} moves/s in all, {args.seconds:g} s windows, "
        f"each count {args.repeats} times",
        "server CPU per move with no spectator, window by window: "
        + ", ".join(f"{value * 1e6:.0f} us" for value in per_move)
        + "; bare idle: "
        + ", ".join(f"{value * 100:.1f}%" for value in idle)
        + " of a core",
        f"  {'spectators a room':>18} {'deliveries/s':>13} {'server us/delivery':>19} {'range':>15} "
        f"{'bare us/delivery':>17} {'range':>15} {'ratio':>7}",
    ]
    by_count: dict[int, list[tuple[float, float, float, float]]] = {}
    for k in range(1, len(server) - 1, 2):
        ours, theirs = server[k], bare[k]
        before, after = k - 1, k + 1
        base = (server[before].cpu + server[after].cpu) / max(1, moves[before] + moves[after])
        base_idle = (bare[before].cpu + bare[after].cpu) / (bare[before].seconds + bare[after].seconds)
        cost = (ours.cpu - moves[k] * base) / ours.deliveries if ours.deliveries else float("nan")
        floor = (theirs.cpu - base_idle * theirs.seconds) / theirs.deliveries if theirs.deliveries else float("nan")
        rates = (ours.deliveries / ours.seconds, theirs.deliveries / theirs.seconds)
        by_count.setdefault(ours.per_room, []).append((cost, floor, *rates))
    for count, rows in by_count.items():
        costs, floors = [row[0] for row in rows], [row[1] for row in rows]
        cost, floor = median(costs), median(floors)
        lines.append(
            f"  {count:>18} {median([row[2] for row in rows]):>13.0f} {cost * 1e6:>19.1f} "
            f"{_range(costs):>15} {floor * 1e6:>17.1f} {_range(floors):>15} {ratio(cost, floor):>7}   "
            f"(bare: {median([row[3] for row in rows]):.0f} deliveries/s)"
        )
    return "\n".join(lines)


def _range(values: list[float]) -> str:
    return f"{min(values) * 1e6:.1f}-{max(values) * 1e6:.1f}"


async def fanout(args: argparse.Namespace, server: Target) -> str:
    counts = args.counts
    windows, moves, recording = await measure_server(args, server, counts)
    with tempfile.TemporaryDirectory(prefix="fanout-") as scratch:
        path = Path(scratch) / "recording.msgpack"
        path.write_bytes(msgspec.msgpack.encode(recording))
        with spawn_server(
            module="bench.bare_broadcast", cpus=parse_cpus(args.server_cpus), extra=["--frames", str(path)]
        ) as spawned:
            bare = await measure_bare(
                Target(spawned.url, spawned.pid), len(recording.rooms), counts, args.seconds, args.settle, args.repeats
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
    parser.add_argument("--repeats", type=int, default=1, help="windows of each count, default 1")
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
