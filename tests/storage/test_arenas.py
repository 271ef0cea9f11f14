"""Arenas in a real Redis (server/storage/arenas.py): a race is scored once however often
its recording is retried, races scored at once lose no points, the standings rank by points
then who reached them first, and show who is racing where."""

from __future__ import annotations

import asyncio

import pytest

from server.competition.arena import Arena, Record
from server.storage.arenas import ArenaStore
from server.storage.connection import Storage

pytestmark = pytest.mark.asyncio

T0 = 1_800_000_000_000
ARENA = Arena("AR", "scorpion", "Hourly", T0, T0 + 30 * 60_000)


async def test_a_race_is_scored_once_however_often_it_is_recorded(store: Storage) -> None:
    arenas = ArenaStore(store)
    await arenas.create(ARENA, T0)
    race = [("ann", "Ann", 1), ("bob", "Bob", 2)]
    scored = await asyncio.gather(*(arenas.score_race(ARENA, "ROOM", 1, race, T0 + 1000) for _ in range(5)))
    assert sorted(scored) == [False] * 4 + [True]
    [ann, bob] = await arenas.top("AR", 1, 10)
    assert (ann.player, ann.record, ann.rank) == ("ann", Record("Ann", 2, 1, 1, 1), 1)
    assert (bob.player, bob.record.points, bob.rank) == ("bob", 0, 2)


async def test_races_scored_at_once_lose_no_points(store: Storage) -> None:
    arenas = ArenaStore(store)
    await arenas.create(ARENA, T0)
    races = [arenas.score_race(ARENA, f"R{n}", 1, [("ann", "Ann", 1), (f"p{n}", "P", 2)], T0 + n) for n in range(8)]
    await asyncio.gather(*races)
    [ann] = [s for s in await arenas.top("AR", 1, 20) if s.player == "ann"]
    assert (ann.record.races, ann.record.wins) == (8, 8)
    assert ann.record.points == 2 + 2 + 6 * 4  # a streak from the third win on


async def test_standings_break_ties_by_who_reached_the_points_first_and_show_live_races(store: Storage) -> None:
    arenas = ArenaStore(store)
    await arenas.create(ARENA, T0)
    await arenas.score_race(ARENA, "LATE", 1, [("bob", "Bob", 1), ("cat", "Cat", 2)], T0 + 60_000)
    await arenas.score_race(ARENA, "EARLY", 1, [("ann", "Ann", 1), ("dan", "Dan", 2)], T0 + 5_000)
    await arenas.playing(ARENA, [("bob", "Bob"), ("cat", "Cat"), ("eve", "Eve")], "NEXT", T0 + 70_000)
    lines = await arenas.top("AR", 1, 2)
    assert [(s.player, s.room) for s in lines] == [("ann", None), ("bob", "NEXT")]
    assert await arenas.rank("AR", "bob") == 2
    assert await arenas.rank("AR", "eve") == 5  # racing her first race: on the standings, no points
    assert await arenas.rank("AR", "fay") is None
    assert await arenas.count("AR") == 5
    await arenas.score_race(ARENA, "NEXT", 1, [("bob", "Bob", 2), ("cat", "Cat", 1)], T0 + 90_000)
    assert [s.room for s in await arenas.top("AR", 1, 4)] == [None] * 4  # done racing
    assert [s.room for s in await arenas.top("AR", 5, 1)] == ["NEXT"]  # Eve still races
    await arenas.score_race(ARENA, "EARLIER", 1, [("eve", "Eve", 1), ("fay", "Fay", 2)], T0 + 95_000)
    assert await arenas.racing_in("AR", "eve") == "NEXT"  # an earlier race ending leaves her newer one noted


async def test_arenas_are_listed_from_a_time_on_and_unknown_ones_are_none(store: Storage) -> None:
    arenas = ArenaStore(store)
    later = Arena("LATER", "antares", "Later", T0 + 3_600_000, T0 + 5_400_000)
    await arenas.create(later, T0)
    await arenas.create(ARENA, T0)
    assert [a.id for a in await arenas.recent(T0)] == ["AR", "LATER"]
    assert [a.id for a in await arenas.recent(T0 + 1)] == ["LATER"]
    assert await arenas.get("NONE") is None
