"""The bots' levels, measured (issue 31): each level races certified winnable deals of each game.

    python -m bench.bot_levels --spawn [--deals 20] [--offset 0] [--levels easy,medium,hard]
        [--games scorpion,antares] [--time-limit 600] [--parallel 12] [--delay SECONDS]

Deals: the certified winnable deals shipped with the server (``server/supply/shipped/``, the
deals the surveys in ``seeds/winnability/`` solved), the first ``--deals`` of each game after
``--offset``, the same for every level. Each race is a one-seat practice room on its deal,
with the room's ``time_limit`` at ``--time-limit`` seconds, raced by one bot of the level at
its own pace (``--delay`` overrides every level's pace, for a quick check). A practice room
that names its deal does not say the deal is certified, so the bench tells the bot
(``certified=True``): it plays as in a room with "winnable deals only", where it never
resigns while it has a legal move. ``--parallel`` races run at once, each on a connection
of its own; levels and games are interleaved, so the slow levels run beside the fast.

``--spawn`` starts the server the way the other benches do (:func:`bench.lib.spawn.spawn_server`:
its embedded Redis, no solver workers, one hint worker, as a server runs by default);
without it, ``--url`` names a running server (loopback only).

Printed, one line a race as it ends, then a table: level, game, deals, won (within the time
limit), win rate, median time to finish (the server's ``finished_ms``: race start to the
winning move), median moves (``progress.moves``: moves undone or played again included, as
the server counts them) and the median par of those deals (the surveys' winning-line length,
where the survey has one). Medians are over the races won.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import csv
import itertools
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.lib.spawn import add_target_arguments, target
from client.lib.bot import LEVELS, Bot, Level
from client.lib.connection import RaceClient, ServerError
from protocol.messages import CreateRoom, Joined, RoomOptions, Variant
from server.supply.shipped import shipped

GAMES: tuple[Variant, ...] = ("scorpion", "antares")
SURVEYS = Path(__file__).resolve().parent.parent / "seeds" / "winnability"
#: The surveys with a par for each solved deal, by game (the Antares survey of 1-32000 has
#: the first-found line's length; its par survey covers 1-1000).
PAR_FILES = {"scorpion": ("scorpion-1-32000.csv",), "antares": ("antares-par-1-1000.csv",)}


@dataclass(frozen=True)
class Race:
    level: Level
    game: Variant
    deal: int


@dataclass(frozen=True)
class Outcome:
    race: Race
    won: bool
    seconds: float | None  # race start to the winning move (the server's clock)
    moves: int
    ending: str


def pars(game: Variant) -> dict[int, int]:
    """Par of each deal the surveys solved with a par, for ``game``."""
    found: dict[int, int] = {}
    for name in PAR_FILES[game]:
        path = SURVEYS / name
        if not path.exists():
            continue
        with path.open(newline="") as survey:
            for row in csv.DictReader(survey):
                if row["verdict"] == "solved" and row.get("par"):
                    found[int(row["deal"])] = int(row["par"])
    return found


def races(levels: Sequence[Level], games: Sequence[Variant], deals: int, offset: int) -> list[Race]:
    """Every (level, game, deal), interleaved: deal by deal, each game, each level."""
    chosen = {game: shipped(game)[offset : offset + deals] for game in games}
    return [
        Race(level, game, deal)
        for index in range(deals)
        for game in games
        for level in levels
        if index < len(chosen[game])
        for deal in [chosen[game][index]]
    ]


async def race_once(client: RaceClient, race: Race, args: argparse.Namespace) -> Outcome:
    options = RoomOptions(max_racers=1, deal=str(race.deal), time_limit=args.time_limit)
    created = await client.request(lambda i: CreateRoom(id=i, variant=race.game, options=options))
    assert isinstance(created, Joined)
    bot = Bot(client, created.room, race.level, delay=args.delay, seed=race.deal, certified=True)
    await bot.ready()
    result = await bot.play(start_timeout=60)
    mirror = client.rooms.get(created.room)
    finished = None if mirror is None else mirror.view().racers[0].finished_ms
    with contextlib.suppress(ServerError):
        await client.leave(created.room)
    seconds = finished / 1000 if finished is not None else None
    return Outcome(race, result.won, seconds, result.moves, result.ending)


async def worker(
    url: str, number: int, queue: asyncio.Queue[Race], results: list[Outcome], args: argparse.Namespace
) -> None:
    async with await RaceClient.connect(url, f"Bot {number}", bot=True) as client:
        while not queue.empty():
            race = queue.get_nowait()
            try:
                outcome = await race_once(client, race, args)
            except (ServerError, ConnectionError, TimeoutError) as error:
                outcome = Outcome(race, False, None, 0, f"failed: {type(error).__name__} {error}")
            results.append(outcome)
            if not args.quiet:
                verdict = f"won in {outcome.seconds:.1f} s" if outcome.won and outcome.seconds else outcome.ending
                print(f"{race.level:<6} {race.game:<8} {race.deal:>6}: {verdict}, {outcome.moves} moves", flush=True)


def median(values: Sequence[float]) -> float | None:
    return statistics.median(values) if values else None


def table(results: Sequence[Outcome], levels: Sequence[Level], games: Sequence[Variant]) -> list[str]:
    head = f"{'level':<7}{'game':<10}{'deals':>6}{'won':>5}{'win rate':>10}"
    lines = [f"{head}{'median time':>13}{'median moves':>14}{'par':>5}"]
    for level, game in itertools.product(levels, games):
        mine = [o for o in results if o.race.level == level and o.race.game == game]
        if not mine:
            continue
        won = [o for o in mine if o.won]
        seconds = median([o.seconds for o in won if o.seconds is not None])
        moves = median([o.moves for o in won])
        par_of = pars(game)
        par = median([par_of[o.race.deal] for o in mine if o.race.deal in par_of])
        lines.append(
            f"{level:<7}{game:<10}{len(mine):>6}{len(won):>5}{len(won) / len(mine):>10.0%}"
            f"{f'{seconds:.0f} s' if seconds is not None else '-':>13}"
            f"{f'{moves:.0f}' if moves is not None else '-':>14}"
            f"{f'{par:.0f}' if par is not None else '-':>5}"
        )
    return lines


async def run(url: str, args: argparse.Namespace) -> None:
    levels = [level for level in LEVELS if level in args.levels.split(",")]
    games = [game for game in GAMES if game in args.games.split(",")]
    queue: asyncio.Queue[Race] = asyncio.Queue()
    for race in races(levels, games, args.deals, args.offset):
        queue.put_nowait(race)
    results: list[Outcome] = []
    print(
        f"bot levels: {queue.qsize()} races ({args.deals} deals of {', '.join(games)} from the shipped certified "
        f"deals after {args.offset}; levels {', '.join(levels)}), {args.parallel} at once, "
        f"time limit {args.time_limit} s, on {url}",
        flush=True,
    )
    started = time.monotonic()
    await asyncio.gather(*(worker(url, n + 1, queue, results, args) for n in range(args.parallel)))
    print(f"\n{len(results)} races in {time.monotonic() - started:.0f} s")
    print("\n".join(table(results, levels, games)))


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    add_target_arguments(parser, server_cpus="CPUs for a spawned server", client_cpus="unused")
    parser.add_argument("--deals", type=int, default=20, help="certified deals of each game")
    parser.add_argument("--offset", type=int, default=0, help="skip this many shipped deals of each game first")
    parser.add_argument("--levels", default=",".join(LEVELS), help="comma-separated levels")
    parser.add_argument("--games", default=",".join(GAMES), help="comma-separated games")
    parser.add_argument("--time-limit", type=int, default=600, help="seconds a race may last (the room's time limit)")
    parser.add_argument("--parallel", type=int, default=12, help="races at once")
    parser.add_argument("--delay", type=float, default=None, help="seconds between moves for every level")
    parser.add_argument("--quiet", action="store_true", help="no line per race")
    args = parser.parse_args(argv)
    with target(args) as server:
        asyncio.run(run(server.url, args))


if __name__ == "__main__":
    main()
