"""A race's results in its racers' statistics, counted once however often recorded."""

from __future__ import annotations

import pytest

from server.storage.boards import Leaderboards, Stats
from server.storage.connection import Storage
from server.storage.race_counts import RaceCounts, RaceResult

DAY = "2026-03-14"


@pytest.mark.asyncio
async def test_a_race_counts_for_each_racer_once(store: Storage) -> None:
    counts, boards = RaceCounts(store), Leaderboards(store)
    results = [RaceResult("ann", True, True, 50_000), RaceResult("bob", False, False)]
    assert await counts.count("scorpion", "ROOM:1", results)
    assert not await counts.count("scorpion", "ROOM:1", results)  # recorded again: no change
    assert await counts.count("scorpion", "ROOM:2", [RaceResult("ann", True, False, 40_000)])
    assert await boards.stats("scorpion", "ann", DAY) == Stats(races_won=1, races_finished=2, best_time_ms=40_000)
    assert await boards.stats("scorpion", "bob", DAY) == Stats()
    assert await boards.stats("antares", "ann", DAY) == Stats()


@pytest.mark.asyncio
async def test_a_slower_race_keeps_the_best_time(store: Storage) -> None:
    counts, boards = RaceCounts(store), Leaderboards(store)
    await counts.count("scorpion", "ROOM:1", [RaceResult("ann", True, True, 40_000)])
    await counts.count("scorpion", "ROOM:2", [RaceResult("ann", True, True, 60_000)])
    assert (await boards.stats("scorpion", "ann", DAY)).best_time_ms == 40_000


def test_a_finish_needs_its_time() -> None:
    with pytest.raises(ValueError):
        RaceResult("ann", True, True)
    with pytest.raises(ValueError):
        RaceResult("ann", True, True, 10**12)
