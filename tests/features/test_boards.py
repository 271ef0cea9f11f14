"""Leaderboard and statistics requests.

Against a real server, what shows on the wire: a day, week or season that does not exist and a
player id that could not be one are refused with ``invalid-message``, and the connection goes
on to be served. On boards in memory (tests/doubles/boards.py, held to Redis's behaviour by
tests/storage/test_boards_contract.py), what a player is answered: each board's entries, ranks
and figures, their own line as ``me``, the period a weekly or season board shows, statistics,
and ``storage-unavailable`` while storage is down."""

from __future__ import annotations

from functools import partial
from typing import Any, Final

import pytest

from protocol.errors import ErrorCode
from protocol.messages import (
    AskLeaderboard,
    AskStats,
    BoardPeriod,
    Error,
    Leaderboard,
    LeaderboardEntry,
    LeaderboardName,
    PlayerStats,
    ServerMessage,
)
from server.competition.periods import period_of
from server.competition.ratings import Rating
from server.features.boards import send_leaderboard, send_stats
from server.features.daily import today
from server.net.dispatch import FAILURES, answer_failure
from tests.doubles.boards import MemoryBoards
from tests.doubles.sinks import listening_link
from tests.end_to_end.conftest import RunningServer

pytestmark = pytest.mark.asyncio

GAME: Final = "scorpion"
DAY: Final = "2026-03-14"
#: The players' names, as the player store would answer them (an id not here has none).
NAMES: Final = {"ann1": "Ann", "bob2": "Bob", "cy3": "Cy", "dee4": "Dee", "eve5": "Eve"}


async def test_a_daily_board_of_a_day_that_does_not_exist_is_refused(server: RunningServer) -> None:
    ann = await server.raw("Ann")
    refused = await ann.error(await ann.send(partial(AskLeaderboard, variant="scorpion", date="2026-02-30")))
    assert refused.code == "invalid-message"
    assert refused.message == "2026-02-30 is not a day"
    board = await ann.request(partial(AskLeaderboard, variant="scorpion", date="2026-02-28"))
    assert isinstance(board, Leaderboard)
    assert (board.date, board.entries, board.me) == ("2026-02-28", [], None)


async def test_statistics_of_a_player_id_that_could_not_be_one_are_refused(server: RunningServer) -> None:
    ann = await server.raw("Ann")
    refused = await ann.error(await ann.send(partial(AskStats, variant="antares", player="ann:*")))
    assert refused.code == "invalid-message"
    mine = await ann.request(partial(AskStats, variant="antares"))
    assert isinstance(mine, PlayerStats)
    assert (mine.name, mine.races_started, mine.rating) == ("Ann", 0, 1500)


async def test_a_week_or_season_that_does_not_exist_is_refused(server: RunningServer) -> None:
    ann = await server.raw("Ann")
    refusals: list[tuple[LeaderboardName, str, str]] = [
        ("weekly", "2027-W53", "2027-W53 is not a week"),  # 2027 has 52 weeks
        ("weekly", "2026-Q1", "2026-Q1 is not a week"),
        ("season", "2026-Q5", "2026-Q5 is not a season"),
    ]
    for board, period, message in refusals:
        refused = await ann.error(
            await ann.send(partial(AskLeaderboard, variant="scorpion", board=board, period=period))
        )
        assert (refused.code, refused.message) == ("invalid-message", message)
    malformed = await ann.error(
        await ann.send(partial(AskLeaderboard, variant="scorpion", board="weekly", period="2026-49"))
    )
    assert malformed.code == "invalid-message"
    shown = await ann.request(partial(AskLeaderboard, variant="scorpion", board="weekly", period="2026-W53"))
    assert isinstance(shown, Leaderboard)
    assert shown.period == BoardPeriod("2026-W53", "2026-12-28", "2027-01-03", "2026-W52", "2027-W01")


# -- on boards in memory --------------------------------------------------------------------


async def name_of(player: str) -> str | None:
    return NAMES.get(player)


async def ask(boards: MemoryBoards, message: AskLeaderboard | AskStats, player: str = "ann1") -> ServerMessage:
    """What ``player`` is sent for ``message``: its answer, or the error frame the dispatcher
    makes of what failed it."""
    link, sink = listening_link(player, NAMES.get(player, ""))
    try:
        if isinstance(message, AskLeaderboard):
            await send_leaderboard(boards, name_of, link, message)
        else:
            await send_stats(boards, name_of, link, message)
    except FAILURES as error:
        answer_failure(link, request_id=message.id, error=error)
    [answer] = sink.received
    return answer


async def board(boards: MemoryBoards, player: str = "ann1", **asked: Any) -> Leaderboard:
    answer = await ask(boards, AskLeaderboard(id=7, variant=GAME, **asked), player)
    assert isinstance(answer, Leaderboard), answer
    assert answer.id == 7
    return answer


async def stats(boards: MemoryBoards, player: str = "ann1", of: str | None = None) -> PlayerStats:
    answer = await ask(boards, AskStats(id=8, variant=GAME, player=of), player)
    assert isinstance(answer, PlayerStats), answer
    return answer


def finisher(rank: int, player: str, time_ms: int, moves: int) -> LeaderboardEntry:
    return LeaderboardEntry(rank, player, NAMES[player], time_ms, finished=True, moves=moves, home=52)


async def test_a_daily_board_shows_times_then_progress_and_the_askers_own_line() -> None:
    boards = MemoryBoards()
    await boards.record_daily(GAME, DAY, "bob2", "Bob", True, 75_000, 120, 52, 52)
    await boards.record_daily(GAME, DAY, "ann1", "Ann", False, None, 300, 30, 12)
    await boards.record_daily(GAME, DAY, "cy3", "Cy", True, 61_000, 140, 52, 52)
    shown = await board(boards, date=DAY)
    ann = LeaderboardEntry(3, "ann1", "Ann", 30, finished=False, moves=300, home=30)  # her cards home
    cy, bob = finisher(1, "cy3", 61_000, 140), finisher(2, "bob2", 75_000, 120)
    assert (shown.board, shown.date, shown.entries, shown.me, shown.period) == ("daily", DAY, [cy, bob, ann], ann, None)
    top = await board(boards, date=DAY, limit=2)
    assert (top.entries, top.me) == ([cy, bob], None)  # Ann is not among them
    assert (await board(boards, date="2026-03-13")).entries == []


async def test_around_a_player_shows_half_the_limit_either_side() -> None:
    boards = MemoryBoards()
    for k, player in enumerate(NAMES):
        await boards.record_daily(GAME, DAY, player, NAMES[player], True, 60_000 + k, 100, 52, 52)
    lines = [finisher(k + 1, player, 60_000 + k, 100) for k, player in enumerate(NAMES)]
    mine = await board(boards, "cy3", date=DAY, limit=3, around=True)
    assert (mine.entries, mine.me) == (lines[1:4], lines[2])
    first = await board(boards, "ann1", date=DAY, limit=5, around=True)
    assert (first.entries, first.me) == (lines[:3], lines[0])
    stranger = await board(boards, "zed9", date=DAY, around=True)
    assert (stranger.entries, stranger.me) == ([], None)


async def test_a_daily_board_is_todays_unless_a_day_is_asked() -> None:
    boards = MemoryBoards()
    day = today()
    await boards.record_daily(GAME, day, "bob2", "Bob", True, 75_000, 120, 52, 52)
    shown = await board(boards)
    assert (shown.date, shown.entries) == (day, [finisher(1, "bob2", 75_000, 120)])


async def test_a_weekly_board_shows_this_weeks_wins_and_names_the_week() -> None:
    boards = MemoryBoards()
    day = today()
    week, season = period_of("weekly", day), period_of("season", day)
    await boards.daily_result(GAME, "bob2", day, True, 75_000)
    await boards.daily_result(GAME, "ann1", day, False, None)  # no win: not on it

    this_week = await board(boards, "bob2", board="weekly")
    bobs = LeaderboardEntry(rank=1, player="bob2", name="Bob", value=1, total_time_ms=75_000)
    assert (this_week.board, this_week.entries, this_week.me, this_week.date) == ("weekly", [bobs], bobs, None)
    assert this_week.period is not None
    assert (this_week.period.name, this_week.period.first_day) == (week.name, week.first_day.isoformat())
    around = await board(boards, "bob2", board="season", around=True)
    assert around.entries == [bobs]
    assert around.period is not None
    assert around.period.name == season.name
    # Ann did not win: the week is empty around her; the week before has nobody yet.
    hers = await board(boards, "ann1", board="weekly", around=True)
    assert (hers.entries, hers.me) == ([], None)
    before = await board(boards, board="weekly", period=this_week.period.previous)
    assert before.entries == []
    assert before.period is not None
    assert before.period.next == week.name


async def test_the_all_time_and_rating_boards_show_names_and_figures() -> None:
    boards = MemoryBoards()
    for player, day, time_ms in [
        ("ann1", "2026-03-09", 70_000),
        ("ann1", "2026-03-10", 65_000),
        ("bob2", "2026-03-09", 50_000),
        ("gone9", "2026-03-11", 90_000),  # no name known: shown as "?"
    ]:
        await boards.daily_result(GAME, player, day, True, time_ms)
    wins = await board(boards, board="wins")
    assert wins.entries == [
        LeaderboardEntry(1, "ann1", "Ann", 2),
        LeaderboardEntry(2, "bob2", "Bob", 1),
        LeaderboardEntry(3, "gone9", "?", 1),
    ]
    assert wins.me == wins.entries[0]
    assert (await board(boards, board="streak", limit=1)).entries == [LeaderboardEntry(1, "ann1", "Ann", 2)]
    fastest = await board(boards, "bob2", board="best-time", limit=1, around=True)
    bobs = LeaderboardEntry(1, "bob2", "Bob", 50_000)
    assert (fastest.entries, fastest.me) == ([bobs], bobs)
    await boards.set_ratings(GAME, {"ann1": Rating(1650.5, 70.0), "bob2": Rating(1720.0, 50.0)})
    rated = await board(boards, board="rating")
    ann = LeaderboardEntry(2, "ann1", "Ann", 1650.5)
    assert (rated.entries, rated.me) == ([LeaderboardEntry(1, "bob2", "Bob", 1720.0), ann], ann)
    assert (await board(boards, "cy3", board="rating", around=True)).entries == []  # Cy has no rating


async def test_statistics_show_the_counts_the_streaks_and_the_rating() -> None:
    boards = MemoryBoards()
    await boards.races_started(GAME, ["ann1", "bob2"])
    await boards.daily_result(GAME, "ann1", "2026-03-09", True, 60_000)
    await boards.daily_result(GAME, "ann1", "2026-03-10", True, 50_000)
    await boards.daily_result(GAME, "ann1", "2026-03-11", False, None)
    await boards.set_ratings(GAME, {"ann1": Rating(1650.5, 70.0)})
    ann = PlayerStats(
        id=8,
        variant=GAME,
        player="ann1",
        name="Ann",
        races_started=1,
        races_won=0,
        races_finished=0,
        daily_attempts=3,
        daily_wins=2,
        best_time_ms=50_000,
        current_streak=0,  # her last win is long past
        longest_streak=2,
        rating=1650.5,
        rating_deviation=70.0,
    )
    assert await stats(boards) == ann
    assert await stats(boards, "bob2", of="ann1") == ann
    bob = await stats(boards, "ann1", of="bob2")
    assert (bob.name, bob.races_started, bob.daily_attempts, bob.best_time_ms) == ("Bob", 1, 0, None)
    assert (bob.rating, bob.rating_deviation) == (Rating().rating, Rating().rd)
    assert (await stats(boards, of="zed9")).name == "?"


async def test_while_storage_is_down_requests_are_answered_storage_unavailable() -> None:
    boards = MemoryBoards()
    await boards.record_daily(GAME, DAY, "ann1", "Ann", True, 60_000, 90, 52, 52)
    boards.go_down()
    asked: list[AskLeaderboard | AskStats] = [
        AskLeaderboard(id=1, variant=GAME, date=DAY),
        AskLeaderboard(id=2, variant=GAME, date=DAY, around=True),
        AskLeaderboard(id=3, variant=GAME, board="weekly"),
        AskLeaderboard(id=4, variant=GAME, board="wins"),
        AskLeaderboard(id=5, variant=GAME, board="rating", around=True),
        AskStats(id=6, variant=GAME),
    ]
    for message in asked:
        answer = await ask(boards, message)
        assert isinstance(answer, Error), answer
        assert (answer.code, answer.id) == (ErrorCode.STORAGE_UNAVAILABLE, message.id)
    boards.come_back()
    assert (await board(boards, date=DAY)).entries == [finisher(1, "ann1", 60_000, 90)]
