"""What a newcomer meets in the terminal UI: help, rules, a bot to race, clear notices,
and the small defects of issue 13, driven by Textual's test pilot against a real server."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, Label, Select, Static

from client.tui import navigation as to
from client.tui.app import RaceApp
from client.tui.botrace import BotRaceScreen
from client.tui.game import GameScreen
from client.tui.help import HelpScreen, RulesScreen
from client.tui.home import CreateScreen, HomeScreen, NameScreen
from client.tui.results import ResultsScreen
from client.tui.widgets import BoardView, Tick
from protocol.messages import CreateRoom, Joined, Ready, RoomOptions
from server.games import Scorpion
from tests.client.conftest import Serve, eventually, playing
from tests.client.tui.keyboard import enter_move, send_keys, tab
from tests.client.tui.test_tui import choose, client_of, home, saved, showing, text_of

pytestmark = pytest.mark.asyncio

UNREACHABLE = "ws://127.0.0.1:9"  # the screens below need no server: the client keeps retrying


async def test_help_opens_with_question_mark_and_rules_from_there(tmp_path: Path) -> None:
    app = RaceApp(UNREACHABLE, config_dir=saved(tmp_path, "Ann"))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("question_mark")
        await eventually(lambda: isinstance(app.screen, HelpScreen), what="the help")
        text = text_of(app, "#help-text")
        assert "R R" in text
        assert "resign (press twice)" in text
        await pilot.press("a")  # Antares's rules, in place of the help
        await eventually(lambda: isinstance(app.screen, RulesScreen), what="the rules")
        assert "How to play Antares" in str(app.screen.query_one("#rules-title", Label).content)
        assert "A worked example: deal 24" in text_of(app, "#rules-text")
        assert "also the ones you undo" in text_of(app, "#rules-text")
        await pilot.press("g")
        assert "A worked example: deal 617" in text_of(app, "#rules-text")
        await pilot.press("escape")
        await eventually(lambda: isinstance(app.screen, HomeScreen), what="home again")
        await pilot.press("f1")
        await eventually(lambda: isinstance(app.screen, HelpScreen), what="the help by F1")


async def test_a_terminal_below_80x24_shows_a_notice_until_it_is_big_enough(tmp_path: Path) -> None:
    app = RaceApp(UNREACHABLE, config_dir=saved(tmp_path, "Ann"))
    async with app.run_test(size=(70, 20)) as pilot:
        notice = (await eventually(showing(app, HomeScreen), what="home")).query_one("#too-small", Static)
        assert notice.has_class("shown")
        assert "too small: 70 x 20" in text_of(app, "#too-small")
        await pilot.resize_terminal(80, 24)
        await eventually(lambda: not notice.has_class("shown"), what="the notice gone")


async def test_changing_the_name_says_so_and_escape_keeps_the_old_one(tmp_path: Path) -> None:
    app = RaceApp(UNREACHABLE, config_dir=saved(tmp_path, "Ann"))
    async with app.run_test(size=(80, 24)) as pilot:
        await eventually(lambda: isinstance(app.screen, HomeScreen), what="home")
        app.post_message(to.Navigate(to.Name()))
        dialog = await eventually(showing(app, NameScreen), what="the name dialog")
        assert str(dialog.query_one(".title", Label).content) == "Change your name"
        await pilot.press("B", "escape")
        await eventually(lambda: isinstance(app.screen, HomeScreen), what="closed by Escape")
        assert app.settings.name == "Ann"
    first = RaceApp(UNREACHABLE, config_dir=tmp_path / "fresh")
    async with first.run_test(size=(80, 24)) as pilot:
        assert isinstance(first.screen, NameScreen)
        assert "Welcome" in str(first.screen.query_one(".title", Label).content)
        await pilot.press("escape")  # the first time there is no name to keep
        assert isinstance(first.screen, NameScreen)


async def test_the_create_form_has_visible_tab_stops_clear_boxes_and_a_valid_blank_limit(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await choose(app, pilot, "create")
            form = await eventually(showing(app, CreateScreen), what="the form")
            seen = []
            for _ in range(9):
                seen.append(type(app.focused).__name__)
                await tab(app)
            # Every Tab stop is a field of the form: nothing invisible takes the focus.
            assert set(seen) == {"GameSelect", "Select", "Input", "Tick", "Button"}
            public, hints = form.query_one("#public", Tick), form.query_one("#hints", Tick)
            assert (public.value, hints.value) == (False, True)
            assert "X" not in public.render().plain
            assert "X" in hints.render().plain
            limit = form.query_one("#limit", Input)
            assert limit.value == ""
            assert not limit.has_class("-invalid")  # blank means no time limit
            assert form.query_one("#variant", Select).value == "scorpion"


def stuck_line(deal: int) -> list[str]:
    """Random legal moves on Scorpion ``deal`` until no move is left (the test needs a stuck board)."""
    game, rng, line = Scorpion.new(deal), random.Random(deal), []
    while moves := game.legal_moves():
        move = rng.choice(moves)
        line.append(game.move_text(move))
        game.apply(move)
    assert not game.is_won()
    return line


async def open_practice(app: RaceApp, options: RoomOptions) -> GameScreen:
    client = client_of(app)
    joined = await client.request(lambda i: CreateRoom(id=i, variant="scorpion", options=options))
    assert isinstance(joined, Joined)
    app.post_message(to.Navigate(to.Game(joined.room, joined.seat)))
    await client.request(lambda i: Ready(id=i, room=joined.room))
    screen = await eventually(showing(app, GameScreen), what="the race")
    assert isinstance(screen, GameScreen)
    board = screen.query_one("#board", BoardView)
    await eventually(lambda: board.display and board.board, what="the deal after the countdown")
    return screen


async def test_a_stuck_board_says_undo_or_resign_and_a_typed_move_leaves_the_input(
    serve: Serve, tmp_path: Path
) -> None:
    line = stuck_line(1)
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            screen = await open_practice(app, RoomOptions(max_racers=1, deal="1"))
            assert "u undo · h hint" in text_of(app, "#legend")  # the key legend beside the board
            for text in line[:-1]:
                await client_of(app).request(playing(screen.code, text))
            await enter_move(app, pilot, line[-1])
            await eventually(lambda: "No moves left" in text_of(app, "#message"), what="the stuck notice")
            assert text_of(app, "#message") == "No moves left: undo (u) or resign (R R)."
            assert screen.query_one("#notation", Input).value == ""
            await pilot.press("escape", "h")  # a hint says the same
            await pilot.pause()
            await eventually(lambda: "No moves left" in text_of(app, "#message"), what="the hint's answer")


async def test_h_in_a_room_without_hints_says_why(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await open_practice(app, RoomOptions(max_racers=1, hints=False))
            await pilot.press("h")
            await eventually(lambda: "Hints are off" in text_of(app, "#message"), what="why no hint")


async def test_race_a_bot_from_the_home_menu_to_the_results_and_a_rematch(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"), bot_delay=0)
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await choose(app, pilot, "bot")
            await eventually(lambda: isinstance(app.screen, BotRaceScreen), what="the bot's choices")
            send_keys(app, "enter")  # the first line: Scorpion, easy (it gives up soonest)
            screen = await eventually(showing(app, GameScreen), what="the race")
            assert isinstance(screen, GameScreen)
            room = await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
            assert [racer.name for racer in room.view().racers] == ["Ann", "Bot (easy)"]
            send_keys(app, "R", "R")  # Ann resigns; the fast bot plays on to its end
            results = await eventually(showing(app, ResultsScreen), timeout=60, what="the results")
            await pilot.pause()
            table = results.query_one("#results", DataTable)
            await eventually(lambda: table.row_count == 2, what="both racers ranked")
            # The server marks the bot (it said so in its hello); its name says so already, once.
            assert {str(table.get_row_at(row)[1]) for row in range(2)} == {"Ann (you)", "Bot (easy)"}
            await pilot.press("m")  # a rematch: the bot stays, and the race starts again as the first did
            await client_of(app).wait_room(
                screen.code, lambda m: m.view().race == 2 and m.view().state == "racing", timeout=15
            )


async def test_a_bot_is_marked_on_its_seat_and_in_the_results(serve: Serve, tmp_path: Path) -> None:
    """The server echoes ``hello.bot`` as ``Racer.bot`` and ``Result.bot``; the UI marks it."""
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"), bot_race=("scorpion", "easy"), bot_delay=0)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await eventually(showing(app, GameScreen), what="the race")
            assert isinstance(screen, GameScreen)
            room = await client_of(app).wait_room(screen.code, lambda m: len(m.view().racers) == 2, timeout=15)
            assert room.view().racers[1].bot
            await eventually(lambda: "Bot (easy)" in text_of(app, "#racers"), what="the bot")
            assert "(bot)" not in text_of(app, "#racers")  # its name says so: once
            await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
            await pilot.pause()
            send_keys(app, "R", "R")
            room = await client_of(app).wait_room(screen.code, lambda m: m.view().results is not None, timeout=60)
            results = room.view().results or []
            assert [result.bot for result in sorted(results, key=lambda r: r.seat)] == [False, True]
