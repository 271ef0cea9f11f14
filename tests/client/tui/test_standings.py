"""The leaderboard screen's weekly and season boards, driven by Textual's pilot against a real
server: this week first, with the player's wins and total time, then the week before and back
(``p``, ``n``), the entries around the player (``a``), and the season (``b``)."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from client.tui import navigation as to
from client.tui.app import RaceApp
from client.tui.standings import LeaderboardScreen
from protocol.messages import AccountInfo, Register
from server.competition.periods import period_of
from server.features.daily import today
from tests.client.conftest import Serve, eventually
from tests.client.tui.test_tui import client_of, home, saved, screen_lines, showing, text_of

pytestmark = pytest.mark.asyncio


def rows(table: DataTable[object]) -> list[list[str]]:
    return [[str(cell) for cell in table.get_row_at(row)] for row in range(table.row_count)]


async def test_a_weekly_board_shows_the_players_wins_and_browses_the_weeks(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            account = await client_of(app).request(lambda i: Register(id=i, name="Ann", password="a board password"))
            assert isinstance(account, AccountInfo)  # only accounts are on the boards
            ann = account.player
            bob = (await srv.connect("Bob")).player
            assert bob is not None
            week = period_of("weekly", today())
            before = week.previous()
            assert before is not None
            # Ranked daily wins, as a finished attempt records them: Ann's today, Bob's last week.
            await srv.hub.boards.daily_result("antares", ann, today(), True, 75_000)
            await srv.hub.boards.daily_result("antares", bob, before.last_day.isoformat(), True, 61_000)

            app.post_message(to.Navigate(to.Leaderboards("antares", "weekly")))
            screen = await eventually(showing(app, LeaderboardScreen), what="the leaderboards")
            assert isinstance(screen, LeaderboardScreen)
            table = screen.query_one("#board", DataTable)
            this_week = f"Antares · Weekly ({week.name}, {week.first_day} to {week.last_day}) · top 1"
            await eventually(lambda: text_of(app, "#board-title") == this_week, what="this week's board")
            assert rows(table) == [["1", "Ann (you)", "1 win", "in 1:15.00"]]
            assert text_of(app, "#board-me") == "You: rank 1, 1 win."
            assert "Weeks start on Monday 00:00 UTC" in text_of(app, "#board-order")
            await pilot.pause()  # laid out: every tab within 80 columns, the keys under the table
            shown = "\n".join(screen_lines(app))
            assert all(tab in shown for tab in ("Today's daily", "Weekly", "Season"))
            assert "p / n: previous / next week" in shown

            await pilot.press("p")  # the week before: Bob's
            await eventually(lambda: f"Weekly ({before.name}," in text_of(app, "#board-title"), what="last week")
            assert rows(table) == [["1", "Bob", "1 win", "in 1:01.00"]]
            assert text_of(app, "#board-me").startswith("You are not in this part of the board")
            await pilot.press("a")  # around Ann, that week: she is not on it
            around_before = f"Weekly ({before.name}, {before.first_day} to {before.last_day}) · around you"
            await eventually(lambda: text_of(app, "#board-title").endswith(around_before), what="around you, last week")
            assert rows(table) == []
            assert text_of(app, "#board-me") == "You are not on this board yet."
            await pilot.press("n")  # back to this week, around Ann
            around_now = f"Weekly ({week.name}, {week.first_day} to {week.last_day}) · around you"
            await eventually(lambda: text_of(app, "#board-title").endswith(around_now), what="this week again")
            assert rows(table) == [["1", "Ann (you)", "1 win", "in 1:15.00"]]
            await pilot.press("n", "a")  # nothing later than this week: the top of this week
            await eventually(lambda: text_of(app, "#board-title") == this_week, what="this week's top")

            await pilot.press("b")  # the season: this one first, whatever week was shown
            season = period_of("season", today())
            await eventually(lambda: f"Season ({season.name}," in text_of(app, "#board-title"), what="the season")
            anns = ["1 win", "in 1:15.00"]
            if before.last_day in season:  # Bob's win too, the faster
                assert rows(table) == [["1", "Bob", "1 win", "in 1:01.00"], ["2", "Ann (you)", *anns]]
            else:
                assert rows(table) == [["1", "Ann (you)", *anns]]
            assert "p / n: previous / next season" in "\n".join(screen_lines(app))
