"""What :mod:`bench.arena` reads back from Redis: who schedules the arena, the memory an arena's
keys hold, and the lost-points check (the standings against the races the bots saw end,
scored by the arena's own rules, :mod:`server.competition.arena`).
"""

from __future__ import annotations

import asyncio
import time
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field

from bench.lib.arena_bots import RaceSeen
from server.cluster.schedulers import lease_name
from server.competition.arena import Record, score
from server.storage.arenas import ArenaStore
from server.storage.connection import Storage, as_text
from server.storage.keys import Keys, key_part


async def used_memory(storage: Storage) -> int:
    return int((await storage.redis.info("memory"))["used_memory"])


async def scheduler_pid(storage: Storage, arena: str) -> int | None:
    """The pid of the node holding the arena's scheduler lease (node ids start with their
    pid): the node that pairs its players and runs every race it forms."""
    holder = await storage.redis.get(Keys(storage.prefix).lease(lease_name("arena", arena)))
    if holder is None:
        return None
    pid = as_text(holder).split("-", 1)[0]
    return int(pid) if pid.isdigit() else None


@dataclass
class ArenaMemory:
    """``MEMORY USAGE`` of an arena's keys, by part: the arena, its standings (the players'
    records, the board, who plays where) and the markers of the races scored."""

    arena: int = 0
    standings: int = 0
    scored: int = 0
    markers: int = 0

    @property
    def total(self) -> int:
        return self.arena + self.standings + self.scored


def _base(storage: Storage, arena: str) -> str:
    return f"{storage.prefix}arena:{{{key_part(arena)}}}"  # as server/storage/arenas.py names them


async def scored_races(storage: Storage, arena: str) -> set[tuple[str, int]]:
    """(room, race) of every race the arena's standings scored (their markers)."""
    scored = set()
    async for raw in storage.redis.scan_iter(match=f"{_base(storage, arena)}:scored:*", count=1000):
        _, room, race = as_text(raw).rsplit(":", 2)
        scored.add((room, int(race)))
    return scored


async def arena_memory(storage: Storage, arena: str) -> ArenaMemory:
    base = _base(storage, arena)
    memory = ArenaMemory()
    async for raw in storage.redis.scan_iter(match=f"{base}*", count=1000):
        key = as_text(raw)
        used = int(await storage.redis.memory_usage(key, samples=0) or 0)
        if key == base:
            memory.arena += used
        elif key.startswith(f"{base}:scored:"):
            memory.scored += used
            memory.markers += 1
        else:
            memory.standings += used
    return memory


def expected_records(races: Iterable[RaceSeen]) -> dict[str, Record]:
    """Each player's record by the arena's rules, from the arena races the bots saw end, in the
    order each bot raced them (a player's races never overlap)."""
    records: dict[str, Record] = {}
    for race in sorted((r for r in races if r.in_arena and r.over is not None), key=lambda r: r.joined):
        places = [(player or f"seat{seat}", "", place) for seat, player, place in race.places]
        if not any(player == race.player for player, _, _ in places):
            continue  # its own result missing: counted apart, in Check.unplaced
        before = {race.player: records[race.player]} if race.player in records else {}
        records[race.player] = score(before, places)[race.player]
    return records


@dataclass
class Check:
    """The standings against what the bots saw. A player's points by the rules are known only
    when its bot saw the end of every arena race it was in (none it joined went unseen, and it
    was paired into none after it had stopped waiting); for the other players ("partial") only
    their races are compared: none the bot saw end may be missing."""

    seen_races: int = 0  # arena races the bots saw end, summed over their players
    counted_races: int = 0  # races in the standings' lines
    expected_points: int = 0  # by the rules, for the places the bots saw
    points: int = 0  # in the standings' lines
    lost_races: int = 0  # races a bot saw end, missing from its line
    lost_points: int = 0  # points the rules give a player whose bot saw all, missing from its line
    #: Players whose bot saw all and whose line differs: (races, points) expected, found.
    differ: dict[str, tuple[tuple[int, int], tuple[int, int]]] = field(default_factory=dict)
    partial: int = 0  # players whose bot did not see every arena race of theirs end
    partial_extra: int = 0  # races the standings count for those beyond what their bots saw
    unplaced: int = 0  # races seen to end without the bot's own result
    #: When the bots saw end each arena race the standings never scored (monotonic), by race.
    unscored: list[float] = field(default_factory=list)
    waited: float = 0.0  # seconds until the standings matched (or the check gave up)


async def check_standings(
    storage: Storage, arena: str, races: list[RaceSeen], untracked: Iterable[str], wait: float = 30.0
) -> Check:
    """Compare the standings with :func:`expected_records` (``untracked``: players paired
    into races their bots did not follow), reading them again every half second until nothing
    is missing or ``wait`` seconds have passed (a race restored late is scored late)."""
    expected = expected_records(races)
    partial = set(untracked) | {r.player for r in races if r.kind == "arena" and r.over is None}
    store, started = ArenaStore(storage), time.monotonic()
    while True:
        count = await store.count(arena)
        found = {line.player: line.record for line in await store.top(arena, 1, max(1, count))}
        check = Check(
            seen_races=sum(r.races for r in expected.values()),
            counted_races=sum(r.races for r in found.values()),
            expected_points=sum(r.points for r in expected.values()),
            points=sum(r.points for r in found.values()),
            partial=len(partial),
            unplaced=sum(1 for r in races if r.in_arena and r.over is not None and r.place is None),
            waited=time.monotonic() - started,
        )
        scored = await scored_races(storage, arena)
        ended: defaultdict[tuple[str, int], float] = defaultdict(float)
        for race in races:
            if race.in_arena and race.over is not None:
                ended[(race.room, race.race)] = max(ended[(race.room, race.race)], race.over)
        check.unscored = sorted(over for key, over in ended.items() if key not in scored)
        for player in expected.keys() | found.keys():
            want, got = expected.get(player, Record("")), found.get(player, Record(""))
            check.lost_races += max(0, want.races - got.races)
            if player in partial:
                check.partial_extra += max(0, got.races - want.races)
            elif (want.races, want.points) != (got.races, got.points):
                check.differ[player] = ((want.races, want.points), (got.races, got.points))
                check.lost_points += max(0, want.points - got.points)
        if (not check.differ and not check.lost_races) or check.waited >= wait:
            return check
        await asyncio.sleep(0.5)


@dataclass(frozen=True, slots=True)
class KillCost:
    """The races in progress when the node was killed (joined, not yet seen to end), by room
    and race: how many, how many the bots saw end afterwards, how many of them arena races."""

    in_progress: int
    finished: int
    arena: int
    arena_finished: int


def kill_cost(races: Iterable[RaceSeen], killed: float) -> KillCost:
    caught: dict[tuple[str, int], list[RaceSeen]] = defaultdict(list)
    for race in races:
        if race.joined <= killed and (race.over is None or race.over > killed):
            caught[(race.room, race.race)].append(race)
    done = {key for key, seen in caught.items() if all(r.over is not None for r in seen)}
    arena = {key for key, seen in caught.items() if seen[0].kind == "arena"}
    return KillCost(len(caught), len(done), len(arena), len(arena & done))
