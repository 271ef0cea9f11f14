"""Boards, statistics and ratings stored by earlier versions are read after an upgrade."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from server.competition.ratings import Rating
from server.storage.boards import Leaderboards, Ranked
from server.storage.connection import Storage
from server.storage.migration import LAYOUT_VERSION, Dropped, Renamed, SplitRatings, migrate, planned
from server.storage.ratings import RatingStore, rating_text
from tests.nodes.conftest import redis_cluster

ANN = Rating(1612.5, 88.25, 0.0601)
BOB = Rating(1433.0, 120.5, 0.06)


def test_each_old_key_is_planned_to_its_new_name_and_new_keys_stay() -> None:
    assert planned("sr:", "sr:lb:antares:daily:2026-11-30") == Renamed("sr:lb:{antares}:daily:2026-11-30")
    assert planned("sr:", "sr:stats:scorpion:player:p1:days") == Renamed("sr:stats:{scorpion}:player:p1:days")
    assert planned("sr:", "sr:rating:antares:board") == Renamed("sr:rating:{antares}:board")
    assert planned("sr:", "sr:rating:antares") == SplitRatings("antares")
    assert planned("sr:", "sr:rating:{antares}") == SplitRatings("antares")
    assert planned("sr:", "sr:room:{ABCD}:race:2:log:3:times") == Dropped()
    for today in (
        "sr:lb:{antares}:daily:2026-11-30",
        "sr:stats:{scorpion}:best-time",
        "sr:rating:{antares}:board",
        "sr:rating:{antares}:player:p1",
        "sr:rating:{antares}:rated:ABCD:1",
        "sr:room:{ABCD}",
        "sr:room:{ABCD}:race:2:log:3",
        "sr:secret",
    ):
        assert planned("sr:", today) is None, today


async def _store_old_layout(store: Storage) -> None:
    """What the first version stored for one daily result of Ann's and two ratings."""
    redis, p = store.redis, store.prefix
    await redis.zadd(f"{p}lb:antares:best-time", {"ann": 61_000})
    await redis.zadd(f"{p}lb:antares:wins", {"ann": -1})
    await redis.hset(f"{p}stats:antares:player:ann", mapping={"daily_attempts": 1, "daily_wins": 1})
    await redis.zadd(f"{p}stats:antares:best-time", {"ann": 61_000})
    await redis.hset(f"{p}rating:antares", mapping={"ann": rating_text(ANN), "bob": rating_text(BOB)})
    await redis.zadd(f"{p}rating:antares:board", {"ann": -round(ANN.rating * 1000), "bob": -round(BOB.rating * 1000)})
    await redis.rpush(f"{p}room:{{ABCD}}:race:1:log:0:times", 1764800000000)  # the second layout's move times


async def _assert_read_in_new_layout(store: Storage) -> None:
    boards = Leaderboards(store)
    stats = await boards.stats("antares", "ann", "2026-12-02")
    assert (stats.daily_attempts, stats.daily_wins, stats.best_time_ms) == (1, 1, 61_000)
    assert await boards.top_all_time("antares", "wins", 5) == [Ranked(1, "ann", 1)]
    assert await boards.top_all_time("antares", "best-time", 5) == [Ranked(1, "ann", 61_000)]
    ratings = RatingStore(store)
    assert await ratings.rating("antares", "ann") == ANN
    assert await ratings.rating("antares", "bob") == BOB
    assert [entry.player for entry in await ratings.top("antares", 5)] == ["ann", "bob"]


@pytest.mark.asyncio
async def test_an_upgraded_server_reads_the_boards_stats_and_ratings_of_the_old_layout(store: Storage) -> None:
    await _store_old_layout(store)
    done = await migrate(store)
    assert (done.moved, done.ratings, done.dropped, done.kept) == (5, 2, 1, [])
    await _assert_read_in_new_layout(store)
    assert not await store.redis.exists(f"{store.prefix}room:{{ABCD}}:race:1:log:0:times")
    assert await store.redis.get(f"{store.prefix}layout") == str(LAYOUT_VERSION).encode()
    leftovers = [key async for key in store.redis.scan_iter(match=f"{store.prefix}*antares:*")]
    assert not [key for key in leftovers if b"{" not in key]
    # Later starts skip the scan.
    assert (await migrate(store)).skipped


@pytest.mark.asyncio
async def test_nodes_migrating_at_once_lose_nothing(store: Storage) -> None:
    await _store_old_layout(store)
    await asyncio.gather(*(migrate(store) for _ in range(3)))
    await _assert_read_in_new_layout(store)


@pytest.mark.asyncio
async def test_a_run_cut_short_is_finished_by_the_next(store: Storage) -> None:
    """A copy left beside its old key (the run stopped before the delete) is recognised."""
    await _store_old_layout(store)
    redis, p = store.redis, store.prefix
    dump = await redis.dump(f"{p}lb:antares:wins")
    assert isinstance(dump, bytes)
    await redis.restore(f"{p}lb:{{antares}}:wins", 0, dump)
    done = await migrate(store)
    assert done.kept == []
    assert not await redis.exists(f"{p}lb:antares:wins")
    await _assert_read_in_new_layout(store)


@pytest.mark.asyncio
async def test_data_written_since_under_the_new_name_is_never_overwritten(store: Storage) -> None:
    redis, p = store.redis, store.prefix
    await _store_old_layout(store)
    newer = Rating(1700.0, 60.0, 0.06)
    await redis.set(f"{p}rating:{{antares}}:player:ann", rating_text(newer))
    await redis.hset(f"{p}stats:{{antares}}:player:ann", mapping={"daily_attempts": 3, "daily_wins": 2})
    done = await migrate(store)
    assert sorted(done.kept) == [f"{p}rating:antares", f"{p}stats:antares:player:ann"]
    assert await RatingStore(store).rating("antares", "ann") == newer
    assert await RatingStore(store).rating("antares", "bob") == BOB
    assert (await Leaderboards(store).stats("antares", "ann", "2026-12-02")).daily_attempts == 3
    # The old keys stay for the operator, and the scan runs again at the next start.
    assert await redis.exists(f"{p}rating:antares", f"{p}stats:antares:player:ann") == 2
    assert await redis.get(f"{p}layout") is None


@pytest.mark.asyncio
async def test_the_old_layout_moves_on_a_redis_cluster_too(tmp_path: Path) -> None:
    """RESTORE to a name in another slot: the keys of the first version had no hash tags."""
    with redis_cluster(tmp_path) as url:
        store = await Storage.connect(url, prefix="sr:")
        try:
            await _store_old_layout(store)
            done = await migrate(store)
            assert (done.moved, done.ratings, done.kept) == (5, 2, [])
            await _assert_read_in_new_layout(store)
        finally:
            await store.close()
