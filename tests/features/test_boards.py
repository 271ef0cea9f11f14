"""Leaderboard and statistics requests against a real server: a day that does not exist and
a player id that could not be one are refused with ``invalid-message``, and the connection
goes on to be served."""

from __future__ import annotations

from functools import partial

import pytest

from protocol.messages import AskLeaderboard, AskStats, Leaderboard, PlayerStats
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
