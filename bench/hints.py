"""What hints cost other players: another room's move->ack latency while clients ask for hints.

    python -m bench.hints [--seconds 10] [--askers 4] [--rate 14] [--tree before=PATH]

One server (this checkout's; with ``--tree``, another checkout's too, measured in turn in the
same run). A measured racer plays a move and takes it back, over and over, in an Antares
practice room, and the time from each request to its ``ack`` is kept. First quiet, then
while ``--askers`` clients, each racing its own Antares practice room, step to a position
one hinted move away, ask for hints there and step back, ``--rate`` times a second (under
the request rate limit). Antares shows every card, so each
hint may search for a winning line: on the event loop where the server searches there, in
worker processes where it searches there (``--hint-workers``, on by default).

Printed per server: the measured racer's move->ack p50/p99/max, quiet and under the hints,
the p99 ratio, and the hints answered a second with the share that named a winning move.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from bench.lib.spawn import spawn_server
from bench.lib.stats import ms, percentile
from client.lib.connection import RaceClient
from protocol.messages import AskHint, CreateRoom, Hints, Joined, PlayMove, Ready, RoomOptions, Undo

#: An Antares practice room on a fixed deal, so every run searches the same positions.
PRACTICE = RoomOptions(max_racers=1, deal="24")


@dataclass
class Asked:
    hints: int = 0
    winning: int = 0


@dataclass
class Window:
    latencies: list[float] = field(default_factory=list)


async def practice(url: str, name: str) -> tuple[RaceClient, str]:
    client = await RaceClient.connect(url, name, reconnect=False)
    joined = await client.request(partial(CreateRoom, variant="antares", options=PRACTICE))
    assert isinstance(joined, Joined)
    await client.request(partial(Ready, room=joined.room))
    await client.wait_room(joined.room, lambda m: m.view().state == "racing", timeout=30)
    return client, joined.room


async def measure(client: RaceClient, code: str, move: str, seconds: float) -> Window:
    """Move and undo for ``seconds``: every request's time to its ack."""
    window = Window()
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        for build in (partial(PlayMove, room=code, move=move), partial(Undo, room=code)):
            sent = time.perf_counter()
            await client.request(build)
            window.latencies.append(time.perf_counter() - sent)
        await asyncio.sleep(0.05)  # 40 requests a second: under the rate limit
    return window


async def ask_hints(
    client: RaceClient, code: str, rate: float, stop: asyncio.Event, asked: Asked, chooser: random.Random
) -> None:
    """Step to a position one hinted move away (a different one each time, mostly off the
    winning line in memory), ask for hints there, and step back."""
    start = await client.request(partial(AskHint, room=code), timeout=30)
    assert isinstance(start, Hints)
    moves = [item.move for item in start.hints]
    while not stop.is_set():
        await client.request(partial(PlayMove, room=code, move=chooser.choice(moves)))
        reply = await client.request(partial(AskHint, room=code), timeout=30)
        if isinstance(reply, Hints):
            asked.hints += 1
            asked.winning += bool(reply.hints) and reply.hints[0].reason == "it is on a winning line"
        await client.request(partial(Undo, room=code))
        await asyncio.sleep(1 / rate)


def describe(window: Window) -> str:
    values = sorted(window.latencies)
    p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
    return f"p50 {ms(p50)}  p99 {ms(p99)}  max {ms(values[-1])}  (n={len(values)})"


async def run(url: str, label: str, args: argparse.Namespace) -> None:
    measured, code = await practice(url, "Measured")
    # A move of the deal's start that can always be taken back.
    hints = await measured.request(partial(AskHint, room=code))
    assert isinstance(hints, Hints)
    move = hints.hints[-1].move
    quiet = await measure(measured, code, move, args.seconds)
    askers = [await practice(url, f"Asker {n}") for n in range(args.askers)]
    stop, asked = asyncio.Event(), Asked()
    tasks = [
        asyncio.create_task(ask_hints(c, room, args.rate, stop, asked, random.Random(n)))
        for n, (c, room) in enumerate(askers)
    ]
    started = time.monotonic()
    loaded = await measure(measured, code, move, args.seconds)
    stop.set()
    await asyncio.gather(*tasks)
    elapsed = time.monotonic() - started
    for client in [measured, *(c for c, _ in askers)]:
        await client.close()
    ratio = percentile(sorted(loaded.latencies), 0.99) / max(1e-9, percentile(sorted(quiet.latencies), 0.99))
    print(f"{label}: another room's move->ack, quiet:      {describe(quiet)}")
    print(f"{label}: another room's move->ack, with hints: {describe(loaded)}  (p99 {ratio:.2f}x quiet)")
    print(
        f"{label}: {args.askers} askers, {asked.hints / elapsed:.1f} hints/s answered,"
        f" {asked.winning / max(1, asked.hints):.0%} naming a winning move"
    )


async def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="seconds of each window")
    parser.add_argument("--askers", type=int, default=4, help="clients asking for hints")
    parser.add_argument("--rate", type=float, default=14.0, help="hints a second each asker asks")
    parser.add_argument("--tree", action="append", default=[], metavar="NAME=PATH", help="another checkout too")
    args = parser.parse_args(argv)
    trees = [("this", None)] + [(name, Path(path)) for name, _, path in (t.partition("=") for t in args.tree)]
    for label, tree in trees:
        server = spawn_server(cwd=tree)
        try:
            await run(server.url, label, args)
        finally:
            server.stop()


if __name__ == "__main__":
    asyncio.run(main())
