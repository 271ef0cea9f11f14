"""Arena tournaments in the terminal UI, driven by Textual's test pilot against a real server:
the home menu's Arena tournaments lists a live arena; Ann joins it on its page and waits, and
when Bob (a plain protocol client) joins too, her race opens, its top bar naming the arena. Once
both have resigned, the arena's page (still open under the race) joins again by itself; ``a``
goes back to it, where the standings show the winner's 2 points and the loser's 0 with Ann's
line marked, and that she waits for her next race; when Bob joins again, her next race opens.
A race opened without the arena's page (from the home menu's "Back to your race") names its
arena too, as its view does. The words of the standings are checked on their own too."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from client.render.arenas import WAITING
from client.tui.app import RaceApp
from client.tui.arenas import ArenaScreen, ArenasScreen
from client.tui.game import GameScreen
from client.tui.results import ResultsScreen
from protocol.messages import JoinArena, Resign
from server.clock import now_ms
from server.competition.arena import Arena
from server.features.arenas import line_of
from server.storage.arenas import ArenaStore
from tests.client.conftest import Running, Serve, eventually
from tests.client.tui.keyboard import send_keys
from tests.client.tui.test_tui import choose, client_of, home, saved, showing, text_of
from tests.end_to_end.test_quick_match import SHORT_WAIT
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio

ARENA = "ARENA1"
#: The arena's name, as it was scheduled.
NAME = "Evening arena"


async def open_arena(srv: Running) -> None:
    storage = srv.server.storage
    assert storage is not None
    now = now_ms()
    await ArenaStore(storage).create(Arena(ARENA, "antares", NAME, now - 1000, now + 600_000), now)


async def waiting(srv: Running) -> set[str]:
    """The players in the arena's line (the page says it waits as it sends its join: the line
    has the player once the server has read it)."""
    return {entry.player for entry in await srv.hub.line.waiting(line_of(ARENA))}


async def test_an_arena_joined_in_the_ui_pairs_scores_and_races_on(serve: Serve, tmp_path: Path) -> None:
    async with serve(quick_match_wait=SHORT_WAIT) as srv:
        await open_arena(srv)
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            ann = client_of(app).player
            await choose(app, pilot, "arenas")
            arenas = await eventually(showing(app, ArenasScreen), what="the arenas")
            table = arenas.query_one("#arenas", DataTable)
            await eventually(lambda: table.row_count == 1, what="the live arena")
            assert "live" in str(table.get_row_at(0)[2])
            send_keys(app, "enter")
            page = await eventually(showing(app, ArenaScreen), what="the arena's page")
            await eventually(lambda: "Evening arena" in text_of(app, "#arena-title"), what="its name")
            await pilot.press("j")
            await eventually(lambda: text_of(app, "#arena-status").startswith(WAITING), what="waiting")
            assert ann in await eventually_async(lambda: waiting(srv), lambda line: ann in line)

            bob = await srv.connect("Bob")
            await bob.request(lambda i: JoinArena(id=i, arena=ARENA))
            race = await eventually(showing(app, GameScreen), what="the race")
            room = race.code
            await bob.wait_room(room, lambda m: m.view().state == "racing", timeout=15)
            await eventually(lambda: "Evening arena (a: the arena)" in text_of(app, "#topbar"), what="the arena")
            await bob.request(lambda i: Resign(id=i, room=room))
            send_keys(app, "R", "R")
            await eventually(showing(app, ResultsScreen), what="the results")
            assert "Evening arena: results of your race" in text_of(app, "#results-title")
            assert "a: the arena" in text_of(app, "#results-hint")

            # The arena's page, under the race, joins its line again; a goes back to it.
            await eventually(lambda: page.waiting, what="in the line again")
            assert ann in await eventually_async(lambda: waiting(srv), lambda line: ann in line)
            await pilot.press("a")
            assert await eventually(showing(app, ArenaScreen), what="back on the arena's page") is page
            standings = page.query_one("#standings", DataTable)

            def points() -> dict[str, int]:
                rows = [standings.get_row_at(n) for n in range(standings.row_count)]
                return {str(row[1]): int(str(row[2])) for row in rows if int(str(row[3])) == 1}

            await eventually(lambda: len(points()) == 2, what="both races scored")
            assert sorted(points().values()) == [0, 2]
            assert set(points()) == {"Ann (you)", "Bob"}
            assert text_of(app, "#arena-status").startswith(WAITING)
            assert "1 race" in text_of(app, "#arena-me")

            await bob.request(lambda i: JoinArena(id=i, arena=ARENA))  # Bob races on: so does Ann
            await eventually(
                showing(app, GameScreen, lambda screen: screen.code != room),
                what="the next race",
            )
            # Racing: no more frames for the screens while the app closes.
            await eventually(lambda: "· racing ·" in text_of(app, "#topbar"), what="the next race on")


async def test_an_arena_race_names_its_arena_without_its_page(serve: Serve, tmp_path: Path) -> None:
    async with serve(quick_match_wait=SHORT_WAIT) as srv:
        await open_arena(srv)
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            ann = client_of(app)
            bob = await srv.connect("Bob")
            for racer in (ann, bob):  # Ann's line joined elsewhere than this UI's arena page
                await racer.request(lambda i: JoinArena(id=i, arena=ARENA))
            room = await eventually(lambda: next(iter(ann.rooms), None), what="Ann's race")
            await choose(app, pilot, f"room:{room}")  # the home menu's "Back to your race"
            await eventually(showing(app, GameScreen), what="the race")
            await eventually(lambda: f"{NAME} (a: the arena)" in text_of(app, "#topbar"), what="the arena's name")
            assert ARENA not in text_of(app, "#topbar")
            await bob.wait_room(room, lambda m: m.view().state == "racing", timeout=15)
            await bob.request(lambda i: Resign(id=i, room=room))
            send_keys(app, "R", "R")
            await eventually(showing(app, ResultsScreen), what="the results")
            assert f"{NAME}: results of your race" in text_of(app, "#results-title")
