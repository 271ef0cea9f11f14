"""A newcomer's run of the terminal UI (issue 40), driven by Textual's test pilot against a real
server: the race-a-bot menu starts on its first line, fits 80 columns and describes the levels
in the bots' own words; a bot is named once; a rematch against a bot (or alone) starts as the
first race did; a room that starts at once does not ask for racers to invite; the daily screen
offers only what it can start, and ``s`` says why when it cannot; every footer fits 80 columns;
a wide terminal centres the board."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from textual.widgets import DataTable, Footer, OptionList

from client.lib.bot import LEVELS, STYLES, level_text
from client.render.describe import shown_name
from client.tui import navigation as to
from client.tui.app import RaceApp
from client.tui.botrace import BotRaceScreen
from client.tui.daily import DailyScreen
from client.tui.game import GameScreen
from client.tui.lobby import LobbyScreen
from client.tui.results import ReplayScreen, ResultsScreen
from client.tui.roomtext import waiting_words
from client.tui.spectate import SpectateScreen
from client.tui.standings import LeaderboardScreen
from client.tui.widgets import BoardView
from protocol.messages import CreateRoom, Joined, Progress, Racer, RoomOptions
from tests.client.conftest import Serve, ServeDaily, eventually
from tests.client.tui.keyboard import send_keys
from tests.client.tui.test_newcomer import open_practice
from tests.client.tui.test_tui import choose, client_of, home, saved, screen_lines, showing, text_of

pytestmark = pytest.mark.asyncio


async def footer_cut(app: RaceApp) -> list[str]:
    """The footer's entries that do not show whole on the screen's last line."""

    def entries() -> list[str]:
        keys = app.screen.query_one(Footer).query("FooterKey")
        return [" ".join(str(key.render()).split()) for key in keys if key.region.width]

    shown = await eventually(entries, what="the footer")
    line = screen_lines(app)[-1]
    return [entry for entry in shown if entry not in line]


async def test_a_bot_is_named_once() -> None:
    def racer(name: str, bot: bool) -> Racer:
        return Racer(seat=1, player="p", name=name, progress=Progress(home=0, ordered=0, moves=0), bot=bot)

    assert shown_name(racer("Bot (medium)", True)) == "Bot (medium)"
    assert shown_name(racer("Ada", True)) == "Ada (bot)"
    assert shown_name(racer("Robot Rob", True)) == "Robot Rob (bot)"  # "bot" inside a word says nothing
    assert shown_name(racer("Bot Bert", False)) == "Bot Bert"


async def test_the_bot_menu_starts_on_its_first_line_and_fits_80_columns(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await choose(app, pilot, "bot")
            screen = await eventually(showing(app, BotRaceScreen), what="the bot's choices")
            await pilot.pause()
            menu = screen.query_one("#bot-choices", OptionList)
            assert menu.highlighted == 0
            assert menu.options[0].id == "scorpion:easy"
            # One line per choice, whole, in the bots' own words: nothing wraps onto a second line.
            shown = screen_lines(app)
            for variant in ("Scorpion", "Antares"):
                for level in LEVELS:
                    assert sum(f"{variant:<9} {level_text(level)}" in line for line in shown) == 1, (variant, level)
            assert menu.virtual_size.height == len(menu.options)
            assert [STYLES[level].delay for level in LEVELS] == [3.0, 2.0, 0.3]
            assert level_text("medium") == "medium: a move every 2 s, strays now and then"
            await pilot.press("down")  # the next level up, not a jump to hard
            assert menu.options[menu.highlighted or 0].id == "scorpion:medium"
            assert await footer_cut(app) == []


async def test_a_bot_race_names_the_bot_once_and_its_rematch_starts_by_itself(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"), bot_delay=0)
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await choose(app, pilot, "bot")
            await eventually(showing(app, BotRaceScreen), what="the bot's choices")
            send_keys(app, "enter")  # the first line: Scorpion, easy (it gives up soonest)
            screen = await eventually(showing(app, GameScreen), what="the race")
            room = await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
            assert [racer.name for racer in room.view().racers] == ["Ann", "Bot (easy)"]
            await eventually(lambda: "Bot (easy)" in text_of(app, "#racers"), what="the bot's line")
            assert "(bot)" not in text_of(app, "#racers")
            await pilot.pause()
            # The race's footer fits 80 columns (it was cut at "q Leav"), deal included in Scorpion.
            assert await footer_cut(app) == []
            await eventually(lambda: "q Leave" in screen_lines(app)[-1], what="the footer's q Leave")
            assert "d Deal" in screen_lines(app)[-1]

            send_keys(app, "R", "R")
            results = await eventually(showing(app, ResultsScreen), timeout=60, what="the results")
            table = results.query_one("#results", DataTable)
            await eventually(lambda: table.row_count == 2, what="both racers ranked")
            assert {str(table.get_row_at(row)[1]) for row in range(2)} == {"Ann (you)", "Bot (easy)"}
            assert await footer_cut(app) == []
            send_keys(app, "p")  # the replay's footer too
            await eventually(showing(app, ReplayScreen), what="the replay")
            await pilot.pause()
            assert await footer_cut(app) == []
            await pilot.press("escape")
            await eventually(lambda: app.screen is results, what="the results again")

            # A rematch starts as the first race did: no r to press, and the board takes the keys.
            await pilot.press("m")
            await client_of(app).wait_room(
                screen.code, lambda m: m.view().race == 2 and m.view().state == "racing", timeout=15
            )
            await eventually(lambda: app.screen is screen and isinstance(app.focused, BoardView), what="the board")
            assert "race 2" in text_of(app, "#topbar")


async def test_a_room_that_starts_at_once_asks_for_nobody_to_invite(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        ann = await srv.connect("Ann")
        rooms = {}
        for seats in (1, 2):
            joined = await ann.request(partial(CreateRoom, variant="scorpion", options=RoomOptions(max_racers=seats)))
            assert isinstance(joined, Joined)
            rooms[seats] = srv.view(joined.room, joined.seat)
        invite = "give this code to the racers you invite"
        assert invite in waiting_words(rooms[2], 0, creator=True, with_bot=False)
        with_bot = waiting_words(rooms[2], 0, creator=True, with_bot=True)
        assert invite not in with_bot
        assert "you and a bot: the race starts once you are both ready" in with_bot
        practice = waiting_words(rooms[1], 0, creator=True, with_bot=False)
        assert invite not in practice
        assert "practice: it starts once you are ready" in practice
        assert "Ann (you)" in practice  # the rest as before


async def test_the_daily_screen_offers_only_what_it_can_start(serve_daily: ServeDaily, tmp_path: Path) -> None:
    async with serve_daily() as (srv, _):
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await choose(app, pilot, "daily")
            screen = await eventually(showing(app, DailyScreen), what="the daily challenge")
            await eventually(lambda: "Par:" in text_of(app, "#daily-today"), what="today's challenge", timeout=30)
            await pilot.pause()
            # A guest, and no deal yesterday: nothing to start, so no button and no "s Start".
            assert "Yesterday: no daily challenge to reveal." in text_of(app, "#daily-yesterday")
            shown = "\n".join(screen_lines(app))
            assert "Practise yesterday's deal" not in shown
            assert "s Start" not in screen_lines(app)[-1]
            assert await footer_cut(app) == []
            why = "Nothing to start: today's deal is for accounts (register from the home menu)"
            assert text_of(app, "#daily-message").startswith(why)
            screen.say("")
            await pilot.press("s")  # the key says why it starts nothing
            await eventually(lambda: text_of(app, "#daily-message").startswith(why), what="why not")
            assert "no earlier deal to practise yet" in text_of(app, "#daily-message")
            assert isinstance(app.screen, DailyScreen)


async def test_every_footer_fits_80_columns(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        host = await srv.connect("Host")
        joined = await host.request(partial(CreateRoom, variant="antares", options=RoomOptions(public=True)))
        assert isinstance(joined, Joined)
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            assert await footer_cut(app) == []
            routes = (
                (to.Lobby(), LobbyScreen),
                (to.Leaderboards(), LeaderboardScreen),
                (to.Spectate(joined.room), SpectateScreen),
            )
            for route, kind in routes:
                app.post_message(to.Navigate(route))
                await eventually(showing(app, kind), what=kind.__name__)
                await pilot.pause(0.5)
                assert await footer_cut(app) == [], kind.__name__
                assert any(entry in screen_lines(app)[-1] for entry in ("q Back", "q Leave")), kind.__name__
                await pilot.press("q")
                await home(app)


async def test_a_wide_terminal_centres_the_board_and_a_practice_rematch_starts_by_itself(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(160, 50)) as pilot:
            await home(app)
            screen = await open_practice(app, RoomOptions(max_racers=1))
            await pilot.pause()
            board, play = screen.query_one("#board", BoardView), screen.query_one("#play").region
            left, right = board.region.x - play.x, play.right - board.region.right
            assert abs(left - right) <= 2, (left, right)  # not 80 empty columns on one side
            send_keys(app, "R", "R")
            await eventually(showing(app, ResultsScreen), what="the results")
            await pilot.press("m")
            await client_of(app).wait_room(
                screen.code, lambda m: m.view().race == 2 and m.view().state == "racing", timeout=15
            )
