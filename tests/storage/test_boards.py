"""Leaderboards, statistics and ratings against a real Redis: order, ties, windows, streaks."""

from __future__ import annotations

import random
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from redis.asyncio import Redis

from server.competition.ratings import Rating
from server.storage.boards import Entry, Leaderboards, Ranked, Stats
from server.storage.connection import Storage as Store
from server.storage.race_counts import RaceCounts, RaceResult
from server.storage.ratings import RatedEntry

pytestmark = pytest.mark.asyncio

DAY = "2026-03-14"


@pytest.fixture
def boards(store: Store) -> Leaderboards:
    return Leaderboards(store)


@pytest_asyncio.fixture
async def raw(redis_url: str) -> AsyncIterator[Redis]:
    """A plain client, to look at the keys the boards wrote."""
    client = Redis.from_url(redis_url, decode_responses=True)
    try:
        yield client
    finally:
        await client.aclose()


async def finish(boards: Leaderboards, player: str, time_ms: int, moves: int, date: str = DAY) -> bool:
    return await boards.record_daily("scorpion", date, player, player.title(), True, time_ms, moves, 52, 52)


async def give_up(boards: Leaderboards, player: str, home: int, ordered: int, moves: int) -> bool:
    return await boards.record_daily("scorpion", DAY, player, player.title(), False, None, moves, home, ordered)


async def order(boards: Leaderboards, date: str = DAY) -> list[str]:
    return [entry.player for entry in await boards.top("scorpion", date, 100)]


async def test_finishers_rank_by_time_then_moves_then_who_finished_first(boards: Leaderboards) -> None:
    await finish(boards, "ann", 60_000, 100)
    await finish(boards, "bob", 60_000, 90)
    await finish(boards, "cy", 60_000, 100)  # ties ann on time and moves, finished after her
    await finish(boards, "dee", 59_999, 400)
    assert await order(boards) == ["dee", "bob", "ann", "cy"]
    assert (await boards.top("scorpion", DAY, 1)) == [Entry(1, "dee", "Dee", True, 59_999, 400, 52)]


async def test_non_finishers_come_after_finishers_by_progress(boards: Leaderboards) -> None:
    await give_up(boards, "few-home", home=30, ordered=5, moves=200)
    await give_up(boards, "long-way", home=30, ordered=8, moves=300)
    await give_up(boards, "short-way", home=30, ordered=8, moves=250)
    await give_up(boards, "short-way-later", home=30, ordered=8, moves=250)
    await give_up(boards, "most-home", home=40, ordered=0, moves=999)
    await finish(boards, "slow-finisher", 3_600_000, 5_000)
    assert await order(boards) == [
        "slow-finisher",
        "most-home",
        "short-way",
        "short-way-later",
        "long-way",
        "few-home",
    ]
    entries = await boards.top("scorpion", DAY, 3)
    assert entries[1] == Entry(2, "most-home", "Most-Home", False, None, 999, 40)


async def test_the_order_is_exact_for_any_mix_of_ties(boards: Leaderboards) -> None:
    """Many entries with ties at every level, extreme values included, come out in exactly
    the order of the ranking rule (no float rounding: times near 10^12 ms differ by 1)."""
    rng = random.Random(6)
    expected = []
    for sequence in range(80):
        player = f"p{sequence}"
        moves = rng.choice([0, 1, 7, 999_999_999])
        if rng.random() < 0.5:
            time_ms = rng.choice([0, 1, 59_999, 60_000, 999_999_999_998, 999_999_999_999])
            await finish(boards, player, time_ms, moves)
            expected.append(((0, time_ms, moves, sequence, 0), player))
        else:
            home, ordered = rng.choice([0, 1, 52]), rng.choice([0, 9, 52])
            await give_up(boards, player, home, ordered, moves)
            expected.append(((1, -home, -ordered, moves, sequence), player))
    assert await order(boards) == [player for _, player in sorted(expected)]


async def test_a_player_has_one_ranked_attempt_per_board(boards: Leaderboards) -> None:
    assert await give_up(boards, "ann", home=3, ordered=4, moves=10)
    assert not await finish(boards, "ann", 1_000, 50)  # a better second try changes nothing
    assert await boards.top("scorpion", DAY, 5) == [Entry(1, "ann", "Ann", False, None, 10, 3)]
    # Other days and other games are boards of their own.
    assert await finish(boards, "ann", 1_000, 50, date="2026-03-15")
    assert await boards.record_daily("antares", DAY, "ann", "Ann", True, 2_000, 60, 52, 52)
    assert await boards.rank("antares", DAY, "ann") == 1


async def test_rank_and_around_at_the_edges(boards: Leaderboards) -> None:
    for i, player in enumerate(["a", "b", "c", "d", "e"]):
        await finish(boards, player, 10_000 + i, 100)
    assert [await boards.rank("scorpion", DAY, p) for p in "abcde"] == [1, 2, 3, 4, 5]
    assert await boards.rank("scorpion", DAY, "zed") is None
    assert await boards.rank("scorpion", "2026-03-13", "a") is None

    def ranks(entries: list[Entry]) -> list[tuple[int, str]]:
        return [(entry.rank, entry.player) for entry in entries]

    assert ranks(await boards.around("scorpion", DAY, "a", 1)) == [(1, "a"), (2, "b")]
    assert ranks(await boards.around("scorpion", DAY, "e", 2)) == [(3, "c"), (4, "d"), (5, "e")]
    assert ranks(await boards.around("scorpion", DAY, "c", 1)) == [(2, "b"), (3, "c"), (4, "d")]
    assert ranks(await boards.around("scorpion", DAY, "c", 0)) == [(3, "c")]
    assert ranks(await boards.around("scorpion", DAY, "b", 50)) == [(1, "a"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
    assert await boards.around("scorpion", DAY, "zed", 3) == []
    assert len(await boards.top("scorpion", DAY, 3)) == 3
    assert len(await boards.top("scorpion", DAY, 50)) == 5
    assert await boards.top("scorpion", DAY, 0) == []
    assert await boards.top("scorpion", "2026-01-01", 10) == []


async def test_the_encoding_is_the_documented_one(boards: Leaderboards, store: Store, raw: Redis) -> None:
    await finish(boards, "ann", 61_234, 105)
    await give_up(boards, "bob", home=12, ordered=34, moves=56)
    board = f"{store.prefix}lb:{{scorpion}}:daily:{DAY}"
    assert await raw.zrange(board, 0, -1, withscores=True) == [
        ("0:000000061234:000000105:000000000001:ann", 0.0),
        ("1:987:965:000000056:000000000002:bob", 0.0),
    ]
    assert await raw.hget(f"{board}:entry", "bob") == "1:987:965:000000056:000000000002:bob"


async def test_bad_entries_are_refused(boards: Leaderboards) -> None:
    with pytest.raises(ValueError):
        await boards.record_daily("scorpion", "2026-3-14", "ann", "Ann", True, 1, 1, 52, 52)
    with pytest.raises(ValueError):
        await boards.record_daily("scor:pion", DAY, "ann", "Ann", True, 1, 1, 52, 52)
    with pytest.raises(ValueError):
        await boards.record_daily("scorpion", DAY, "a:nn", "Ann", True, 1, 1, 52, 52)
    with pytest.raises(ValueError):
        await boards.record_daily("scorpion", DAY, "ann", "Ann", True, None, 1, 52, 52)
    with pytest.raises(ValueError):
        await boards.record_daily("scorpion", DAY, "ann", "Ann", True, 10**12, 1, 52, 52)
    with pytest.raises(ValueError):
        await boards.record_daily("scorpion", DAY, "ann", "Ann", False, None, -1, 5, 5)
    assert await boards.top("scorpion", DAY, 10) == []


async def test_statistics_of_races(boards: Leaderboards, store: Store) -> None:
    assert await boards.stats("scorpion", "ann", DAY) == Stats()
    for _ in range(3):
        await boards.races_started("scorpion", ["ann"])
    counts = RaceCounts(store)
    await counts.count("scorpion", "R:1", [RaceResult("ann", finished=True, won=True, time_ms=50_000)])
    await counts.count("scorpion", "R:2", [RaceResult("ann", finished=True, won=False, time_ms=40_000)])
    await counts.count("scorpion", "R:3", [RaceResult("ann", finished=False, won=False)])
    assert await boards.stats("scorpion", "ann", DAY) == Stats(
        races_started=3, races_won=1, races_finished=2, best_time_ms=40_000
    )
    assert await boards.stats("antares", "ann", DAY) == Stats()
    # A race of several racers counts for each of them.
    await boards.races_started("scorpion", ["ann", "bob"])
    assert (await boards.stats("scorpion", "ann", DAY)).races_started == 4
    assert (await boards.stats("scorpion", "bob", DAY)).races_started == 1
    # A faster daily attempt is the best time too.
    await boards.daily_result("scorpion", "ann", DAY, finished=True, time_ms=30_000)
    assert (await boards.stats("scorpion", "ann", DAY)).best_time_ms == 30_000


async def test_streaks_across_day_boundaries(boards: Leaderboards) -> None:
    async def daily(date: str, finished: bool = True) -> bool:
        return await boards.daily_result("scorpion", "ann", date, finished, 90_000 if finished else None)

    async def streaks(today: str) -> tuple[int, int]:
        stats = await boards.stats("scorpion", "ann", today)
        return stats.current_streak, stats.longest_streak

    assert await daily("2026-02-27")
    assert await daily("2026-02-28")
    assert await daily("2026-03-01")  # across a month end
    assert await streaks("2026-03-01") == (3, 3)
    assert not await daily("2026-03-01")  # the same day again: refused, nothing counted
    assert await streaks("2026-03-01") == (3, 3)
    assert await streaks("2026-03-02") == (3, 3)  # today not played yet: the streak lives on
    assert await streaks("2026-03-03") == (0, 3)  # yesterday went by without a win
    assert await daily("2026-03-03")  # a missed day: a new streak starts
    assert await streaks("2026-03-03") == (1, 3)
    assert await daily("2026-03-04", finished=False)  # an attempt that did not finish is no win
    assert await streaks("2026-03-04") == (1, 3)
    assert await streaks("2026-03-05") == (0, 3)
    stats = await boards.stats("scorpion", "ann", "2026-03-05")
    assert (stats.daily_attempts, stats.daily_wins, stats.last_daily_win) == (5, 4, "2026-03-03")


async def test_a_late_result_joins_its_run(boards: Leaderboards) -> None:
    """Yesterday's attempt finished after today's (it started before midnight)."""
    for date in ["2026-12-30", "2027-01-01", "2026-12-31"]:
        assert await boards.daily_result("scorpion", "ann", date, True, 1_000)
    assert await boards.stats("scorpion", "ann", "2027-01-01") == Stats(
        daily_attempts=3,
        daily_wins=3,
        best_time_ms=1_000,
        current_streak=3,
        longest_streak=3,
        last_daily_win="2027-01-01",
    )


async def test_all_time_boards(boards: Leaderboards) -> None:
    results: dict[str, list[tuple[str, int | None]]] = {
        "ann": [("2026-01-01", 70_000), ("2026-01-02", 65_000), ("2026-01-03", None)],
        "bob": [("2026-01-01", 65_000), ("2026-01-03", 80_000)],
        "cy": [("2026-01-01", 65_000), ("2026-01-02", 99_000), ("2026-01-03", 99_000), ("2026-01-04", 99_000)],
        "dee": [("2026-01-02", None)],
    }
    for player, days in results.items():
        for date, time_ms in days:
            await boards.daily_result("scorpion", player, date, time_ms is not None, time_ms)
    assert await boards.top_all_time("scorpion", "best-time", 10) == [
        Ranked(1, "ann", 65_000),  # equal best times: by player id
        Ranked(2, "bob", 65_000),
        Ranked(3, "cy", 65_000),
    ]
    assert await boards.top_all_time("scorpion", "wins", 2) == [Ranked(1, "cy", 4), Ranked(2, "ann", 2)]
    assert await boards.top_all_time("scorpion", "streak", 10) == [
        Ranked(1, "cy", 4),
        Ranked(2, "ann", 2),
        Ranked(3, "bob", 1),
    ]
    assert await boards.around_all_time("scorpion", "wins", "bob", 1) == [Ranked(2, "ann", 2), Ranked(3, "bob", 2)]
    assert await boards.around_all_time("scorpion", "wins", "dee", 1) == []
    assert await boards.top_all_time("antares", "wins", 10) == []
    with pytest.raises(ValueError):
        await boards.top_all_time("scorpion", "losses", 10)  # type: ignore[arg-type]  # the refusal is the test


async def test_ratings_round_trip_exactly(boards: Leaderboards) -> None:
    assert await boards.rating("scorpion", "ann") == Rating()
    odd = Rating(1500.1 + 1e-12, 0.1 + 0.2, 0.06000000000000001)
    await boards.set_ratings("scorpion", {"ann": odd, "bob": Rating(1400, 80)})
    assert await boards.rating("scorpion", "ann") == odd
    assert await boards.ratings("scorpion", ["bob", "nobody", "ann"]) == [Rating(1400, 80), Rating(), odd]
    assert await boards.rating("antares", "ann") == Rating()


async def test_the_rating_board_orders_by_rating(boards: Leaderboards) -> None:
    await boards.set_ratings(
        "scorpion",
        {"low": Rating(1200.0), "top": Rating(1900.25), "mid-b": Rating(1500.0004), "mid-a": Rating(1500.0001)},
    )
    # 1500.0001 and 1500.0004 both round to the same board score: ties go by player id.
    assert [(e.rank, e.player) for e in await boards.top_ratings("scorpion", 10)] == [
        (1, "top"),
        (2, "mid-a"),
        (3, "mid-b"),
        (4, "low"),
    ]
    top = (await boards.top_ratings("scorpion", 1))[0]
    assert top == RatedEntry(1, "top", Rating(1900.25))
    await boards.set_ratings("scorpion", {"top": Rating(1100.0)})  # a new rating moves them
    assert [e.player for e in await boards.top_ratings("scorpion", 10)] == ["mid-a", "mid-b", "low", "top"]
    assert [(e.rank, e.player) for e in await boards.around_ratings("scorpion", "top", 1)] == [(3, "low"), (4, "top")]
    assert await boards.around_ratings("scorpion", "nobody", 1) == []
