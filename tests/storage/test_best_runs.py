"""Best runs in a real Redis (server/storage/best_runs.py): one per player and deal, only a
faster run replaces it, even when two are saved at once; ranked fastest first."""

from __future__ import annotations

import asyncio

import pytest

from protocol.messages import RoomOptions
from server.rooms.ghost import GhostRun
from server.storage.best_runs import KEPT_DAYS, BestRun, BestRuns
from server.storage.connection import Storage

pytestmark = pytest.mark.asyncio


def won(player: str, time_ms: int) -> BestRun:
    run = GhostRun(name=player.title(), entries=["1>2"], at=[time_ms], ends=time_ms, finished_ms=time_ms)
    return BestRun(player=player, run=run, options=RoomOptions(max_racers=1, deal="617"))


async def test_only_a_faster_run_replaces_a_players_best(store: Storage) -> None:
    runs = BestRuns(store)
    assert await runs.save("antares", "617", won("ann", 90_000))
    assert not await runs.save("antares", "617", won("ann", 95_000))
    assert not await runs.save("antares", "617", won("ann", 90_000))  # a tie keeps the first
    assert await runs.save("antares", "617", won("ann", 80_000))
    assert await runs.best("antares", "617", "ann") == won("ann", 80_000)
    assert await runs.best("antares", "618", "ann") is None  # another deal
    assert await runs.best("scorpion", "617", "ann") is None  # another game


async def test_runs_saved_at_once_keep_the_fastest(store: Storage) -> None:
    runs = BestRuns(store)
    await asyncio.gather(*(runs.save("antares", "617", won("ann", t)) for t in (70_000, 50_000, 60_000)))
    best = await runs.best("antares", "617", "ann")
    assert best is not None
    assert best.run.finished_ms == 50_000


async def test_runs_are_ranked_fastest_first_and_expire_together(store: Storage) -> None:
    runs = BestRuns(store)
    for player, time_ms in (("ann", 90_000), ("bob", 60_000), ("cat", 75_000)):
        await runs.save("antares", "617", won(player, time_ms))
    assert [(await runs.ranked("antares", "617", r)) for r in (1, 2, 3)] == [
        won("bob", 60_000),
        won("cat", 75_000),
        won("ann", 90_000),
    ]
    assert await runs.ranked("antares", "617", 4) is None
    ttls = [await store.redis.ttl(key) for key in await store.redis.keys(f"{store.prefix}runs:*")]
    assert len(ttls) == 2
    assert all(KEPT_DAYS * 86_400 - 60 < ttl <= KEPT_DAYS * 86_400 for ttl in ttls)


async def test_a_run_that_did_not_win_is_no_best(store: Storage) -> None:
    lost = BestRun("ann", GhostRun(name="Ann", entries=[], at=[], ends=5), RoomOptions())
    with pytest.raises(ValueError, match="winning"):
        await BestRuns(store).save("antares", "617", lost)
