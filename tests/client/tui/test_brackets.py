"""Bracket tournaments in the terminal UI, driven by Textual's test pilot against a real server:
Ann finds a bracket on the Brackets screen, registers on its page, and when round 1 opens plays
her run from there; its results say the round's results come when it closes, with no replay
nor rematch. Once the three other players' runs are in, the round closes: the page shows its
places with the two who went on marked, and the list shows round 2 being played. The player is
marked by their id when another player has their name, in the rounds and in the final
standings. When a round closes while Ann looks at
her run's results, the server's push tells her she goes on and refreshes the page under it,
whose revealed deal is checked against the commitment it showed before. When a bracket she
registered for starts, the push tells her to play round 1 wherever she is; when it is cancelled
(too few players), it tells her so and refreshes its page under the screen she looks at."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import msgspec
import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Static

from client.lib.connection import RaceClient
from client.render.brackets import BRACKET_WAIT, WENT_ON, WON
from client.tui.app import RaceApp
from client.tui.brackets import BracketScreen, BracketsScreen
from client.tui.game import GameScreen
from client.tui.help import HelpScreen
from client.tui.home import HomeScreen
from client.tui.results import ResultsScreen
from protocol.messages import JoinBracket
from server.clock import now_ms
from server.competition.bracket import SHOW_UP_MS, Bracket
from server.storage.brackets import BracketStore
from tests.client.conftest import Running, Serve, eventually, row_text
from tests.client.tui.keyboard import send_keys
from tests.client.tui.test_roomtext import footer_cut
from tests.client.tui.test_tui import choose, client_of, home, notices, plain, saved, showing, text_of
from tests.features.test_brackets import play, view
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio

CODE = "FRIDAY"


async def open_listed(app: RaceApp, pilot: Pilot[int], words: str) -> None:
    """From the home menu, the Brackets screen; once its first line says ``words``, its page."""
    await home(app)
    await choose(app, pilot, "brackets")
    listing = await eventually(showing(app, BracketsScreen), what="the Brackets screen")
    table = listing.query_one("#brackets", DataTable)
    await eventually(lambda: words in row_text(table), what=f"{words!r} in the list")
    await pilot.press("enter")


async def test_a_bracket_round_is_played_from_its_page_and_closes_with_its_places(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        assert srv.server.storage is not None
        store = BracketStore(srv.server.storage)
        # It starts when the test says (below), once everyone has registered.
        await store.create(Bracket(CODE, "scorpion", "Friday bracket", now_ms() + 600_000, 8, 5), now_ms())
        others = {name: await srv.connect(name) for name in ("Bob", "Cat", "Dan")}
        for racer in others.values():
            await racer.request(lambda i: JoinBracket(id=i, bracket=CODE))

        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await open_listed(app, pilot, "5 places left")
            await eventually(showing(app, BracketScreen), what="the bracket's page")
            await eventually(lambda: "j: register" in text_of(app, "#bracket-status"), what="the page")
            assert "No round yet" in text_of(app, "#bracket-rounds")
            assert await footer_cut(app) == []
            await pilot.press("j")
            await eventually(lambda: "You are registered" in text_of(app, "#bracket-status"), what="registered")

            await store.change(CODE, lambda bracket: msgspec.structs.replace(bracket, starts=now_ms()))
            await eventually(lambda: "Play your round 1 now" in text_of(app, "#bracket-status"), what="round 1")
            assert "Ann (you)" in text_of(app, "#bracket-rounds")
            send_keys(app, "p")
            run = await eventually(showing(app, GameScreen), what="Ann's run")
            room = await client_of(app).wait_room(run.code, lambda m: m.view().state == "racing", timeout=15)
            assert room.view().bracket == CODE
            send_keys(app, "R", "R")
            await eventually(showing(app, ResultsScreen), what="the run's results")
            # One attempt, secret until the round closes: no fairness check, replay or rematch yet.
            assert BRACKET_WAIT in text_of(app, "#fairness")
            assert "rematch" not in text_of(app, "#results-hint")

            for racer in others.values():
                await play(racer, CODE)
            await pilot.press("q")
            await open_listed(app, pilot, "round 2 being played")
            await eventually(lambda: "Round 1 · closed" in text_of(app, "#bracket-rounds"), what="round 1 closed")
            rounds = text_of(app, "#bracket-rounds")
            assert rounds.count(WENT_ON) == 2  # the better half of four
            assert "4. " in rounds
            assert "Round 2 · open" in rounds
            assert "✓ Fair: deal " in rounds  # its deal, checked against the commitment shown before


async def registered(srv: Running, names: tuple[str, ...]) -> dict[str, RaceClient]:
    """A bracket ``CODE`` starting when the test says (see :func:`start`) with the players
    ``names`` (plain clients) registered: their clients."""
    assert srv.server.storage is not None
    await BracketStore(srv.server.storage).create(
        Bracket(CODE, "scorpion", "Friday bracket", now_ms() + 600_000, 8, 5), now_ms()
    )
    others = {name: await srv.connect(name) for name in names}
    for racer in others.values():
        await racer.request(lambda i: JoinBracket(id=i, bracket=CODE))
    return others


async def register_and_start(srv: Running, app: RaceApp, pilot: Pilot[int]) -> BracketScreen:
    """From the home menu, Ann registers on the bracket's page; the bracket starts: its page,
    showing round 1 open."""
    await open_listed(app, pilot, "places left")
    page = await eventually(showing(app, BracketScreen), what="the bracket's page")
    await eventually(lambda: "j: register" in text_of(app, "#bracket-status"), what="the page")
    await pilot.press("j")
    await eventually(lambda: "You are registered" in text_of(app, "#bracket-status"), what="registered")
    assert srv.server.storage is not None
    await BracketStore(srv.server.storage).change(CODE, lambda b: msgspec.structs.replace(b, starts=now_ms()))
    await eventually(lambda: "Play your round 1 now" in text_of(app, "#bracket-status"), what="round 1")
    return page


async def test_you_are_marked_by_your_id_when_another_player_has_your_name(
    serve: Serve, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(BracketScreen, "REFRESH_SECONDS", 0.2)  # the page asks again by itself: soon
    async with serve() as srv:
        others = await registered(srv, ("Ann", "Bob", "Cat"))  # another Ann
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await register_and_start(srv, app, pilot)
            players = text_of(app, "#bracket-rounds").splitlines()[1]
            assert sorted(players.strip().split(", ")) == ["Ann", "Ann (you)", "Bob", "Cat"]

            # Every run of both rounds, down to the winner (the page asks again by itself).
            me = client_of(app)
            racers = {racer.player: racer for racer in (me, *others.values())}
            for racer in racers.values():
                await play(racer, CODE)
            final = await eventually_async(partial(view, me, CODE), lambda v: len(v.rounds) == 2)
            for player in final.rounds[1].player_ids or []:
                await play(racers[player], CODE)
            over = await eventually_async(partial(view, me, CODE), lambda v: v.bracket.state == "over")
            await eventually(lambda: "Final standings" in text_of(app, "#bracket-standings"), what="the standings")
            standings = text_of(app, "#bracket-standings").splitlines()[1:]
            assert [line.split()[1] for line in standings].count("Ann") == 2
            assert over.standing_ids is not None
            assert over.bracket.winner_id is not None
            yours, winners = over.standing_ids.index(str(me.player)), over.standing_ids.index(over.bracket.winner_id)
            # Only the player's own line says "(you)", and the winner's the cup, whatever the names.
            assert [n for n, line in enumerate(standings) if "(you)" in line] == [yours]
            assert [n for n, line in enumerate(standings) if WON in line] == [winners]


async def test_a_round_closed_is_told_and_refreshes_the_page_with_its_deal_checked(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve() as srv:
        others = await registered(srv, ("Bob", "Cat", "Dan"))
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            page = await register_and_start(srv, app, pilot)  # round 1's commitment seen here
            send_keys(app, "p")
            run = await eventually(showing(app, GameScreen), what="Ann's run")
            await client_of(app).wait_room(run.code, lambda m: m.view().state == "racing", timeout=15)
            send_keys(app, "R", "R")
            await eventually(showing(app, ResultsScreen), what="the run's results")
            await play(others["Dan"], CODE)
            # Bob and Cat never start: their time to show up ends, the round closes, and of its
            # two runs, Ann's and Dan's, both go on.
            assert srv.server.storage is not None
            await BracketStore(srv.server.storage).change(
                CODE,
                lambda b: msgspec.structs.replace(
                    b, rounds=[msgspec.structs.replace(b.rounds[0], opens=b.rounds[0].opens - SHOW_UP_MS)]
                ),
            )
            told = "Friday bracket: round 1 closed and you go on. Play round 2 now: start within"
            await eventually(lambda: told in notices(app), what="the notification")
            assert isinstance(app.screen, ResultsScreen)
            # The page under the results was refreshed by the push (it is not asked while covered).
            rounds = page.query_one("#bracket-rounds", Static)
            await eventually(lambda: "Round 2 · open" in plain(rounds), what="the page refreshed")
            shown = plain(rounds)
            assert "Round 1 · closed" in shown
            assert "✓ Fair: deal " in shown
            assert "which you saw before the reveal" in shown
            assert "Play your round 2 now" in plain(page.query_one("#bracket-status", Static))


async def start(srv: Running) -> None:
    """Bracket ``CODE``'s start time comes now (the server starts it, or cancels it, at once)."""
    assert srv.server.storage is not None
    await BracketStore(srv.server.storage).change(CODE, lambda b: msgspec.structs.replace(b, starts=now_ms()))


async def test_a_bracket_starting_is_told_on_the_home_screen(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        await registered(srv, ("Bob", "Cat", "Dan"))
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24), notifications=True):
            await home(app)
            await client_of(app).request(lambda i: JoinBracket(id=i, bracket=CODE))
            await start(srv)
            told = "Friday bracket started: play round 1 now: start within"
            await eventually(lambda: told in notices(app), what="the notification")
            shown = notices(app)
            assert "(Bracket tournaments, then p on its page)" in shown
            assert isinstance(app.screen, HomeScreen)
            assert shown.count(told) == 1


async def test_a_cancelled_bracket_is_told_and_refreshes_its_page_under_another_screen(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve() as srv:
        await registered(srv, ("Bob",))  # with Ann, two of the four a bracket needs
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await open_listed(app, pilot, "places left")
            page = await eventually(showing(app, BracketScreen), what="the bracket's page")
            await eventually(lambda: "j: register" in text_of(app, "#bracket-status"), what="the page")
            await pilot.press("j")
            await eventually(lambda: "You are registered" in text_of(app, "#bracket-status"), what="registered")
            await pilot.press("question_mark")  # the help covers the page: it is not asked while covered
            await eventually(showing(app, HelpScreen), what="the help")
            await start(srv)
            told = "Friday bracket was cancelled: too few players registered."
            await eventually(lambda: told in notices(app), what="the notification")
            assert isinstance(app.screen, HelpScreen)
            status = page.query_one("#bracket-status", Static)
            await eventually(lambda: "Cancelled: fewer than 4" in plain(status), what="the page refreshed")
