"""Weekly and season boards against a real Redis (and a Redis Cluster): fed by ranked daily
results, more wins first and then the lower total time, each result counted once however
often it is retried, a new week's board empty, a season spanning its quarter."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from server.competition.periods import KEPT_SECONDS, WIN_WEIGHT, Period, PeriodBoard, parse_period, period_of
from server.storage.boards import Leaderboards
from server.storage.connection import Storage
from server.storage.held import Held, HeldEntries, Released
from server.storage.period_boards import Standing
from tests.in_process_server import fresh_prefix

pytestmark = pytest.mark.asyncio

#: 2026-W11 runs from Monday 2026-03-09 to Sunday 2026-03-15, in 2026-Q1.
MONDAY, TUESDAY, WEDNESDAY, THURSDAY, SUNDAY = "2026-03-09", "2026-03-10", "2026-03-11", "2026-03-12", "2026-03-15"
WEEK = parse_period("weekly", "2026-W11")


@pytest.fixture
def boards(store: Storage) -> Leaderboards:
    return Leaderboards(store)


@pytest_asyncio.fixture
async def on_either(redis_or_cluster: str) -> AsyncIterator[Leaderboards]:
    """Boards on the session's Redis, or on the session's Redis Cluster."""
    storage = await Storage.connect(redis_or_cluster, prefix=fresh_prefix())
    try:
        yield Leaderboards(storage)
    finally:
        await storage.close()


async def win(boards: Leaderboards, player: str, date: str, time_ms: int) -> bool:
    return await boards.daily_result("scorpion", player, date, True, time_ms)


async def board(boards: Leaderboards, period: Period, game: str = "scorpion") -> list[Standing]:
    return await boards.periods.top(game, period, 100)


def of(kind: PeriodBoard, date: str) -> Period:
    return period_of(kind, date)


async def test_two_wins_in_a_week_rank_above_one(boards: Leaderboards) -> None:
    await win(boards, "ann", MONDAY, 60_000)
    await win(boards, "ann", TUESDAY, 70_000)
    await win(boards, "bob", MONDAY, 10_000)  # the fastest, but one win
    await win(boards, "cy", WEDNESDAY, 50_000)
    await win(boards, "cy", THURSDAY, 90_000)  # two wins, a longer total than Ann's
    await boards.daily_result("scorpion", "dee", MONDAY, False, None)  # no win: not on the board
    await win(boards, "eve", SUNDAY, 10_000)  # Bob's figures exactly: after him, by player id
    expected = [
        Standing(1, "ann", 2, 130_000),
        Standing(2, "cy", 2, 140_000),
        Standing(3, "bob", 1, 10_000),
        Standing(4, "eve", 1, 10_000),
    ]
    assert await board(boards, WEEK) == expected
    assert await board(boards, of("season", MONDAY)) == expected
    assert await boards.periods.top("scorpion", WEEK, 2) == expected[:2]
    assert await boards.periods.top("scorpion", WEEK, 0) == []
    assert await boards.periods.around("scorpion", WEEK, "bob", 1) == expected[1:4]
    assert await boards.periods.around("scorpion", WEEK, "ann", 1) == expected[:2]
    assert await boards.periods.around("scorpion", WEEK, "dee", 1) == []
    assert await board(boards, WEEK, game="antares") == []


async def test_a_retried_result_does_not_count_twice(on_either: Leaderboards) -> None:
    boards = on_either
    assert await win(boards, "ann", MONDAY, 60_000)
    assert not await win(boards, "ann", MONDAY, 60_000)  # the same result again
    assert not await win(boards, "ann", MONDAY, 1_000)  # a second result of the day
    # The same result sent at once many times (a retry racing the first try): counted once.
    recorded = await asyncio.gather(*(win(boards, "ann", TUESDAY, 30_000) for _ in range(6)))
    assert sorted(recorded) == [False] * 5 + [True]
    assert await board(boards, WEEK) == [Standing(1, "ann", 2, 90_000)]
    assert await board(boards, of("season", MONDAY)) == [Standing(1, "ann", 2, 90_000)]
    assert (await boards.stats("scorpion", "ann", TUESDAY)).daily_wins == 2


async def test_a_day_in_a_new_week_starts_an_empty_weekly_board(boards: Leaderboards) -> None:
    await win(boards, "ann", SUNDAY, 60_000)
    next_week = WEEK.next()
    assert next_week is not None
    assert next_week.name == "2026-W12"
    assert await board(boards, next_week) == []
    await win(boards, "bob", "2026-03-16", 80_000)  # Monday: the new week
    assert await board(boards, next_week) == [Standing(1, "bob", 1, 80_000)]
    assert await board(boards, WEEK) == [Standing(1, "ann", 1, 60_000)]  # the past week as it was
    # The season goes on across the weeks.
    assert await board(boards, of("season", SUNDAY)) == [Standing(1, "ann", 1, 60_000), Standing(2, "bob", 1, 80_000)]


async def test_the_season_spans_its_quarter(boards: Leaderboards) -> None:
    for day, time_ms in [("2025-12-31", 1_000), ("2026-01-01", 2_000), ("2026-03-31", 3_000), ("2026-04-01", 4_000)]:
        await win(boards, "ann", day, time_ms)
    assert await board(boards, parse_period("season", "2025-Q4")) == [Standing(1, "ann", 1, 1_000)]
    assert await board(boards, parse_period("season", "2026-Q1")) == [Standing(1, "ann", 2, 5_000)]
    assert await board(boards, parse_period("season", "2026-Q2")) == [Standing(1, "ann", 1, 4_000)]
    # 2026-W01 runs from 2025-12-29 to 2026-01-04: one week across two seasons.
    assert await board(boards, parse_period("weekly", "2026-W01")) == [Standing(1, "ann", 2, 3_000)]


async def test_the_keys_are_the_documented_ones_and_expire(boards: Leaderboards, store: Storage) -> None:
    await win(boards, "ann", MONDAY, 61_234)
    redis = store.redis
    boards_of_the_day: list[tuple[PeriodBoard, str]] = [("weekly", "2026-W11"), ("season", "2026-Q1")]
    for kind, name in boards_of_the_day:
        key = f"{store.prefix}lb:{{scorpion}}:{kind}:{name}"
        assert await redis.zscore(key, "ann") == -WIN_WEIGHT + 61_234
        assert 0 < await redis.ttl(key) <= KEPT_SECONDS[kind]
    # The all-time boards do not expire.
    assert await redis.ttl(f"{store.prefix}lb:{{scorpion}}:wins") == -1


async def test_a_held_win_counts_once_it_is_released(store: Storage) -> None:
    held = HeldEntries(store)
    assert await held.hold("scorpion", MONDAY, "ann", Held("Ann", True, 90_000, 80, 52, 0, held=1))
    assert await board(held, WEEK) == []
    assert await held.release("scorpion", MONDAY, "ann") is Released.RELEASED
    assert await held.release("scorpion", MONDAY, "ann") is Released.NOT_HELD
    assert await board(held, WEEK) == [Standing(1, "ann", 1, 90_000)]
