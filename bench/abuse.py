"""Issue 9's abuse measurements, against a real server process over real websockets.

Run (each subcommand takes ``--spawn`` or ``--url``/``--server-pid``, as ``bench.load``)::

    python -m bench.abuse stalled --spawn --spectators 100 --seconds 60
    python -m bench.abuse joins --spawn --spectators 500
    python -m bench.abuse burst --spawn --connections 2000 --bursts 3
    python -m bench.abuse replay-flood --spawn --entries 3000 --rate 13 --seconds 20

- ``stalled``: server RSS, sampled every second, while ``--spectators`` spectators that
  never read (a tiny receive buffer, no recv() after joining) each watch every room of the
  probe (below: several rooms, so each connection is sent enough to overflow the kernel's
  socket buffers within the run); then
  how the server ended their connections (close code, reset, or still open).
- ``joins``: ``--spectators`` spectators join one waiting room; every frame all of them
  receive until the room is quiet is counted, with the server CPU the joins cost.
- ``burst``: the move->ack latency of a probe (other rooms racing, bots of ``bench.lib.bots``)
  in a quiet window, then while ``--connections`` connections open at once (each says
  hello), ``--bursts`` times.
- ``replay-flood``: a finished practice game of ``--entries`` log entries (move/undo
  pairs), then the probe's move->ack in a quiet window and while one connection asks for
  that game's ``replay`` ``--rate`` times a second.

Every figure comes with its same-run baseline and the ratio to it. The probe's latencies
are client-side (as in ``bench.load``), so the load generator's own CPU shows in them too.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections import Counter

from bench.lib.bot_fleet import Fleet
from bench.lib.bot_results import WorkerResult
from bench.lib.bots import Plan, paced_pairs
from bench.lib.sources import address_of
from bench.lib.spawn import Target, add_target_arguments, exit_on_sigterm, parse_cpus, target
from bench.lib.spectators import Spectator, StalledSpectator, say_hello
from bench.lib.stats import median, ms, percentile, ratio
from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    AskLegalMoves,
    AskReplay,
    CreateRoom,
    Joined,
    LegalMoves,
    PlayMove,
    Ready,
    Replay,
    Resign,
    RoomOptions,
    Undo,
)


def probe_plan(args: argparse.Namespace, url: str) -> Plan:
    """The other rooms whose move->ack the abuse must not hurt: two-racer rooms, paced."""
    return paced_pairs(url, args.probe_rooms, args.probe_rate, args.seed, parse_cpus(args.client_cpus), "probe")


def start_probe(args: argparse.Namespace, url: str) -> Fleet:
    fleet = Fleet([probe_plan(args, url)])
    racing, seconds = fleet.wait_ready(60)
    if racing == 0:
        fleet.__exit__()
        raise SystemExit("the probe's rooms never started racing")
    print(f"probe: {racing} rooms racing after {seconds:.1f} s", flush=True)
    return fleet


def window_acks(result: WorkerResult, start: float, end: float) -> list[float]:
    return result.ack.within(start, end)


def latency(label: str, acks: list[float]) -> str:
    return (
        f"{label}: p50 {ms(percentile(acks, 0.5))}  p99 {ms(percentile(acks, 0.99))}  "
        f"max {ms(acks[-1] if acks else float('nan'))}  (n={len(acks)})"
    )


# -- (a) spectators that never read -------------------------------------------------------------


async def stalled(args: argparse.Namespace, server: Target) -> str:
    fleet = start_probe(args, server.url)
    with fleet:
        rooms = fleet.rooms
        before = server.rss_mb()
        gate = asyncio.Semaphore(20)

        async def one(n: int) -> StalledSpectator:
            async with gate:
                return await StalledSpectator.join(server.url, f"stall{n}", rooms, args.receive_buffer)

        spectators = await asyncio.gather(*(one(n) for n in range(args.spectators)))
        start = time.monotonic()
        samples: list[float] = []
        queued: list[float] = []
        for k in range(int(args.seconds) + 1):
            await asyncio.sleep(max(0.0, start + k - time.monotonic()))
            samples.append(server.rss_mb())
            queued.append(server.send_queue_mb())
        end = time.monotonic()
        outcomes = Counter(await asyncio.gather(*(s.outcome(args.end_wait) for s in spectators)))
        drained = sum(spectator.drained for spectator in spectators)
        for spectator in spectators:
            spectator.close()
        result = fleet.stop()
    peak = max(samples)
    at_peak = samples.index(peak)
    growth = (peak - samples[0]) / at_peak if at_peak else 0.0
    return "\n".join(
        [
            f"stalled: {args.spectators} spectators that never read (receive buffer {args.receive_buffer} bytes) "
            f"each watch all {len(rooms)} rooms of the probe (racing at {args.probe_rate:g} moves/s in all), "
            f"for {args.seconds:g} s",
            f"server RSS before they joined: {before:.1f} MB; at the start {samples[0]:.1f} MB; "
            f"peak {peak:.1f} MB after {at_peak} s ({growth:.2f} MB/s until then); at the end {samples[-1]:.1f} MB",
            "RSS each second (MB): " + " ".join(f"{value:.1f}" for value in samples),
            "kernel send queues of the server's connections each second (MB): "
            + " ".join(f"{value:.1f}" for value in queued),
            "their connections at the end: "
            + ", ".join(f"{what} x{n}" for what, n in outcomes.most_common())
            + f"; {drained / 1e6:.1f} MB left in the kernel's buffers for them (read at the end)",
            latency("probe move->ack meanwhile", window_acks(result, start, end)),
        ]
    )


# -- (b) many spectators join one room -------------------------------------------------------------


async def joins(args: argparse.Namespace, server: Target) -> str:
    creator = await RaceClient.connect(server.url, "host", reconnect=False)
    try:
        joined = await creator.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(joined, Joined)
        room = joined.room
        gate = asyncio.Semaphore(args.concurrency)

        async def connect(n: int) -> Spectator:
            async with gate:
                return await Spectator.open(server.url, f"watch{n}")

        spectators = await asyncio.gather(*(connect(n) for n in range(args.spectators)))
        await asyncio.sleep(1)
        cpu_before = server.cpu()
        started = time.monotonic()

        async def spectate(spectator: Spectator) -> None:
            async with gate:
                await spectator.spectate(room)

        await asyncio.gather(*(spectate(s) for s in spectators))
        all_joined = time.monotonic()
        # Quiet: nobody has received a frame for --quiet seconds (or the time is up).
        while time.monotonic() < all_joined + args.max_wait:
            await asyncio.sleep(0.2)
            if time.monotonic() - max(s.last for s in spectators) >= args.quiet:
                break
        quiet = max(s.last for s in spectators)
        cpu = server.cpu() - cpu_before
        frames = sum(s.frames for s in spectators)
        volume = sum(s.received_bytes for s in spectators)
        await asyncio.gather(*(s.close() for s in spectators), return_exceptions=True)
    finally:
        await creator.close()
    n = args.spectators
    return "\n".join(
        [
            f"joins: {n} spectators join one waiting room, {args.concurrency} at a time",
            f"frames received by all spectators: {frames} ({volume / 1e6:.1f} MB), {frames / n:.1f} per join "
            f"(the floor is 2 a join: joined + snapshot; {ratio(frames, 2 * n)} of it)",
            f"time to join them all: {all_joined - started:.2f} s; last frame {quiet - started:.2f} s after the first "
            "join",
            f"server CPU for the joins: {cpu:.2f} s ({cpu * 1000 / n:.2f} ms a join)",
        ]
    )


# -- (c) a burst of connections ---------------------------------------------------------------------


#: The first burst connection's place among the loopback sources (:func:`address_of`): past
#: the probe's racers. Each connection of a burst has an address of its own, as a crowd of
#: players has: from one address, the server's per-address cap would refuse all but a few.
_BURST_SOURCES = 10_000


async def burst(args: argparse.Namespace, server: Target) -> str:
    fleet = start_probe(args, server.url)
    with fleet:
        await asyncio.sleep(args.settle)
        quiet_start = time.monotonic()
        await asyncio.sleep(args.baseline)
        quiet_end = time.monotonic()
        windows: list[tuple[float, float, int, Counter[str], float]] = []
        for k in range(args.bursts):
            cpu_before = server.cpu()
            start = time.monotonic()
            opened = await asyncio.gather(
                *(
                    say_hello(server.url, f"b{k}x{n}", timeout=60, source=address_of(_BURST_SOURCES + n))
                    for n in range(args.connections)
                ),
                return_exceptions=True,
            )
            end = time.monotonic()
            cpu = server.cpu() - cpu_before
            failures = Counter(type(o).__name__ for o in opened if isinstance(o, BaseException))
            windows.append((start, end, args.connections - sum(failures.values()), failures, cpu))
            await asyncio.sleep(1)
            await asyncio.gather(*(o.close() for o in opened if not isinstance(o, BaseException)))
            await asyncio.sleep(args.pause)
        result = fleet.stop()
    quiet = window_acks(result, quiet_start, quiet_end)
    lines = [
        f"burst: {args.connections} connections open at once (each says hello), {args.bursts} times; probe: "
        f"{args.probe_rooms} two-racer rooms at {args.probe_rate:g} moves/s in all",
        latency(f"probe move->ack, quiet {args.baseline:g} s", quiet),
    ]
    pooled: list[float] = []
    p99s = []
    for k, (start, end, opened_count, failures, cpu) in enumerate(windows):
        acks = window_acks(result, start, end)
        pooled += acks
        p99s.append(percentile(acks, 0.99))
        lines.append(
            latency(f"probe move->ack, burst {k + 1} ({end - start:.2f} s, {opened_count} opened)", acks)
            + f"; server CPU {cpu:.2f} s"
            + ("; failures " + ", ".join(f"{w} x{n}" for w, n in failures.items()) if failures else "")
        )
    pooled.sort()
    lines.append(latency("probe move->ack, all bursts", pooled))
    lines.append(
        f"median burst p99 {ms(median(p99s))} against the quiet p99 {ms(percentile(quiet, 0.99))}: "
        f"{ratio(median(p99s), percentile(quiet, 0.99))}"
    )
    return "\n".join(lines)


# -- (d) a replay flood --------------------------------------------------------------------------


async def long_game(url: str, entries: int, connections: int) -> tuple[str, int, str]:
    """A finished practice game whose log has ``entries`` entries (move/undo pairs), played over
    ``connections`` connections of one player (each has its own rate limit). Returns the room,
    the entries made, and why it stopped short (empty if it did not)."""
    first = await RaceClient.connect(url, "longgame", reconnect=False)
    clients = [first]
    try:
        options = RoomOptions(max_racers=1, deal="1")
        joined = await first.request(lambda i: CreateRoom(id=i, variant="scorpion", options=options))
        assert isinstance(joined, Joined)
        code = joined.room
        await first.request(lambda i: Ready(id=i, room=code))
        await first.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
        for _ in range(connections - 1):
            clients.append(await RaceClient.connect(url, "longgame", resume=first.resume, reconnect=False))
        legal = await first.request(lambda i: AskLegalMoves(id=i, room=code))
        assert isinstance(legal, LegalMoves)
        move = next((m for m in legal.moves if m != "deal"), "deal")
        made, short = 0, ""
        for k in range(entries):
            client = clients[k % len(clients)]
            try:
                if k % 2 == 0:
                    await client.request(lambda i: PlayMove(id=i, room=code, move=move), timeout=30)
                else:
                    await client.request(lambda i: Undo(id=i, room=code), timeout=30)
            except ServerError as error:
                short = f"{error.code}: {error}"
                break
            made += 1
        await first.request(lambda i: Resign(id=i, room=code))
        await first.wait_room(code, lambda m: m.view().state == "finished", timeout=15)
        return code, made, short
    finally:
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)


async def replay_flood(args: argparse.Namespace, server: Target) -> str:
    began = time.monotonic()
    code, made, short = await long_game(server.url, args.entries, args.game_connections)
    print(f"long game: room {code}, {made} entries in {time.monotonic() - began:.1f} s", flush=True)
    fleet = start_probe(args, server.url)
    flooder = await RaceClient.connect(server.url, "flooder", reconnect=False)
    asks: list[asyncio.Task[None]] = []
    try:
        with fleet:
            await asyncio.sleep(args.settle)
            cpu0 = server.cpu()
            quiet_start = time.monotonic()
            await asyncio.sleep(args.baseline)
            quiet_end = time.monotonic()
            cpu1 = server.cpu()
            times: list[float] = []
            errors: Counter[str] = Counter()
            steps: list[int] = []

            async def ask() -> None:
                # Open loop, as an abuser would: the next request goes out on time whatever
                # became of this one (the connection's requests queue up at the server).
                sent = time.monotonic()
                try:
                    reply = await flooder.request(lambda i: AskReplay(id=i, room=code, seat=0), timeout=120)
                except ServerError as error:
                    errors[error.code] += 1
                except (TimeoutError, ConnectionError) as error:
                    errors[type(error).__name__] += 1
                else:
                    times.append(time.monotonic() - sent)
                    if isinstance(reply, Replay) and not steps:
                        steps.append(len(reply.steps))

            flood_start = time.monotonic()
            while time.monotonic() < flood_start + args.seconds:
                asks.append(asyncio.create_task(ask()))
                await asyncio.sleep(max(0.0, flood_start + len(asks) / args.rate - time.monotonic()))
            flood_end = time.monotonic()
            cpu2 = server.cpu()
            served = len(times)  # within the flood; the rest were still queued at its end
            result = fleet.stop()
    finally:
        for task in asks:  # the requests still queued at the server: not waited for
            task.cancel()
        await asyncio.gather(*asks, return_exceptions=True)
        await flooder.close()
    size = steps[0] if steps else 0
    quiet = window_acks(result, quiet_start, quiet_end)
    flood = window_acks(result, flood_start, flood_end)
    flood_seconds = flood_end - flood_start
    idle_rate = (cpu1 - cpu0) / (quiet_end - quiet_start)
    replays = served
    per_replay = ((cpu2 - cpu1) - idle_rate * flood_seconds) / replays if replays else float("nan")
    times = sorted(times[:served])
    return "\n".join(
        [
            f"replay-flood: a finished practice game of {made} log entries"
            + (f" (stopped short: {short})" if short else "")
            + f"; one connection asks for its replay {args.rate:g} times a second for {args.seconds:g} s; probe: "
            f"{args.probe_rooms} two-racer rooms at {args.probe_rate:g} moves/s in all",
            f"replays asked: {len(asks)}; served within the flood: {replays} ({replays / flood_seconds:.1f}/s, "
            f"{size} steps each); "
            + ("errors: " + ", ".join(f"{c} x{n}" for c, n in errors.items()) + "; " if errors else "")
            + f"replay reply time p50 {ms(percentile(times, 0.5))} p99 {ms(percentile(times, 0.99))}",
            f"server CPU: {idle_rate * 100:.0f}% of a core quiet, {(cpu2 - cpu1) / flood_seconds * 100:.0f}% "
            f"flooded; {per_replay * 1000:.1f} ms per replay (beyond the quiet rate)",
            latency(f"probe move->ack, quiet {args.baseline:g} s", quiet),
            latency("probe move->ack, flooded", flood),
            f"flooded/quiet: p50 {ratio(percentile(flood, 0.5), percentile(quiet, 0.5))}, "
            f"p99 {ratio(percentile(flood, 0.99), percentile(quiet, 0.99))}",
        ]
    )


# -- command line ------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    common = argparse.ArgumentParser(add_help=False)
    add_target_arguments(common, "with --spawn: pin the server and its Redis, e.g. 0", "pin the probe's bots, e.g. 1")
    common.add_argument("--probe-rooms", type=int, default=4, help="the probe's two-racer rooms, default 4")
    common.add_argument("--probe-rate", type=float, default=100.0, help="the probe's moves a second in all")
    common.add_argument("--settle", type=float, default=2.0, help="seconds after the probe races before measuring")
    common.add_argument("--seed", type=int, default=1)
    parser = argparse.ArgumentParser(prog="python -m bench.abuse", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    one = commands.add_parser("stalled", parents=[common], help="RSS with spectators that never read")
    one.add_argument("--spectators", type=int, default=100)
    one.add_argument("--seconds", type=float, default=60.0)
    one.add_argument("--receive-buffer", type=int, default=4096, help="the spectators' SO_RCVBUF in bytes")
    one.add_argument(
        "--end-wait", type=float, default=3.0, help="seconds to read what the server left each one at the end"
    )
    one = commands.add_parser("joins", parents=[common], help="frames sent when spectators join one room")
    one.add_argument("--spectators", type=int, default=500)
    one.add_argument("--concurrency", type=int, default=20, help="joins in flight at a time")
    one.add_argument("--quiet", type=float, default=2.0, help="seconds without a frame that end the count")
    one.add_argument("--max-wait", type=float, default=120.0, help="longest wait for quiet after the joins")
    one = commands.add_parser("burst", parents=[common], help="other rooms' move->ack while connections open")
    one.add_argument("--connections", type=int, default=2000)
    one.add_argument("--bursts", type=int, default=3)
    one.add_argument("--baseline", type=float, default=10.0, help="seconds of the quiet window")
    one.add_argument("--pause", type=float, default=3.0, help="seconds between bursts")
    one = commands.add_parser("replay-flood", parents=[common], help="other rooms' move->ack during replays")
    one.add_argument("--entries", type=int, default=3000, help="log entries of the long game")
    one.add_argument("--game-connections", type=int, default=5, help="connections that play the long game")
    one.add_argument("--rate", type=float, default=13.0, help="replays asked a second")
    one.add_argument("--seconds", type=float, default=20.0, help="length of the flood")
    one.add_argument("--baseline", type=float, default=10.0, help="seconds of the quiet window")
    return parser.parse_args(argv)


COMMANDS = {"stalled": stalled, "joins": joins, "burst": burst, "replay-flood": replay_flood}


def run(args: argparse.Namespace) -> str:
    with target(args) as server:
        return asyncio.run(COMMANDS[args.command](args, server))


def main(argv: list[str] | None = None) -> None:
    exit_on_sigterm()
    print(run(parse_args(argv)))


if __name__ == "__main__":
    main()
