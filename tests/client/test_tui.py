"""The terminal UI, driven by Textual's test pilot against a real server."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.text import Text
from textual.widgets import DataTable, Input, Static

from client.board import render_board
from client.cards import card_code, card_label
from client.settings import Settings
from client.tui.app import RaceApp
from client.tui.base import ClientScreen
from client.tui.game import GameScreen
from client.tui.home import HomeScreen, NameScreen
from client.tui.lobby import LobbyScreen
from client.tui.results import ReplayScreen, ResultsScreen
from client.tui.spectate import SpectateScreen
from client.tui.widgets import BoardView
from protocol.messages import CreateRoom, Joined, JoinRoom, PlayMove, Ready, RoomOptions
from tests.client.conftest import (
    ANTARES_DEAL,
    Running,
    Serve,
    eventually,
    new_antares,
    winning_line,
)

pytestmark = pytest.mark.asyncio


def plain(widget: Static) -> str:
    """What a Static shows, without its markup."""
    content = widget.content
    return Text.from_markup(content).plain if isinstance(content, str) else str(content)


def text_of(app: RaceApp, selector: str) -> str:
    return plain(app.screen.query_one(selector, Static))


def saved(tmp_path: Path, name: str) -> Path:
    settings = Settings(tmp_path / "config", name=name)
    settings.save()
    return settings.directory


async def home(app: RaceApp) -> None:
    await eventually(lambda: isinstance(app.screen, HomeScreen) and app.client is not None, what="the home screen")


def client_of(app: RaceApp):  # the UI's own connection, to look at what it holds
    assert app.client is not None
    return app.client


async def test_the_first_run_asks_a_name_once_and_remembers_it(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            assert isinstance(app.screen, NameScreen)
            await pilot.press(*"Ann", "enter")
            await home(app)
            assert "Playing as Ann" in text_of(app, "#who")
            player = client_of(app).player
        settings = Settings.load(tmp_path)
        assert settings.name == "Ann"
        assert srv.url in settings.tokens

        again = RaceApp(srv.url, config_dir=tmp_path)
        async with again.run_test(size=(80, 24)):
            await home(again)  # no question this time, and the same player as before
            assert client_of(again).player == player


async def test_the_home_screen_shows_what_this_server_does_not_offer(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)):
            await home(app)
            menu = app.screen.query_one("#menu")
            options = {option.id: option for option in menu.options}  # type: ignore[attr-defined]
            for unavailable in ("quick", "leaderboards", "stats"):
                assert options[unavailable].disabled
                assert "not offered" in str(options[unavailable].prompt)
            assert not options["practice"].disabled


def keys_for_move(game, text: str) -> list[str]:
    """The keys that pick the card a move names (in a tableau pile) and drop it on a cell,
    by the documented keys: digit = top of tableau pile n, up = one card deeper, then the
    top row; left = one pile left."""
    move = game.parse_move(text)
    piles = [list(pile) for pile in game.public_piles()]
    main = [n for n, spec in enumerate(game.PILES) if spec.kind.value in ("scorpion", "freecell")]
    slot = main.index(move.source)
    depth = len(piles[move.source]) - move.count
    keys = [str(slot + 1), *["up"] * (len(piles[move.source]) - 1 - depth), "enter"]
    keys += ["up"] * (depth + 1) + ["left"] * slot  # up to the top row, then left to c1
    target_slot = move.target - 8  # cells c1..c4 are piles 8..11
    return [*keys, *["right"] * target_slot, "enter"]


async def test_a_practice_deal_played_by_keys_and_notation_to_the_results_and_replay(
    serve: Serve, tmp_path: Path
) -> None:
    line = winning_line()
    replica = new_antares()
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await pilot.press("down", "down", "down", "enter")  # Create, Join, Spectate, Practice
            # The form: Antares, deal 24, safe autoplay (the default).
            await pilot.press("enter", "down", "enter", "tab", *str(ANTARES_DEAL), "enter")
            screen = await eventually(lambda: isinstance(app.screen, GameScreen) and app.screen, what="the race")
            assert isinstance(screen, GameScreen)
            code = screen.code
            board = screen.query_one("#board", BoardView)
            await eventually(lambda: board.display and board.board, what="the deal after the countdown")
            assert board.board == [list(pile) for pile in replica.public_piles()]
            assert "deal 24" in text_of(app, "#topbar")

            def mine() -> list[list[int | None]] | None:
                return client_of(app).rooms[code].board(0)

            # The first move by the keyboard cursor: pick the card, carry it to a cell.
            await pilot.press(*keys_for_move(replica, line[0]))
            replica.apply(replica.parse_move(line[0]))
            await eventually(lambda: mine() == [list(p) for p in replica.public_piles()], what="the keyed move")
            assert text_of(app, "#message") == f"✓ {line[0]}"

            # The second typed in notation.
            await pilot.press("colon", *line[1], "enter")
            replica.apply(replica.parse_move(line[1]))
            await eventually(lambda: mine() == [list(p) for p in replica.public_piles()], what="the typed move")
            assert app.screen.query_one("#notation", Input).value == ""

            # An illegal move: the server's reason, on the same screen, the board unchanged.
            await pilot.press(*"QD>s2", "enter")
            await eventually(lambda: "needs the card of its suit" in text_of(app, "#message"), what="the reason")
            assert text_of(app, "#message").startswith("✗ QD>s2: on a Scorpion pile, QD needs")
            assert app.screen is screen
            assert app.screen.query_one("#notation", Input).value == "QD>s2"  # kept, to fix it

            # Undo (from the board), then the same move again.
            await pilot.press("escape", "u")
            replica.undo()
            await eventually(lambda: mine() == [list(p) for p in replica.public_piles()], what="the undo")
            app.screen.query_one("#notation", Input).value = ""

            # A hint highlights the cards it names.
            await pilot.press("h")
            await eventually(lambda: board.hint, what="a hint")
            assert text_of(app, "#message").startswith("Hint: ")

            # The second move again, typed; the third with the mouse: click the card, then the cell.
            notation = app.screen.query_one("#notation", Input)
            await pilot.press("colon")
            notation.value = line[1]
            await pilot.press("enter")
            replica.apply(replica.parse_move(line[1]))
            await eventually(lambda: mine() == [list(p) for p in replica.public_piles()], what="again")
            drawn = render_board(board.piles, board.board).plain.splitlines()
            card = replica.parse_move(line[2])
            source = [list(p) for p in replica.public_piles()][card.source][-card.count]
            assert source is not None
            row = 4 + len(replica.public_piles()[card.source]) - card.count
            await pilot.click(BoardView, offset=(1 + drawn[row].index(card_label(source).strip()), row))
            target = replica.PILES[card.target].name
            await pilot.click(BoardView, offset=(1 + drawn[0].index(target), 1))
            replica.apply(card)
            await eventually(lambda: mine() == [list(p) for p in replica.public_piles()], what="the clicked move")

            # The rest of the line, typed.
            await pilot.press("colon")
            for text in line[3:]:
                notation.value = text
                await pilot.press("enter")
                replica.apply(replica.parse_move(text))
                await eventually(lambda: mine() == [list(p) for p in replica.public_piles()], what=text)
            assert replica.is_won()

            results = await eventually(lambda: isinstance(app.screen, ResultsScreen) and app.screen, what="results")
            table = results.query_one("#results", DataTable)
            assert table.get_row_at(0)[:2] == ["1", "Ann"]
            assert "✓ Fair" in text_of(app, "#fairness")
            assert f"deal {ANTARES_DEAL}" in text_of(app, "#fairness")

            # The replay: the server's steps applied to the starting board, no rules.
            await pilot.press("p")
            replay = await eventually(lambda: isinstance(app.screen, ReplayScreen) and app.screen, what="replay")
            steps = len(line) + 2  # the line, the undone move and the undo
            assert text_of(app, "#replay-status") == "Step 0 of " + str(steps) + ": starting board"
            await pilot.press("right")
            assert text_of(app, "#replay-status") == f"Step 1 of {steps}: {line[0]}"
            await pilot.press("end")
            assert text_of(app, "#replay-status") == f"Step {steps} of {steps}: {line[-1]}"
            final = replay.query_one("#replay-board", BoardView).board
            assert sum(len(final[pile]) for pile in range(12, 16)) == 52


async def open_public_race(srv: Running) -> tuple[str, list]:
    ann = await srv.connect("Ann")
    bob = await srv.connect("Bob")
    options = RoomOptions(public=True, spectator_delay=0)
    created = await ann.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
    assert isinstance(created, Joined)
    await bob.request(lambda i: JoinRoom(id=i, room=created.room))
    return created.room, [ann, bob]


async def test_spectating_a_running_race_from_the_lobby(serve: Serve, tmp_path: Path) -> None:
    line = winning_line()
    async with serve(deal=str(ANTARES_DEAL)) as srv:
        code, racers = await open_public_race(srv)
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Sam"))
        async with app.run_test(size=(100, 30)) as pilot:
            await home(app)
            await pilot.press("down", "down", "enter")  # Create, Join, Spectate
            lobby = await eventually(lambda: isinstance(app.screen, LobbyScreen) and app.screen, what="the lobby")
            table = lobby.query_one("#rooms", DataTable)
            await eventually(lambda: table.row_count == 1, what="the room listed")
            assert table.get_row_at(0)[:3] == [code, "antares", "waiting"]
            await pilot.press("enter")
            screen = await eventually(lambda: isinstance(app.screen, SpectateScreen) and app.screen, what="watching")
            assert isinstance(screen, SpectateScreen)

            for racer in racers:
                await racer.request(lambda i: Ready(id=i, room=code))
            await eventually(lambda: len(screen.panels) == 2, what="a panel for each racer")
            boards = {seat: panel.query_one(BoardView) for seat, panel in screen.panels.items()}
            await eventually(lambda: all(board.board for board in boards.values()), what="both boards")
            for text in line[:3]:
                await racers[0].request(lambda i, text=text: PlayMove(id=i, room=code, move=text))
            ann_board = await racers[0].wait_room(code, lambda m: m.view().racers[0].progress.moves == 3)
            await eventually(lambda: boards[0].board == ann_board.board(0), what="Ann's moves on screen")
            assert boards[1].board == [list(pile) for pile in new_antares().public_piles()]
            title = plain(screen.panels[0].query_one(".racer-title", Static))
            assert "Ann" in title
            assert "3 moves" in title

            assert screen.focus_seat == 0
            assert screen.panels[0].has_class("focused")
            await pilot.press("right")
            assert screen.focus_seat == 1
            assert screen.panels[1].has_class("focused")
            assert not screen.panels[0].has_class("focused")
            assert card_code(ann_board.board(0)[8][0] or 0) == line[0].split(">")[0]  # JD went to c1


async def test_a_lost_connection_shows_a_banner_until_the_client_is_back(serve: Serve, tmp_path: Path) -> None:
    async with serve(close_clients=False) as first:
        port, prefix = first.server.port, first.prefix
        app = RaceApp(first.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await first.server.stop()
            screen = app.screen
            assert isinstance(screen, ClientScreen)
            banner = screen.query_one("#banner", Static)
            await eventually(lambda: banner.has_class("shown"), what="the banner")
            assert "going away" in plain(banner) or "Connection lost" in plain(banner)
            async with serve(port=port, prefix=prefix):
                await eventually(lambda: not banner.has_class("shown"), what="the banner gone")
                await pilot.pause()
                assert client_of(app).connected.is_set()
