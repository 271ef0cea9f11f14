"""Issue 31, driven by Textual's test pilot against a real server: everything fits the
documented minimum of 80x24 (the playable end of every column, every racer's board when
spectating, the home menu), the race clock is whole, Antares offers no deal, messages
belong to their race, a bot's resignation is said, and results and boards explain
themselves."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest
from textual.widgets import DataTable, Input, OptionList, Static

from client.lib.connection import RaceClient
from client.render.board import header_lines
from client.render.cards import card_label
from client.tui import navigation as to
from client.tui.app import RaceApp
from client.tui.game import GameScreen
from client.tui.home import HomeScreen
from client.tui.results import ResultsScreen
from client.tui.spectate import RacerPanel, SpectateScreen
from client.tui.standings import LeaderboardScreen
from client.tui.widgets import BoardView
from protocol.messages import CreateRoom, Joined, JoinRoom, Ready, Resign, RoomOptions
from server.games import Scorpion
from tests.client.conftest import Running, Serve, eventually, playing
from tests.client.tui.keyboard import enter_move, send_keys
from tests.client.tui.test_newcomer import open_practice
from tests.client.tui.test_tui import client_of, home, saved, screen_lines, showing, text_of

pytestmark = pytest.mark.asyncio

#: A race time as the client writes it everywhere: minutes, seconds, hundredths (0:43.89).
TIME = re.compile(r"\d+:\d\d\.\d\d")


def long_column_line(deal: int, length: int) -> list[str]:
    """Random legal moves on Scorpion ``deal`` until a column holds ``length`` cards or more."""
    game, rng, line = Scorpion.new(deal), random.Random(deal), []
    tableau = [n for n, spec in enumerate(game.PILES) if spec.kind.value == "scorpion"]
    while max(len(game.public_piles()[n]) for n in tableau) < length:
        moves = game.legal_moves()
        assert moves, "no deal of this test's makes a long column"
        move = rng.choice(moves)
        line.append(game.move_text(move))
        game.apply(move)
    return line


def column_ends(board: BoardView) -> dict[int, str]:
    """What is drawn last in each tableau column of ``board``: ``K♥``, ``▒▒▒``, ``+3``…"""
    layout = board.layout_
    assert layout is not None
    lines = board.render().plain.splitlines()[header_lines(layout) :]
    ends = {}
    for slot, pile in enumerate(layout.main):
        left = slot * board.cell + (2 if layout.divider_at is not None and slot >= layout.divider_at else 0)
        cells = [line[left : left + board.cell].strip() for line in lines]
        ends[pile] = next(cell for cell in reversed(cells) if cell)
    return ends


async def test_at_80x24_the_playable_end_of_every_column_is_on_screen(serve: Serve, tmp_path: Path) -> None:
    line = long_column_line(99, 26)  # far taller than the 17 lines the board has at 80x24
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            screen = await open_practice(app, RoomOptions(max_racers=1, deal="99"))
            for text in line:
                await client_of(app).request(playing(screen.code, text))
            board = screen.query_one("#board", BoardView)
            await eventually(lambda: board.board == client_of(app).rooms[screen.code].board(0), what="the moves")
            await pilot.pause()
            play = screen.query_one("#play")
            # The board fits in its place: nothing to scroll, nothing below the screen's edge.
            assert play.max_scroll_y == 0
            assert board.region.bottom <= play.region.bottom <= 23
            assert len(board.render().plain.splitlines()) <= board.size.height
            # Every column ends with its top card (the one a move takes), drawn on screen.
            layout = board.layout_
            assert layout is not None
            ends = column_ends(board)
            for pile in layout.main:
                cards = board.board[pile]
                drawn = "[ ]" if not cards else "▒▒▒" if cards[-1] is None else card_label(cards[-1]).strip()
                assert ends[pile] == drawn, (board.piles[pile].name, ends[pile], drawn)
            # The covered part of the long column is folded into "+N", and the legend says so.
            assert re.search(r"\+\d+", board.render().plain)
            assert "+N" in text_of(app, "#legend")
            shown = "\n".join(screen_lines(app))
            assert all(label in shown for label in ends.values())

            # Up to the deepest face-up card of the long column: it was folded; now it is drawn,
            # with the cards below it folded in turn, and the board still fits.
            longest = max(layout.main, key=lambda pile: len(board.board[pile]))
            cards = board.board[longest]
            deepest = next(index for index, card in enumerate(cards) if card is not None)
            assert card_label(cards[deepest] or 0).strip() not in board.render().plain
            await pilot.press(str(layout.main.index(longest) + 1))  # the column's top card
            send_keys(app, *["up"] * (len(cards) - 1 - deepest))

            def cursor() -> tuple[int, int] | None:
                return None if board.cursor is None else board.cursor.position

            await eventually(lambda: cursor() == (longest, deepest), what="the cursor up the column")
            assert board.cursor is not None
            assert board.cursor.position == (longest, deepest)
            drawn = board.render().plain
            assert card_label(cards[deepest] or 0).strip() in drawn
            assert re.search(r"\+\d+", drawn)
            assert len(drawn.splitlines()) <= board.size.height


async def three_racers(srv: Running) -> tuple[str, list[RaceClient]]:
    """An Antares room of three racers, open to spectators at once (no delay)."""
    racers = [await srv.connect(name) for name in ("Ann", "Bob", "Cy")]
    options = RoomOptions(max_racers=len(racers), spectator_delay=0)
    created = await racers[0].request(lambda i: CreateRoom(id=i, variant="antares", options=options))
    assert isinstance(created, Joined)
    for racer in racers[1:]:
        await racer.request(lambda i: JoinRoom(id=i, room=created.room))
    return created.room, racers


async def test_spectating_three_racers_at_80x24_shows_one_board_at_a_time_and_says_so(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve(deal="24") as srv:
        code, racers = await three_racers(srv)
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Sam"), watch=code)
        async with app.run_test(size=(80, 24)) as pilot:
            screen = await eventually(showing(app, SpectateScreen), what="watching")
            for racer in racers:
                await racer.request(lambda i: Ready(id=i, room=code))
            await eventually(lambda: len(screen.panels) == 3, what="a panel for each racer")
            boards = [panel.query_one(BoardView) for panel in screen.panels.values()]
            await eventually(lambda: all(board.board for board in boards), what="the boards")
            await eventually(lambda: "One board at a time" in text_of(app, "#spectate-message"), what="the mode")
            await pilot.pause()

            def shown() -> list[RacerPanel]:
                return [panel for panel in screen.panels.values() if panel.display]

            # Three boards do not fit side by side in 80 columns: one, whole, with everyone listed.
            assert screen.one_at_a_time
            assert [panel.seat for panel in shown()] == [0]
            assert shown()[0].region.right <= 80
            assert shown()[0].region.bottom <= 23
            assert "(too many to fit side by side): Ann's, 1 of 3" in text_of(app, "#spectate-message")
            listed = text_of(app, "#spectate-racers")
            assert "▶ Ann" in listed
            assert "Bob" in listed
            assert "Cy" in listed
            assert "▶ Ann" in "\n".join(screen_lines(app))
            await pilot.press("right")
            await eventually(lambda: [panel.seat for panel in shown()] == [1], what="Bob's board")
            assert "Bob's, 2 of 3" in text_of(app, "#spectate-message")
            assert "▶ Bob" in text_of(app, "#spectate-racers")

            # With room for them, every board side by side; z: one at a time by choice.
            await pilot.resize_terminal(160, 50)
            await eventually(lambda: len(shown()) == 3, what="every board")
            await pilot.pause()
            assert not screen.one_at_a_time
            assert all(panel.region.right <= 160 for panel in shown())
            assert "Every board side by side" in text_of(app, "#spectate-message")
            await pilot.press("z")
            await eventually(lambda: len(shown()) == 1, what="one board, chosen")
            assert "z: every board" in text_of(app, "#spectate-message")


async def test_the_home_menu_takes_the_rows_it_needs(tmp_path: Path) -> None:
    for size in ((80, 24), (160, 50)):
        app = RaceApp("ws://127.0.0.1:9", config_dir=saved(tmp_path, "Ann"))  # no server needed: a guest's menu
        async with app.run_test(size=size) as pilot:
            screen = await eventually(showing(app, HomeScreen), what="home")
            await pilot.pause()
            menu = screen.query_one("#menu", OptionList)
            assert menu.max_scroll_y == 0, size  # every entry shows: nothing below a scroll
            shown = "\n".join(screen_lines(app))
            for entry in ("Log in to your account", "Change your name", "Quit", "Daily challenge: Antares"):
                assert entry in shown, (size, entry)


async def test_antares_offers_no_deal_and_its_own_move_examples(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            client = client_of(app)
            options = RoomOptions(max_racers=1, deal="24")
            joined = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
            assert isinstance(joined, Joined)
            app.post_message(to.Navigate(to.Game(joined.room, joined.seat)))
            await client.request(lambda i: Ready(id=i, room=joined.room))
            screen = await eventually(showing(app, GameScreen), what="the race")
            board = screen.query_one("#board", BoardView)
            await eventually(lambda: board.display and board.board, what="the deal after the countdown")
            await pilot.pause()
            assert not screen.check_action("deal", ())
            await eventually(lambda: "q Leave" in screen_lines(app)[-1], what="the footer")
            assert "d Deal" not in screen_lines(app)[-1]
            assert "deal" not in text_of(app, "#legend")
            prompt = str(screen.query_one("#notation", Input).placeholder)
            assert "QS>5" not in prompt
            assert "deal" not in prompt
            assert "7H>c1" in prompt
            assert "c2>h" in prompt
            assert TIME.fullmatch(text_of(app, "#clock").removeprefix("⏱ "))  # one time format
            await enter_move(app, pilot, "QS>f1")  # the example reads as a move: the server judges it
            await eventually(lambda: text_of(app, "#message").startswith("✗ QS>f1: "), what="the server's answer")
            assert "is not a pile" not in text_of(app, "#message")  # as QS>5 would be, in Antares

            # Scorpion has a stock: there d deals, and the examples are Scorpion's.
            await pilot.press("escape", "q", "q")
            await home(app)
            scorpion = await open_practice(app, RoomOptions(max_racers=1, deal="617"))
            await pilot.pause()
            assert scorpion.check_action("deal", ())
            await eventually(lambda: "d Deal" in screen_lines(app)[-1], what="the footer's d Deal")
            assert "d deal" in text_of(app, "#legend")
            prompt = str(scorpion.query_one("#notation", Input).placeholder)
            assert "QS>5, deal" in prompt
            assert "c2>h" not in prompt


async def test_you_resigned_stays_with_its_race(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            screen = await open_practice(app, RoomOptions(max_racers=1))
            send_keys(app, "R", "R")
            await eventually(lambda: isinstance(app.screen, ResultsScreen), what="the results")
            await eventually(lambda: plain_message(screen) == "You resigned.", what="the race screen's message")
            await pilot.press("m")  # a rematch: the results close, and it starts as the first race did
            await eventually(lambda: app.screen is screen, what="the room again")
            await eventually(lambda: "race 2" in text_of(app, "#topbar"), what="the rematch")
            assert plain_message(screen) == ""


def plain_message(screen: GameScreen) -> str:
    """The race screen's message line (read even while another screen is on top)."""
    content = screen.query_one("#message", Static).content
    return str(content)


async def test_a_bots_resignation_is_said_and_the_results_explain_themselves(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)):
            await home(app)
            client = client_of(app)
            joined = await client.request(
                lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(max_racers=2))
            )
            assert isinstance(joined, Joined)
            code = joined.room
            app.post_message(to.Navigate(to.Game(code, joined.seat)))
            ada = await RaceClient.connect(srv.url, "Ada", reconnect=False, bot=True)
            srv.clients.append(ada)
            await ada.request(lambda i: JoinRoom(id=i, room=code))
            for racer in (client, ada):
                await racer.request(lambda i: Ready(id=i, room=code))
            screen = await eventually(showing(app, GameScreen), what="the race")
            await client.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
            await ada.request(lambda i: Resign(id=i, room=code))
            await eventually(lambda: text_of(app, "#message") == "Ada (bot) resigned.", what="the bot's resignation")
            assert screen.racing()  # Ann races on

            send_keys(app, "R", "R")
            results = await eventually(showing(app, ResultsScreen), what="the results")
            table = results.query_one("#results", DataTable)
            await eventually(lambda: table.row_count == 2, what="both racers ranked")
            names = [str(table.get_row_at(row)[1]) for row in range(2)]
            assert "Ann (you)" in names
            assert "Ada (bot)" in names
            assert [str(column.label) for column in table.columns.values()][-1] == "Home"  # no rating column
            notes = text_of(app, "#results-notes")
            # How the ranking breaks ties, and why there is no rating column.
            assert "finishers by time, then fewer moves" in notes
            assert "cards home, then cards in order, then fewer moves" in notes
            assert "exact tie goes to the earlier seat" in notes
            assert "No rating: a race against a bot is not rated" in notes


async def test_a_guest_is_told_why_it_is_on_no_board_and_how_to_get_there(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            app.post_message(to.Navigate(to.Leaderboards()))
            await eventually(showing(app, LeaderboardScreen), what="the leaderboards")
            await eventually(lambda: text_of(app, "#board-order"), what="the board")
            assert "Antares · Today's daily" in text_of(app, "#board-title")  # Antares first, as the daily
            assert "then who finished first" in text_of(app, "#board-order")  # the board's tie-break
            me = text_of(app, "#board-me")
            assert "only accounts are on the boards" in me
            assert "Register an account" in me
            shown = "\n".join(screen_lines(app))
            assert "only accounts are on the boards" in shown
            await pilot.press("b")  # best time: its own order
            await eventually(lambda: "fastest" in text_of(app, "#board-order"), what="the next board")
            assert "Best daily time" in text_of(app, "#board-title")
