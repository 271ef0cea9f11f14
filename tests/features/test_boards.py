"""Leaderboard and statistics requests against a real server: a day, week or season that does
not exist and a player id that could not be one are refused with ``invalid-message``, and the
connection goes on to be served; a weekly or season board names the period it shows."""

from __future__ import annotations

from functools import partial

import pytest

from protocol.messages import (
    AskLeaderboard,
    AskStats,
    BoardPeriod,
    Leaderboard,
    LeaderboardEntry,
    LeaderboardName,
    PlayerStats,
)
from server.competition.periods import period_of
from server.features.daily import today
from tests.end_to_end.conftest import RunningServer

pytestmark = pytest.mark.asyncio


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


async def test_a_weekly_board_shows_this_weeks_wins_and_names_the_week(server: RunningServer) -> None:
    ann, bob = await server.raw(), await server.raw()
    players = [(await ann.hello("Ann")).player, (await bob.hello("Bob")).player]
    day = today()
    week, season = period_of("weekly", day), period_of("season", day)
    await server.hub.boards.daily_result("antares", players[1], day, True, 75_000)
    await server.hub.boards.daily_result("antares", players[0], day, False, None)  # no win: not on it

    this_week = await bob.request(partial(AskLeaderboard, variant="antares", board="weekly"))
    assert isinstance(this_week, Leaderboard)
    bobs = LeaderboardEntry(rank=1, player=players[1], name="Bob", value=1, total_time_ms=75_000)
    assert (this_week.board, this_week.entries, this_week.me, this_week.date) == ("weekly", [bobs], bobs, None)
    assert this_week.period is not None
    assert (this_week.period.name, this_week.period.first_day) == (week.name, week.first_day.isoformat())
    around = await bob.request(partial(AskLeaderboard, variant="antares", board="season", around=True))
    assert isinstance(around, Leaderboard)
    assert around.entries == [bobs]
    assert around.period is not None
    assert around.period.name == season.name
    # Ann did not win: the week is empty around her; the week before has nobody yet.
    hers = await ann.request(partial(AskLeaderboard, variant="antares", board="weekly", around=True))
    assert isinstance(hers, Leaderboard)
    assert (hers.entries, hers.me) == ([], None)
    before = await ann.request(
        partial(AskLeaderboard, variant="antares", board="weekly", period=this_week.period.previous)
    )
    assert isinstance(before, Leaderboard)
    assert before.entries == []
    assert before.period is not None
    assert before.period.next == week.name
