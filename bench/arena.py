"""An arena tournament under load (issue 30): the standings' delay after a race, the server's
CPU a move in the arena against plain quick matches, Redis memory per 1,000 players, and what
a node's death costs.

    python -m bench.arena [--bots 1000] [--nodes 3] [--seconds 600] [--variant scorpion]
                          [--rate 1] [--moves 20] [--windows 30] [--settle 5] [--measure 0.1]
                          [--no-kill] [--workers 2] [--quick-match-wait 0.5] [--node-ttl S] [--over-wait 90]
                          [--logs DIR] [--idle 3] [--no-warm-up]

``--nodes`` real ``python -m server`` nodes (no solver workers, quick matches gathered for
``--quick-match-wait`` s, the server's lease TTL unless ``--node-ttl``) on one private embedded
Redis, and an arena on ``--variant`` stored in it, live for the whole run. ``--bots`` players, each a guest on a node
in turn, connected from a loopback address of its own, race again and again
(:mod:`bench.lib.arena_bots`): in windows of ``--windows`` seconds, alternated, an arena window
(``join_arena``) then a plain one (``quick_match``, the same pace and moves), and so on. A bot
plays ``--rate`` moves a second worked out from its own board and resigns after ``--moves``
moves, or when its window ends (so that a window's races are all of one kind once its first
``--settle`` seconds are over).

Printed:

1. the standings' delay after a race ends: for every ``1/--measure``-th bot, from its
   ``race_over`` to the first ``arena`` answer (polled every 50 ms) whose own line counts that
   race;
2. each window's CPU (every node and Redis, the scheduler's nanosecond count) over the moves
   acknowledged in it, from ``--settle`` s in, as it is and less the idle cost (measured for
   ``--idle`` seconds with every bot connected and nobody racing), and the medians of the arena and
   the plain windows and their ratio (the window with the kill is left out);
3. Redis memory: ``MEMORY USAGE`` of the arena's keys, per 1,000 players, and how much
   ``used_memory`` grew over the run (rooms and their logs included);
4. with ``--kill`` (the default), SIGKILL of the node holding the arena's scheduler lease (it
   runs every race it formed) in the middle of the arena window nearest half way: the races in progress
   then and how many the bots saw end afterwards (restored on another node), the bots that had
   to reconnect (each to the next live node);
5. the lost-points check, at the end: every arena race a bot saw end is in its line of the
   standings, and each line has the points the arena's rules give for the places its bot saw
   (every race ends long before the arena does; a bot that missed the end of a race of its
   own is left out of the points' check, and counted).
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import os
import signal
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from bench.lib.arena_bots import KINDS, OVER_WAIT, POLL_FOR, Plan, Schedule, WorkerResult
from bench.lib.arena_check import (
    ArenaMemory,
    Check,
    KillCost,
    arena_memory,
    check_standings,
    kill_cost,
    scheduler_pid,
    used_memory,
)
from bench.lib.arena_workers import Workers
from bench.lib.node_costs import cpu_of
from bench.lib.node_fleet import ROOT, Node, add_wait_arguments, pid_of, start_nodes, stop_nodes, warm_up
from bench.lib.spawn import raise_nofile_limit
from bench.lib.stats import latency_line, median, ratio
from server.clock import now_ms
from server.competition.arena import Arena
from server.live.registry import new_room_code
from server.storage.arenas import ArenaStore
from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis

#: Seconds the arena stays live after the run: every race the bots play ends inside it.
ARENA_MARGIN = 3600
#: Seconds after the kill in which a bot's dropped connection counts as the kill's.
KILL_DROPS = 10.0


@dataclass
class Window:
    """One window of the alternation: its kind, the part measured, and what it cost."""

    index: int
    kind: str
    start: float
    end: float
    cpu: float = float("nan")
    left_out: str | None = None  # why its CPU is not counted
    moves: int = 0
    other_moves: int = 0  # moves of the other kind's races in the measured part (a race left over)

    def per_move(self, idle: float = 0.0) -> float:
        """CPU over every move acknowledged in the measured part, less ``idle`` CPU seconds a
        second (what the nodes and Redis spend with nobody racing)."""
        moves = self.moves + self.other_moves
        spent = self.cpu - idle * (self.end - self.start)
        return spent / moves if moves and self.left_out is None else float("nan")


@dataclass
class Kill:
    at: float
    node: Node
    scheduler: bool  # it held the arena's scheduler lease


def kill_offset(seconds: float, window: float) -> float:
    """Seconds into the run of the kill: the middle of the arena window nearest half way."""
    arena_windows = range(0, max(1, int(-(-seconds // window))), 2)
    middles = [min((w + 0.5) * window, seconds) for w in arena_windows]
    return min(middles, key=lambda middle: abs(middle - seconds / 2))


async def sleep_until(moment: float) -> None:
    await asyncio.sleep(max(0.0, moment - time.monotonic()))


async def kill_scheduler(
    at: float, arena: str, nodes: list[Node], storage: Storage, live: list[int], workers: Workers
) -> Kill:
    """At ``at``, SIGKILL the node holding the arena's scheduler lease (the first if none is found)."""
    await sleep_until(at)
    pid = await scheduler_pid(storage, arena)
    node = next((n for n in nodes if n.process.pid == pid), nodes[0])
    killed = time.monotonic()
    node.process.send_signal(signal.SIGKILL)
    live.remove(node.process.pid)
    await asyncio.to_thread(node.process.wait)
    workers.tell("killed", node.url)
    return Kill(killed, node, node.process.pid == pid)


async def sample_windows(schedule: Schedule, live: list[int]) -> list[Window]:
    """CPU of the processes in ``live`` over each window's measured part, as the run goes."""
    windows = []
    count = int(-(-schedule.seconds // schedule.window))
    for index in range(count):
        begins = schedule.start + index * schedule.window
        window = Window(
            index, schedule.kind(begins), begins + schedule.settle, min(schedule.end, begins + schedule.window)
        )
        windows.append(window)
        if window.start >= window.end:
            window.left_out = "no time measured"
            continue
        if schedule.kill_at is not None and begins <= schedule.kill_at < window.end:
            window.left_out = "a node killed"
            continue
        await sleep_until(window.start)
        before = cpu_of(live)
        await sleep_until(window.end)
        window.cpu = cpu_of(live) - before
        print(f"  ... window {index + 1} of {count} ({window.kind}): CPU {window.cpu:.2f} s", flush=True)
    return windows


def count_moves(windows: list[Window], results: list[WorkerResult]) -> None:
    acks = {kind: sorted(t for result in results for t in result.acks[kind]) for kind in KINDS}
    for window in windows:
        for kind, times in acks.items():
            moves = bisect.bisect_left(times, window.end) - bisect.bisect_left(times, window.start)
            if kind == window.kind:
                window.moves = moves
            else:
                window.other_moves = moves


def standings_lines(results: list[WorkerResult], every: int, kill: Kill | None) -> list[str]:
    samples = [sample for result in results for sample in result.standings]
    measured_by = f"every {every}th bot" if every > 1 else "every bot"
    label = f"standings update after a race ends (race_over -> own line counts it; {measured_by}):"
    lines = [latency_line(label, sorted(latency for _, latency in samples))]
    if kill is not None:
        before = sorted(latency for seen, latency in samples if seen < kill.at)
        after = sorted(latency for seen, latency in samples if seen >= kill.at)
        lines += ["  " + latency_line("before the kill:", before), "  " + latency_line("after it:", after)]
    missed = sum(result.standings_missed for result in results)
    lines.append(f"  races not counted in the bot's line within {POLL_FOR:.0f} s: {missed}")
    return lines


def compared(what: str, windows: list[Window], idle: float) -> str:
    """The medians of the arena and the plain windows' CPU a move, and their ratios."""
    values = [(w.kind, w.per_move(idle)) for w in windows]
    per_kind = {kind: [v for k, v in values if k == kind and v == v] for kind in KINDS}
    pairs = [a / b for (_, a), (_, b) in zip(values[::2], values[1::2], strict=False) if a == a and b == b and b > 0]
    arena, plain = median(per_kind["arena"]), median(per_kind["plain"])
    return (
        f"{what}: arena {arena * 1000:.3f} ms (median of {len(per_kind['arena'])} windows), "
        f"plain {plain * 1000:.3f} ms (median of {len(per_kind['plain'])}): arena / plain {ratio(arena, plain)}"
        + (f"; pair by pair median {median(pairs):.2f}x ({', '.join(f'{p:.2f}x' for p in pairs)})" if pairs else "")
    )


def cpu_lines(windows: list[Window], schedule: Schedule, idle: float) -> list[str]:
    lines = [f"server CPU (nodes + Redis) per move acknowledged, each window from its first {schedule.settle:g} s "
             f"on; idle (bots connected, nobody racing): {idle * 100:.1f}% of a core"]  # fmt: skip
    for w in windows:
        span = f"{w.start - schedule.start:6.1f}-{w.end - schedule.start:6.1f} s"
        if w.left_out is not None:
            lines.append(f"  {w.index + 1:3d} {w.kind:5s} {span}: left out ({w.left_out})")
            continue
        share = w.cpu / (w.end - w.start) * 100
        late = f" (+{w.other_moves} of the other kind)" if w.other_moves else ""
        lines.append(
            f"  {w.index + 1:3d} {w.kind:5s} {span}: {w.moves:7,d} moves{late}, CPU {w.cpu:7.2f} s "
            f"({share:3.0f}% of a core), {w.per_move() * 1000:.3f} ms a move, {w.per_move(idle) * 1000:.3f} beyond idle"
        )
    lines.append(compared("server CPU per move", windows, 0.0))
    lines.append(compared("beyond idle", windows, idle))
    return lines


def memory_line(memory: ArenaMemory, players: int, grown: int) -> str:
    per = 1000 / players if players else float("nan")
    marker = memory.scored / memory.markers if memory.markers else float("nan")
    return (
        f"Redis memory: the arena's keys {memory.total / 1024:,.1f} KiB for {players:,} players and "
        f"{memory.markers:,} races scored: {memory.total * per / 1024:,.1f} KiB per 1,000 players "
        f"(standings {memory.standings * per / 1024:,.1f} KiB per 1,000 players; {marker:.0f} bytes "
        f"a scored race's marker); used_memory +{grown / 2**20:,.1f} MiB over the run (rooms and logs included)"
    )


def kill_line(kill: Kill, start: float, cost: KillCost, results: list[WorkerResult]) -> str:
    whose = "the arena's scheduler, running every race" if kill.scheduler else "not the arena's scheduler"
    drops = {bot: times for result in results for bot, times in result.drops.items()}
    at_kill = {bot: [kill.at <= t < kill.at + KILL_DROPS for t in times] for bot, times in drops.items()}
    then = {bot for bot, marks in at_kill.items() if any(marks)}
    other = sum(marks.count(False) for marks in at_kill.values())
    others = {bot for bot, marks in at_kill.items() if not all(marks)}
    back, bots = sum(r.back for r in results), sum(r.connected for r in results)
    return (
        f"node killed (SIGKILL) at {kill.at - start:.1f} s: port {kill.node.port} ({whose}); races in progress "
        f"{cost.in_progress} ({cost.arena} arena): {cost.finished} seen to end afterwards ({cost.arena_finished} "
        f"arena; restored), {cost.in_progress - cost.finished} not; bots that had to reconnect within "
        f"{KILL_DROPS:.0f} s: {len(then)} of {bots}; connections dropped at other times: {other} "
        f"({len(others)} bots); connected at the end: {back} of the {len(drops)} bots that dropped"
    )


def check_line(check: Check, results: list[WorkerResult], kill: Kill | None) -> str:
    dropped = {r.players.get(bot) for r in results for bot in r.drops}
    line = (
        f"lost points: {check.lost_points}, lost races: {check.lost_races} (races in the standings "
        f"{check.counted_races:,}, races the bots saw end {check.seen_races:,}; points {check.points:,}, by the "
        f"rules for the places the bots saw {check.expected_points:,}; lines that differ: {len(check.differ)}; "
        f"read after {check.waited:.1f} s)"
    )
    if check.partial:
        line += (
            f"; {check.partial} players' bots missed the end of a race of theirs or found themselves in one they "
            f"had not waited for (points not checked; the standings count {check.partial_extra} races more for them)"
        )
    if check.differ:
        line += f"; of the lines that differ, {len(dropped & set(check.differ))} are of bots whose connection dropped"
    if check.unscored:
        when, since = (kill.at, "the kill") if kill is not None else (check.unscored[0], "the first")
        line += (
            f"\n  arena races the bots saw end that the standings never scored: {len(check.unscored)}, seen to end "
            f"from {check.unscored[0] - when:+.2f} s to {check.unscored[-1] - when:+.2f} s after {since}"
        )
    if check.unplaced:
        line += f"; {check.unplaced} races seen to end without the bot's own result"
    for player, (want, got) in list(check.differ.items())[:5]:
        line += f"\n  {player}: expected {want[0]} races {want[1]} points, found {got[0]} races {got[1]} points"
    return line


def race_line(results: list[WorkerResult]) -> str:
    races = [race for result in results for race in result.races]
    parts = []
    for kind in KINDS:
        rooms = {(r.room, r.race): len(r.places) for r in races if r.kind == kind and r.over is not None}
        size = sum(rooms.values()) / len(rooms) if rooms else float("nan")
        parts.append(f"{kind} {len(rooms):,} ({size:.1f} racers each)")
    unseen = sum(1 for race in races if race.over is None)
    polls = sum(r.polls for r in results)
    untracked = sum(sum(r.untracked.values()) for r in results)
    return (
        f"races seen to end: {', '.join(parts)}; {unseen} not seen to end; {untracked} seated in without having "
        f"waited for them (left); standings polls: {polls:,}"
    )


def errors_line(results: list[WorkerResult]) -> str:
    errors: Counter[str] = Counter()
    for result in results:
        errors += result.errors
    if not errors:
        return "errors: none"
    return "errors: " + ", ".join(f"{what} x{count}" for what, count in errors.most_common(8))


async def measure(args: argparse.Namespace, nodes: list[Node], redis: EmbeddedRedis, storage: Storage) -> None:
    now = now_ms()
    arena = Arena(
        new_room_code(), args.variant, "bench arena", now - 1000, now + int((args.seconds + ARENA_MARGIN) * 1000)
    )
    await ArenaStore(storage).create(arena, now)
    memory_before = await used_memory(storage)
    workers = max(1, min(args.workers, args.bots))
    every = round(1 / args.measure) if args.measure > 0 else 0
    urls = tuple(node.url for node in nodes)
    plans = [
        Plan(
            urls, range(k, args.bots, workers), arena.id, args.variant, args.rate, args.moves, every, k, args.over_wait
        )
        for k in range(workers)
    ]
    kill_at: float | None = None
    with Workers(plans) as fleet:
        connected = await asyncio.to_thread(fleet.ready, 600)
        live = [node.process.pid for node in nodes] + [pid_of(redis)]
        idle_from, idle_before = time.monotonic(), cpu_of(live)
        await asyncio.sleep(args.idle)
        idle = (cpu_of(live) - idle_before) / (time.monotonic() - idle_from)
        start = time.monotonic() + 1.0
        if args.kill and len(nodes) > 1:
            kill_at = start + kill_offset(args.seconds, args.windows)
        schedule = Schedule(start, args.seconds, args.windows, args.settle, kill_at)
        print(f"{connected} of {args.bots} bots connected; arena {arena.id}; racing", flush=True)
        fleet.tell("go", schedule)
        killing = (
            asyncio.ensure_future(kill_scheduler(kill_at, arena.id, nodes, storage, live, fleet)) if kill_at else None
        )
        windows = await sample_windows(schedule, live)
        kill = await killing if killing is not None else None
        results = await asyncio.to_thread(fleet.results, args.over_wait + POLL_FOR + 120)
    races = [race for result in results for race in result.races]
    untracked = {player for result in results for player in result.untracked}
    check = await check_standings(storage, arena.id, races, untracked)
    memory, players = await arena_memory(storage, arena.id), await ArenaStore(storage).count(arena.id)
    grown = await used_memory(storage) - memory_before
    count_moves(windows, results)
    print("\n".join(standings_lines(results, every, kill)))
    print("\n".join(cpu_lines(windows, schedule, idle)))
    print(memory_line(memory, players, grown))
    if kill is not None:
        print(kill_line(kill, start, kill_cost(races, kill.at), results))
    print(check_line(check, results, kill))
    print(race_line(results))
    print(errors_line(results))


async def main_async(args: argparse.Namespace) -> None:
    raise_nofile_limit()
    print(
        f"arena: {args.bots} bots over {args.nodes} nodes (one embedded Redis), {args.variant}, {args.seconds:g} s "
        f"in windows of {args.windows:g} s (arena, plain, ...; measured from {args.settle:g} s in), "
        f"{args.rate:g} moves/s a bot, resigning after {args.moves} moves; node kill: {'on' if args.kill else 'off'}; "
        f"{os.cpu_count()} cores",
        flush=True,
    )
    with tempfile.TemporaryDirectory(prefix="bench-arena-") as scratch:
        logs = args.logs or Path(scratch)
        logs.mkdir(parents=True, exist_ok=True)
        redis = EmbeddedRedis(Path(scratch) / "redis")
        await redis.start()
        try:
            if args.warm_up:
                await warm_up(redis.url, logs, ROOT)
            extra = ["--quick-match-wait", str(args.quick_match_wait)]
            nodes = await start_nodes(args.nodes, redis.url, logs, node_ttl=args.node_ttl, extra=extra)
            storage = await Storage.connect(redis.url)
            try:
                await measure(args, nodes, redis, storage)
            finally:
                await storage.close()
                stop_nodes(nodes)
        finally:
            await redis.stop()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.arena", description=__doc__.split("\n\n")[0])
    parser.add_argument("--bots", type=int, default=1000, help="players (default 1000)")
    parser.add_argument("--nodes", type=int, default=3, help="server nodes on one Redis (default 3)")
    parser.add_argument("--seconds", type=float, default=600.0, help="seconds of racing (default 600)")
    parser.add_argument("--variant", choices=("scorpion", "antares"), default="scorpion", help="the arena's game")
    parser.add_argument("--rate", type=float, default=1.0, help="moves a second of each bot (default 1)")
    parser.add_argument("--moves", type=int, default=20, help="moves before a bot resigns (default 20)")
    parser.add_argument(
        "--windows", type=float, default=30.0, metavar="SECONDS",
        help="seconds of each window of the alternation arena, plain, arena, ... (default 30)",
    )  # fmt: skip
    parser.add_argument(
        "--settle", type=float, default=5.0, help="seconds at each window's start not measured (default 5)"
    )
    parser.add_argument("--measure", type=float, default=0.1, help="share of bots timing the standings (default 0.1)")
    parser.add_argument(
        "--kill", action=argparse.BooleanOptionalAction, default=True,
        help="SIGKILL the arena's scheduler node half way (default: on)",
    )  # fmt: skip
    parser.add_argument("--workers", type=int, default=2, help="bot processes (default 2)")
    parser.add_argument(
        "--quick-match-wait", type=float, default=0.5, help="the nodes' quick-match gather time (default 0.5 s)"
    )
    parser.add_argument(
        "--node-ttl", type=float, default=None,
        help="the nodes' heartbeat and lease TTL (default: the server's, 5 s)",
    )  # fmt: skip
    parser.add_argument(
        "--over-wait", type=float, default=OVER_WAIT, metavar="SECONDS",
        help=f"how long a bot that resigned waits for its race's end (default {OVER_WAIT:g})",
    )  # fmt: skip
    parser.add_argument("--logs", type=Path, help="keep the nodes' logs in this folder")
    add_wait_arguments(parser)
    asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    main()
