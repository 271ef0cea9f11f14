"""The same cases against the boards on a real Redis (:class:`Leaderboards`) and in memory
(tests/doubles/boards.py, what the unit tests of leaderboard requests run on): the daily
ranking and its ties, one entry a player, windows around a player, statistics and streaks,
the all-time, weekly and season boards, ratings, and the inputs both refuse. The double
cannot drift from Redis's behaviour without one of these failing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace
from typing import Protocol

import pytest

from server.competition.periods import parse_period
from server.competition.ratings import Rating
from server.storage.boards import Entry, Leaderboards, Ranked, Stats
from server.storage.boards_port import BoardsPort
from server.storage.connection import Storage
from server.storage.period_boards import Standing
from server.storage.ratings import RatedEntry
from tests.doubles.boards import MemoryBoards

pytestmark = pytest.mark.asyncio

GAME = "scorpion"
#: A Saturday of 2026-W11 (Monday 2026-03-09 to Sunday 2026-03-15), in 2026-Q1.
DAY = "2026-03-14"
WEEK = parse_period("weekly", "2026-W11")


class Boards(BoardsPort, Protocol):
    """The port, and the writes these cases fill the boards with."""

    async def record_daily(
        self,
        game: str,
        date: str,
        player: str,
        name: str,
        finished: bool,
        time_ms: int | None,
        moves: int,
        home: int,
        ordered: int,
        release: bool = False,
    ) -> bool: ...

    async def races_started(self, game: str, players: list[str]) -> None: ...

    async def daily_result(self, game: str, player: str, date: str, finished: bool, time_ms: int | None) -> bool: ...

    async def set_ratings(self, game: str, ratings: Mapping[str, Rating]) -> None: ...


@pytest.fixture(params=["memory", "redis"])
def boards(request: pytest.FixtureRequest, store: Storage) -> Boards:
    return MemoryBoards() if request.param == "memory" else Leaderboards(store)


async def finish(boards: Boards, player: str, time_ms: int, moves: int, date: str = DAY) -> bool:
    return await boards.record_daily(GAME, date, player, player.title(), True, time_ms, moves, 52, 52)


async def give_up(boards: Boards, player: str, home: int, ordered: int, moves: int) -> bool:
    # The time is ignored for an attempt that did not finish.
    return await boards.record_daily(GAME, DAY, player, player.title(), False, 1_000, moves, home, ordered)


async def daily_order(boards: Boards) -> list[tuple[int, str]]:
    return [(entry.rank, entry.player) for entry in await boards.top(GAME, DAY, 100)]


async def test_the_daily_board_ranks_finishers_by_time_moves_and_who_was_first_then_the_rest_by_progress(
    boards: Boards,
) -> None:
    await give_up(boards, "fewhome", home=30, ordered=5, moves=200)
    await finish(boards, "ann", 60_000, 100)
    await give_up(boards, "longway", home=30, ordered=8, moves=300)
    await finish(boards, "bob", 60_000, 90)
    await give_up(boards, "shortway", home=30, ordered=8, moves=250)
    await finish(boards, "cy", 60_000, 100)  # ties Ann on time and moves, recorded after her
    await give_up(boards, "later", home=30, ordered=8, moves=250)  # ties shortway, recorded after
    await give_up(boards, "mosthome", home=40, ordered=0, moves=999)
    await finish(boards, "dee", 59_999, 400)
    assert await daily_order(boards) == [
        (1, "dee"),
        (2, "bob"),
        (3, "ann"),
        (4, "cy"),
        (5, "mosthome"),
        (6, "shortway"),
        (7, "later"),
        (8, "longway"),
        (9, "fewhome"),
    ]
    assert await boards.top(GAME, DAY, 1) == [Entry(1, "dee", "Dee", True, 59_999, 400, 52)]
    assert (await boards.top(GAME, DAY, 5))[4] == Entry(5, "mosthome", "Mosthome", False, None, 999, 40)
    assert await boards.top(GAME, DAY, 0) == []
    assert await boards.top(GAME, "2026-03-15", 10) == []
    assert await boards.top("antares", DAY, 10) == []


async def test_a_player_has_one_entry_a_day_and_game(boards: Boards) -> None:
    assert await finish(boards, "ann", 60_000, 100)
    assert not await finish(boards, "ann", 30_000, 50)
    assert not await give_up(boards, "ann", home=52, ordered=52, moves=10)
    assert await boards.top(GAME, DAY, 10) == [Entry(1, "ann", "Ann", True, 60_000, 100, 52)]
    assert await finish(boards, "ann", 30_000, 50, date="2026-03-15")


async def test_the_entries_around_a_player_are_cut_at_the_ends_of_the_board(boards: Boards) -> None:
    for k, player in enumerate(["ann", "bob", "cy", "dee", "eve"]):
        await finish(boards, player, 60_000 + k, 100)

    async def around(player: str, span: int) -> list[tuple[int, str]]:
        return [(entry.rank, entry.player) for entry in await boards.around(GAME, DAY, player, span)]

    assert await around("cy", 1) == [(2, "bob"), (3, "cy"), (4, "dee")]
    assert await around("bob", 2) == [(1, "ann"), (2, "bob"), (3, "cy"), (4, "dee")]
    assert await around("eve", 1) == [(4, "dee"), (5, "eve")]
    assert await around("ann", 0) == [(1, "ann")]
    assert await around("ann", 10) == [(1, "ann"), (2, "bob"), (3, "cy"), (4, "dee"), (5, "eve")]
    assert await around("zed", 3) == []
    assert await boards.around(GAME, "2026-03-15", "ann", 3) == []


async def test_statistics_count_attempts_wins_the_best_time_and_streaks_late_results_included(boards: Boards) -> None:
    assert await boards.stats(GAME, "ann", DAY) == Stats()
    await boards.races_started(GAME, ["ann", "bob"])
    await boards.races_started(GAME, ["ann"])
    assert await boards.daily_result(GAME, "ann", "2026-03-09", True, 60_000)
    assert await boards.daily_result(GAME, "ann", "2026-03-10", True, 50_000)
    assert await boards.daily_result(GAME, "ann", "2026-03-12", True, 70_000)
    assert await boards.stats(GAME, "ann", "2026-03-12") == Stats(
        races_started=2,
        daily_attempts=3,
        daily_wins=3,
        best_time_ms=50_000,
        current_streak=1,
        longest_streak=2,
        last_daily_win="2026-03-12",
    )
    assert not await boards.daily_result(GAME, "ann", "2026-03-12", True, 10_000)  # one result a day
    assert await boards.daily_result(GAME, "ann", "2026-03-11", True, 80_000)  # late: joins its run
    assert await boards.daily_result(GAME, "ann", "2026-03-13", False, None)
    four_days = Stats(
        races_started=2,
        daily_attempts=5,
        daily_wins=4,
        best_time_ms=50_000,
        current_streak=4,
        longest_streak=4,
        last_daily_win="2026-03-12",
    )
    assert await boards.stats(GAME, "ann", "2026-03-13") == four_days
    # A day without a win went by: the run is over, the longest stays.
    assert await boards.stats(GAME, "ann", DAY) == replace(four_days, current_streak=0)
    assert await boards.stats(GAME, "bob", DAY) == Stats(races_started=1)
    assert await boards.stats("antares", "ann", DAY) == Stats()


async def test_the_all_time_boards_keep_the_best_time_the_wins_and_the_longest_streak(boards: Boards) -> None:
    for player, day, time_ms in [
        ("bob", "2026-03-09", 70_000),
        ("bob", "2026-03-10", 65_000),
        ("ann", "2026-03-09", 65_000),  # ties Bob's best: by player id
        ("ann", "2026-03-11", 90_000),
        ("cy", "2026-03-10", 40_000),
    ]:
        await boards.daily_result(GAME, player, day, True, time_ms)
    await boards.daily_result(GAME, "dee", "2026-03-10", False, None)  # no win: on no board
    assert await boards.top_all_time(GAME, "best-time", 10) == [
        Ranked(1, "cy", 40_000),
        Ranked(2, "ann", 65_000),
        Ranked(3, "bob", 65_000),
    ]
    assert await boards.top_all_time(GAME, "wins", 2) == [Ranked(1, "ann", 2), Ranked(2, "bob", 2)]
    assert await boards.top_all_time(GAME, "streak", 10) == [
        Ranked(1, "bob", 2),
        Ranked(2, "ann", 1),
        Ranked(3, "cy", 1),
    ]
    assert await boards.around_all_time(GAME, "wins", "cy", 1) == [Ranked(2, "bob", 2), Ranked(3, "cy", 1)]
    assert await boards.around_all_time(GAME, "best-time", "ann", 0) == [Ranked(2, "ann", 65_000)]
    assert await boards.around_all_time(GAME, "wins", "dee", 5) == []
    assert await boards.top_all_time(GAME, "wins", 0) == []


async def test_a_weeks_board_ranks_by_wins_then_total_time(boards: Boards) -> None:
    for player, day, time_ms in [
        ("ann", "2026-03-09", 60_000),
        ("ann", "2026-03-10", 60_000),
        ("bob", "2026-03-09", 50_000),
        ("bob", "2026-03-11", 50_000),
        ("cy", "2026-03-10", 100_000),
        ("dee", "2026-03-12", 100_000),  # ties Cy: by player id
        ("eve", "2026-03-16", 1_000),  # the next week
    ]:
        await boards.daily_result(GAME, player, day, True, time_ms)
    await boards.daily_result(GAME, "fay", "2026-03-12", False, None)
    assert await boards.periods.top(GAME, WEEK, 10) == [
        Standing(1, "bob", 2, 100_000),
        Standing(2, "ann", 2, 120_000),
        Standing(3, "cy", 1, 100_000),
        Standing(4, "dee", 1, 100_000),
    ]
    assert await boards.periods.around(GAME, WEEK, "cy", 1) == [
        Standing(2, "ann", 2, 120_000),
        Standing(3, "cy", 1, 100_000),
        Standing(4, "dee", 1, 100_000),
    ]
    assert await boards.periods.around(GAME, WEEK, "fay", 1) == []
    season = await boards.periods.top(GAME, parse_period("season", "2026-Q1"), 2)
    assert season == [Standing(1, "bob", 2, 100_000), Standing(2, "ann", 2, 120_000)]
    assert await boards.periods.top(GAME, parse_period("weekly", "2026-W12"), 10) == [Standing(1, "eve", 1, 1_000)]
    assert await boards.periods.top(GAME, WEEK, 0) == []


async def test_the_rating_board_ranks_the_highest_first_ties_by_player_id(boards: Boards) -> None:
    assert await boards.rating(GAME, "ann") == Rating()
    assert await boards.top_ratings(GAME, 10) == []
    ratings = {"cy": Rating(1600.0, 80.0), "ann": Rating(1712.25, 60.0), "bob": Rating(1600.0, 90.0)}
    await boards.set_ratings(GAME, ratings)
    assert await boards.rating(GAME, "ann") == Rating(1712.25, 60.0)
    assert await boards.top_ratings(GAME, 10) == [
        RatedEntry(1, "ann", ratings["ann"]),
        RatedEntry(2, "bob", ratings["bob"]),
        RatedEntry(3, "cy", ratings["cy"]),
    ]
    assert await boards.around_ratings(GAME, "cy", 1) == [
        RatedEntry(2, "bob", ratings["bob"]),
        RatedEntry(3, "cy", ratings["cy"]),
    ]
    assert await boards.around_ratings(GAME, "dee", 1) == []
    assert await boards.top_ratings("antares", 10) == []
    assert await boards.top_ratings(GAME, 0) == []


async def test_both_refuse_what_could_not_be_a_key_or_a_count(boards: Boards) -> None:
    refused = [
        boards.top(GAME, DAY, -1),
        boards.top("a:b", DAY, 1),
        boards.top(GAME, "2026-02-30", 1),
        boards.top(GAME, "2026-3-1", 1),
        boards.around(GAME, DAY, "ann", -1),
        boards.record_daily(GAME, DAY, "a:b", "A", True, 1_000, 1, 52, 52),
        boards.record_daily(GAME, DAY, "ann", "Ann", True, None, 1, 52, 52),
        boards.record_daily(GAME, DAY, "ann", "Ann", False, None, 1, 1_000, 0),
        boards.daily_result(GAME, "ann", "2026-13-01", True, 1_000),
        boards.stats(GAME, "", DAY),
        boards.top_all_time(GAME, "losses", 1),  # type: ignore[arg-type]  # no such board
        boards.around_all_time(GAME, "wins", "a{b", 1),
        boards.periods.around(GAME, WEEK, "ann", -1),
        boards.rating(GAME, "a}b"),
        boards.top_ratings(GAME, -1),
    ]
    for call in refused:
        with pytest.raises(ValueError):
            await call
    assert await boards.top(GAME, DAY, 10) == []
    assert await boards.stats(GAME, "ann", DAY) == Stats()
