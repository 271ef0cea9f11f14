"""The terminal UI, driven by Textual's test pilot against a real server."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import pytest
from rich.text import Text
from textual.content import Content
from textual.css.query import NoMatches
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import DataTable, Input, OptionList, Static

from client.lib.connection import RaceClient
from client.lib.settings import Settings
from client.render.board import render_board
from client.render.cards import card_code, card_label
from client.tui.app import RaceApp
from client.tui.base import ClientScreen
from client.tui.game import GameScreen
from client.tui.home import HomeScreen, NameScreen
from client.tui.lobby import LobbyScreen
from client.tui.quick import QuickScreen
from client.tui.results import ReplayScreen, ResultsScreen
from client.tui.spectate import SpectateScreen
from client.tui.standings import LeaderboardScreen, StatsScreen
from client.tui.widgets import BoardView
from protocol.messages import (
    LOBBY_PAGE,
    AccountInfo,
    CreateRoom,
    Joined,
    JoinRoom,
    Ready,
    Register,
    RoomOptions,
)
from server.games import Game
from tests.client.conftest import (
    PATIENCE,
    Running,
    Serve,
    ServeDaily,
    eventually,
    playing,
)
from tests.client.tui.keyboard import enter_move, send_keys, step_highlight, type_text
from tests.doubles.clock import AheadClock
from tests.end_to_end.conftest import PERSON_PACE, cleared_by_a_moderator, registered_before_today
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line
from tests.polling import LONG_COUNTDOWN

pytestmark = pytest.mark.asyncio


def plain(widget: Static) -> str:
    """What a Static shows, without its markup."""
    content = widget.content
    return Text.from_markup(content).plain if isinstance(content, str) else str(content)


def text_of(app: RaceApp, selector: str) -> str:
    """What the current screen's widget ``selector`` shows ("" while the screen is still being built)."""
    try:
        return plain(app.screen.query_one(selector, Static))
    except NoMatches:
        return ""


def screen_lines(app: RaceApp) -> list[str]:
    """What the terminal shows, line by line (read from Textual's compositor: the pilot has
    no public way to read the screen's text)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def notices(app: RaceApp) -> str:
    """The notifications the current screen shows (Textual's toasts), each on one line: the app
    must run with ``run_test(notifications=True)``."""
    shown = []
    for toast in app.screen.query("Toast"):
        content = toast.render()
        text = content.plain if isinstance(content, Content) else str(content)
        shown.append(" ".join(text.split()))
    return "\n".join(shown)


def saved(tmp_path: Path, name: str) -> Path:
    settings = Settings(tmp_path / "config", name=name)
    settings.save()
    return settings.directory


async def home(app: RaceApp) -> None:
    """The home screen, showing the connection: its menu is refreshed by a message the app
    handles after ``app.client`` is set, so a test that looked at the menu as soon as the
    client existed once found every option still disabled."""
    await eventually(
        lambda: isinstance(app.screen, HomeScreen) and app.client is not None and "Playing as" in text_of(app, "#who"),
        what="the home screen, connected",
    )


def client_of(app: RaceApp) -> RaceClient:  # the UI's own connection, to look at what it holds
    assert app.client is not None
    return app.client


S = TypeVar("S", bound=Screen[None])


def showing(app: RaceApp, kind: type[S], where: Callable[[S], bool] = lambda screen: True) -> Callable[[], S | None]:
    """A probe for :func:`eventually`: the current screen once it is a ``kind`` that ``where``
    accepts, mounted (a screen is current before its widgets are: a test that queried one at
    once under load found none)."""

    def probe() -> S | None:
        screen = app.screen
        return screen if isinstance(screen, kind) and screen.is_mounted and where(screen) else None

    return probe


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


async def lobby_table(app: RaceApp, pilot: Pilot[int]) -> DataTable[Any]:
    """From the home screen, the lobby's table of rooms."""
    await home(app)
    await choose(app, pilot, "lobby")
    lobby = await eventually(showing(app, LobbyScreen), what="the lobby")
    return lobby.query_one("#rooms", DataTable)


async def choose(app: RaceApp, pilot: Pilot[int], choice: str) -> None:
    """Highlight the home menu's entry ``choice`` (by id) with the arrow keys, then Enter. The
    menu is rebuilt from the server's frames after they arrive (a room's "Back to your race"
    entry comes after the client holds the room), so this waits for the entry, enabled, and
    looks for it again after each key (rows move as entries come and go)."""
    menu = app.screen.query_one("#menu", OptionList)

    def row() -> int | None:  # plus one: row 0 is found too (eventually waits for something true)
        rows = [n for n, option in enumerate(menu.options) if option.id == choice and not option.disabled]
        return rows[0] + 1 if rows else None

    while True:
        target = await eventually(row, what=f"{choice!r} in the home menu") - 1
        if menu.highlighted == target:
            break
        await step_highlight(app, menu, "down" if (menu.highlighted or 0) < target else "up")
    await pilot.press("enter")


def keys_for_move(game: Game, text: str) -> list[str]:
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
            await choose(app, pilot, "practice")
            # The form: Antares, deal 24, safe autoplay (the default).
            await pilot.press("enter", "down", "enter", "tab", *str(ANTARES_DEAL), "enter")
            screen = await eventually(showing(app, GameScreen), what="the race")
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
            await enter_move(app, pilot, line[1])
            replica.apply(replica.parse_move(line[1]))
            await eventually(lambda: mine() == [list(p) for p in replica.public_piles()], what="the typed move")
            assert app.screen.query_one("#notation", Input).value == ""

            # An illegal move: the server's reason, on the same screen, the board unchanged.
            await type_text(app, "QD>s2")
            send_keys(app, "enter")
            await eventually(lambda: "needs the card of its suit" in text_of(app, "#message"), what="the reason")
            assert text_of(app, "#message").startswith("✗ QD>s2: on a Scorpion pile, QD needs")
            assert app.screen is screen
            # Emptied, so the next move is not typed after it (the message line quotes it).
            assert app.screen.query_one("#notation", Input).value == ""

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
            send_keys(app, "enter")
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
                send_keys(app, "enter")
                replica.apply(replica.parse_move(text))
                await eventually(lambda: mine() == [list(p) for p in replica.public_piles()], what=text)
            assert replica.is_won()

            results = await eventually(showing(app, ResultsScreen), what="results")
            table = results.query_one("#results", DataTable)
            assert table.get_row_at(0)[:2] == ["1", "Ann (you)"]
            assert "✓ Fair" in text_of(app, "#fairness")
            assert f"deal {ANTARES_DEAL}" in text_of(app, "#fairness")

            # The replay: the server's steps applied to the starting board, no rules.
            await pilot.press("p")
            replay = await eventually(showing(app, ReplayScreen), what="replay")
            steps = len(line) + 2  # the line, the undone move and the undo
            assert text_of(app, "#replay-status") == "Step 0 of " + str(steps) + ": starting board"
            await pilot.press("right")
            assert text_of(app, "#replay-status") == f"Step 1 of {steps}: {line[0]}"
            await pilot.press("end")
            assert text_of(app, "#replay-status") == f"Step {steps} of {steps}: {line[-1]}"
            final = replay.query_one("#replay-board", BoardView).board
            assert sum(len(final[pile]) for pile in range(12, 16)) == 52


async def open_public_race(srv: Running) -> tuple[str, list[RaceClient]]:
    ann = await srv.connect("Ann")
    bob = await srv.connect("Bob")
    options = RoomOptions(public=True, spectator_delay=0)
    created = await ann.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
    assert isinstance(created, Joined)
    await bob.request(lambda i: JoinRoom(id=i, room=created.room))
    return created.room, [ann, bob]


async def test_the_lobby_shows_the_servers_pages_and_one_game_when_asked(serve: Serve, tmp_path: Path) -> None:
    async with serve(max_rooms_per_player=10, public_rooms_per_address=100) as srv:
        await srv.fifty_one_public_rooms()
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Sam"))
        async with app.run_test(size=(100, 30)) as pilot:
            table = await lobby_table(app, pilot)

            def games() -> list[str]:
                return [str(table.get_row_at(row)[1]) for row in range(table.row_count)]

            await eventually(lambda: table.row_count == LOBBY_PAGE, what="the first page")
            assert "Page 1" in text_of(app, "#lobby-message")
            assert "n: next page" in text_of(app, "#lobby-message")
            await pilot.press("n")
            await eventually(lambda: table.row_count == 1, what="the second page")
            assert "Page 2" in text_of(app, "#lobby-message")
            assert "n: next page" not in text_of(app, "#lobby-message")
            await pilot.press("p")
            await eventually(lambda: table.row_count == LOBBY_PAGE, what="the first page again")
            await pilot.press("g")
            await eventually(lambda: table.row_count == 25, what="Scorpion's rooms")
            assert set(games()) == {"scorpion"}
            assert "Scorpion only" in text_of(app, "#lobby-message")
            await pilot.press("g")
            await eventually(lambda: table.row_count == 26 and set(games()) == {"antares"}, what="Antares' rooms")


async def test_spectating_a_running_race_from_the_lobby(serve: Serve, tmp_path: Path) -> None:
    line = winning_line()
    async with serve(deal=str(ANTARES_DEAL)) as srv:
        code, racers = await open_public_race(srv)
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Sam"))
        async with app.run_test(size=(100, 30)) as pilot:
            table = await lobby_table(app, pilot)
            await eventually(lambda: table.row_count == 1, what="the room listed")
            assert table.get_row_at(0)[:3] == [code, "antares", "waiting"]
            await pilot.press("enter")
            screen = await eventually(showing(app, SpectateScreen), what="watching")
            assert isinstance(screen, SpectateScreen)

            for racer in racers:
                await racer.request(lambda i: Ready(id=i, room=code))
            await eventually(lambda: len(screen.panels) == 2, what="a panel for each racer")
            boards = {seat: panel.query_one(BoardView) for seat, panel in screen.panels.items()}
            await eventually(lambda: all(board.board for board in boards.values()), what="both boards")
            for text in line[:3]:
                await racers[0].request(playing(code, text))
            ann_board = await racers[0].wait_room(code, lambda m: m.view().racers[0].progress.moves == 3)
            await eventually(lambda: boards[0].board == ann_board.board(0), what="Ann's moves on screen")
            assert boards[1].board == [list(pile) for pile in new_antares().public_piles()]
            title = plain(screen.panels[0].query_one(".racer-title", Static))
            assert "Ann" in title
            assert "3 moves" in title

            assert screen.focus_seat == 0
            assert screen.panels[0].has_class("focused")
            assert "1 watching" in text_of(app, "#spectate-top")  # at least the one watching
            await pilot.press("right")
            assert screen.focus_seat == 1
            assert screen.panels[1].has_class("focused")
            assert not screen.panels[0].has_class("focused")
            ann_cards = ann_board.board(0)
            assert ann_cards is not None
            assert card_code(ann_cards[8][0] or 0) == line[0].split(">")[0]  # JD went to c1


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


async def test_the_home_menu_offers_quick_races_daily_challenges_leaderboards_and_statistics(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)):
            await home(app)
            options = {option.id: option for option in app.screen.query_one("#menu", OptionList).options}
            for offered in ("quick", "daily", "leaderboards", "stats", "practice"):
                assert not options[offered].disabled, offered
                assert "not offered" not in str(options[offered].prompt)
            # One entry, on Antares as the web client's daily page opens (g there: Scorpion).
            assert str(options["daily"].prompt) == "Daily challenge: Antares (g there: Scorpion)"


async def test_a_quick_race_waits_in_line_can_be_cancelled_and_lands_in_the_counting_down_room(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve(countdown=LONG_COUNTDOWN) as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            ann, line = ("antares", client_of(app).player), srv.hub.queued  # waiting on this node
            await choose(app, pilot, "quick")
            await eventually(lambda: isinstance(app.screen, QuickScreen), what="the quick race screen")
            await pilot.press("down", "enter")  # Scorpion, Antares
            await eventually(lambda: ann in line, what="Ann in the Antares line")
            assert text_of(app, "#quick-status").startswith("Antares: waiting for players… (Esc to cancel)")

            await pilot.press("escape")  # leaves the line: the server no longer has Ann in it
            await eventually(lambda: ann not in line, what="Ann out of the line")
            await eventually(lambda: text_of(app, "#quick-message") == "You left the line.", what="the message")
            assert isinstance(app.screen, QuickScreen)

            await pilot.press("enter")  # Antares again; then a rival comes along
            await eventually(lambda: ann in line, what="Ann in the line again")
            bob = await srv.connect("Bob")
            ticket = await bob.quick_match("antares")
            joined = await asyncio.wait_for(ticket.joined, PATIENCE)
            screen = await eventually(showing(app, GameScreen), what="the room")
            assert isinstance(screen, GameScreen)
            assert screen.code == joined.room
            await eventually(lambda: "get ready" in text_of(app, "#topbar"), what="the countdown")
            racers = text_of(app, "#racers")
            assert "Ann (you)" in racers
            assert "Bob" in racers


async def test_the_daily_challenge_played_to_the_leaderboard_and_statistics(
    serve_daily: ServeDaily, tmp_path: Path
) -> None:
    room_clock = AheadClock()
    async with serve_daily(clock=room_clock) as (srv, deal):
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await choose(app, pilot, "daily")
            await eventually(lambda: "Par:" in text_of(app, "#daily-today"), what="today's challenge", timeout=30)
            today = text_of(app, "#daily-today")
            assert f"Par: {deal.par} moves (the solver's solution)." in today
            assert "Today's deal is for accounts" in today  # Ann is a guest so far
            assert "The day ends in " in today
            assert f"sha256 {deal.commitment[:16]}…" in today
            # Only accounts have ranked attempts (the register screen has tests of its own: test_account.py).
            account = await client_of(app).request(lambda i: Register(id=i, name="Ann", password="a terminal password"))
            assert isinstance(account, AccountInfo)
            assert srv.server.storage is not None
            await registered_before_today(srv.server.storage, account.player)  # today's deal is for those
            await pilot.press("r")  # what today's deal is for Ann now
            await eventually(lambda: "not used yet" in text_of(app, "#daily-today"), what="the ranked attempt offered")

            send_keys(app, "s")
            screen = await eventually(showing(app, GameScreen), what="the race")
            assert isinstance(screen, GameScreen)
            await eventually(lambda: "Daily — ranked" in text_of(app, "#topbar"), what="the label")
            board = screen.query_one("#board", BoardView)
            await eventually(lambda: board.display and board.board, what="the deal after the countdown")
            assert "Daily — ranked" in text_of(app, "#topbar")
            # The clock, and under it the time left in the day, whole (issue 31: it was cut off).
            await eventually(lambda: "day ends in" in text_of(app, "#clock"), what="the time left")
            for size in ((160, 50), (80, 24)):
                await pilot.resize_terminal(*size)
                await pilot.pause()
                clock, left = text_of(app, "#clock").splitlines()
                shown = "\n".join(screen_lines(app))
                assert re.fullmatch(r"⏱ \d+:\d\d\.\d\d", clock)
                # Hours and minutes; minutes and seconds in the day's last hour.
                assert re.fullmatch(r"day ends in (\d+ h \d\d min|\d+ min \d\d s|\d+ s)", left), left
                assert left in shown, size
            await pilot.press("h")  # no hints in a ranked attempt, and the screen says so
            await eventually(lambda: "Hints are off in a ranked daily attempt" in text_of(app, "#message"))

            # The solver's line: its first moves typed in notation, the rest sent straight
            # over the UI's connection (drawing every move would make the test slow).
            await pilot.press("colon")
            notation = screen.query_one("#notation", Input)
            code, room = screen.code, client_of(app).rooms[screen.code]
            for played, text in enumerate(deal.solution[:3], start=1):
                notation.value = text
                send_keys(app, "enter")
                await eventually(lambda: room.view().racers[0].progress.moves >= played, what=text)  # noqa: B023
                # The screen says so on its next refresh, which may come after the room's copy changed.
                await eventually(lambda: text_of(app, "#message") == f"✓ {text}", what=f"✓ {text}")  # noqa: B023
            for text in deal.solution[3:]:  # at a person's pace on the room's clock: machine speed is refused
                room_clock.skip(PERSON_PACE)
                await client_of(app).request(playing(code, text))

            await eventually(lambda: isinstance(app.screen, ResultsScreen), what="the results")
            await eventually(lambda: "revealed when the day ends" in text_of(app, "#fairness"), what="no reveal")
            assert "ranked attempt" in str(app.screen.query_one("#results-title", Static).content)
            table = app.screen.query_one("#results", DataTable)
            assert table.get_row_at(0)[:2] == ["1", "Ann (you)"]
            assert re.fullmatch(r"\d+:\d\d\.\d\d", str(table.get_row_at(0)[2]))  # as on the boards
            assert "The day's board ranks: Finishers by time" in text_of(app, "#results-notes")

            assert srv.server.storage is not None  # the replayed solution, held as studied, cleared
            await cleared_by_a_moderator(srv.server.storage, "antares", account.player)
            await pilot.press("q")
            await home(app)
            await choose(app, pilot, "leaderboards")
            await eventually(lambda: isinstance(app.screen, LeaderboardScreen), what="the leaderboards")
            # On Antares first, as the daily challenge
            await eventually(lambda: "Antares · Today's daily" in text_of(app, "#board-title"), what="the board")
            assert "(top 1)" not in text_of(app, "#board-title")
            entries = app.screen.query_one("#board", DataTable)
            row = [str(cell) for cell in entries.get_row_at(0)]
            assert row[:2] == ["1", "Ann (you)"]
            assert row[3] == f"{deal.par} moves"
            assert text_of(app, "#board-me").startswith("You: rank 1, ")
            await pilot.press("a")  # the entries around Ann: only Ann
            await eventually(lambda: "around you" in text_of(app, "#board-title"), what="around me")
            assert [str(cell) for cell in entries.get_row_at(0)][:2] == ["1", "Ann (you)"]
            await pilot.press("b", "b", "b")  # the longest streak: one day, in the singular
            await eventually(lambda: "Longest streak" in text_of(app, "#board-title"), what="the streak board")
            await eventually(lambda: entries.row_count == 1, what="Ann's streak")
            assert [str(cell) for cell in entries.get_row_at(0)] == ["1", "Ann (you)", "1 day"]

            await pilot.press("q")
            await home(app)
            await choose(app, pilot, "stats")
            stats = await eventually(showing(app, StatsScreen), what="statistics")
            table = stats.query_one("#stats", DataTable)
            await eventually(lambda: table.row_count > 0, what="the statistics")
            assert table.get_row("Daily wins") == ["Daily wins", "0", "1"]  # Scorpion, Antares
            assert table.get_row("Daily attempts") == ["Daily attempts", "0", "1"]
            assert table.get_row("Longest streak") == ["Longest streak", "0 days", "1 day"]
