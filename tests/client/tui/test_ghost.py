"""Ghost races in the terminal UI, driven by Textual's test pilot against a real server: ``g``
on a replay races that run, ``f`` on the daily screen the fastest run of yesterday's deal, and
the Play hub's ghost race form a kept best run on a deal (or a replay link's run); the ghost's
seat says "(ghost)" on the race and results screens, its progress moves on the run's recorded
timing, and the results say why nothing is rated."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import DataTable

from client.render.describe import racer_lines, shown_name
from client.tui import navigation as to
from client.tui.app import RaceApp
from client.tui.daily import DailyScreen
from client.tui.game import GameScreen
from client.tui.ghost import GhostScreen, linked_run
from client.tui.results import ReplayScreen, ResultsScreen
from protocol.messages import (
    AskDaily,
    CreateRoom,
    DailyInfo,
    Joined,
    Progress,
    Racer,
    Ready,
    RoomOptions,
    StartDaily,
)
from server.clock import now_ms
from server.competition.daily import previous_date, utc_date
from tests.client.conftest import Serve, ServeDaily, eventually, playing
from tests.client.tui.keyboard import send_keys
from tests.client.tui.test_play_hub import open_hub, pick
from tests.client.tui.test_roomtext import footer_cut
from tests.client.tui.test_tui import choose, client_of, home, saved, screen_lines, showing, text_of
from tests.known_deals import ANTARES_DEAL, win_known_deal, winning_line

pytestmark = pytest.mark.asyncio

#: Moves of the run raced as a ghost: enough for its progress to move.
PLAYED = 5


def ghost(ready: bool, connected: bool) -> Racer:
    progress = Progress(home=0, ordered=0, moves=0)
    return Racer(seat=1, player="ghost", name="Ann", progress=progress, ready=ready, connected=connected, ghost=True)


async def test_a_ghost_is_named_so_and_never_shown_waiting_or_away() -> None:
    assert shown_name(ghost(ready=True, connected=True)) == "Ann (ghost)"
    # A rematch resets the copy's readiness, but a ghost is ready for every race and never drops.
    shown = racer_lines([ghost(ready=False, connected=False)], me=0, started=None).plain
    assert "Ann (ghost)" in shown
    assert "not ready" not in shown
    assert "disconnected" not in shown


async def test_g_on_a_replay_races_that_run_as_a_ghost(serve: Serve, tmp_path: Path) -> None:
    line = winning_line()
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            client = client_of(app)
            options = RoomOptions(max_racers=1, deal=str(ANTARES_DEAL))
            joined = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
            assert isinstance(joined, Joined)
            first = joined.room
            app.post_message(to.Navigate(to.Game(first, joined.seat)))
            await client.request(lambda i: Ready(id=i, room=first))
            await client.wait_room(first, lambda m: m.view().state == "racing", timeout=15)
            for text in line[:PLAYED]:
                await client.request(playing(first, text))
            await eventually(showing(app, GameScreen), what="the race")
            send_keys(app, "R", "R")
            await eventually(showing(app, ResultsScreen), what="the results")
            send_keys(app, "p")
            await eventually(showing(app, ReplayScreen), what="the replay")
            await eventually(lambda: "g Race it" in (screen_lines(app) or [""])[-1], what="the replay's keys")

            await pilot.press("g")
            screen = await eventually(
                showing(app, GameScreen, lambda screen: screen.code != first),
                what="the ghost race",
            )
            code = screen.code
            room = await client.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
            racers = room.view().racers
            assert [(racer.name, racer.ghost) for racer in racers] == [("Ann", False), ("Ann", True)]
            await eventually(lambda: "Ann (ghost)" in text_of(app, "#racers"), what="the ghost's line")
            # Its progress follows the run, and its board stays hidden while you race.
            await client.wait_room(code, lambda m: m.view().racers[1].progress.moves == PLAYED, timeout=15)
            await eventually(lambda: f"{PLAYED} moves" in text_of(app, "#racers"), what="the ghost's moves")
            assert room.board(1) is None
            # The run ended in a resignation: the ghost does too, and the screen says so.
            await eventually(lambda: "Ann (ghost) resigned." in text_of(app, "#message"), what="the ghost's end")

            send_keys(app, "R", "R")
            results = await eventually(
                showing(app, ResultsScreen, lambda screen: screen.code == code),
                what="the ghost race's results",
            )
            table = results.query_one("#results", DataTable)
            await eventually(lambda: table.row_count == 2, what="both ranked")
            assert {str(table.get_row_at(row)[1]) for row in range(2)} == {"Ann (ghost)", "Ann (you)"}
            assert "a race against a ghost (a recorded run) is never rated" in text_of(app, "#results-notes")


async def test_f_on_the_daily_screen_races_yesterdays_fastest_run(serve_daily: ServeDaily, tmp_path: Path) -> None:
    async with serve_daily() as (srv, _):
        assert srv.hub.daily is not None
        yesterday = previous_date(utc_date(now_ms()))
        await srv.hub.daily.get("antares", yesterday)
        # Bob wins yesterday's deal (as practice: the day is over): the fastest run kept on it.
        bob = await srv.connect("Bob")
        info = await bob.request(lambda i: AskDaily(id=i, variant="antares"))
        assert isinstance(info, DailyInfo)
        assert info.yesterday is not None
        joined = await bob.request(lambda i: StartDaily(id=i, variant="antares", date=yesterday))
        assert isinstance(joined, Joined)
        await bob.wait_room(joined.room, lambda m: m.view().state == "racing", timeout=15)
        for text in info.yesterday.solution:
            await bob.request(playing(joined.room, text))
        await bob.wait_room(joined.room, lambda m: m.view().results is not None, timeout=15)

        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            await choose(app, pilot, "daily")
            await eventually(showing(app, DailyScreen), what="the daily challenge")
            await eventually(lambda: "f: race the ghost" in text_of(app, "#daily-yesterday"), what="yesterday's deal")
            await pilot.pause()
            assert await footer_cut(app) == []
            send_keys(app, "f")
            screen = await eventually(showing(app, GameScreen), what="the ghost race")
            room = await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
            assert [(racer.name, racer.ghost) for racer in room.view().racers] == [("Ann", False), ("Bob", True)]
            await eventually(lambda: "Bob (ghost)" in text_of(app, "#racers"), what="the ghost's line")


async def test_a_replay_link_or_a_room_code_names_a_run() -> None:
    assert linked_run("http://127.0.0.1:8765/#/replay/k7q2m9xd/1") == ("K7Q2M9XD", 1)
    assert linked_run("https://race.example/r/K7Q2M9XD") == ("K7Q2M9XD", 0)
    assert linked_run(" K7Q2M9XD/3 ") == ("K7Q2M9XD", 3)
    assert linked_run("K7Q2M9XD") == ("K7Q2M9XD", 0)
    assert linked_run("K7Q2M9XD!") is None


async def test_the_ghost_race_form_races_the_fastest_run_kept_on_a_deal(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        # Bob wins the deal: the fastest run kept on it (Ann has none of her own).
        await win_known_deal(await srv.connect("Bob"))

        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await open_hub(app, pilot)
            await pick(app, pilot, "ghost")
            form = await eventually(showing(app, GhostScreen), what="the ghost race form")
            await pilot.press("tab", "enter", "down", "enter")  # the game: Antares
            await pilot.press("tab", *str(ANTARES_DEAL), "enter")  # whose run: yours, as it starts
            await eventually(lambda: form.query_one("#ghost-message").has_class("error"), what="the refusal")
            assert "race the ghost:" in text_of(app, "#ghost-message")
            await pilot.press("tab", "enter", "down", "enter")  # whose run: the fastest
            await pilot.click("#ghost-race")
            screen = await eventually(showing(app, GameScreen), what="the ghost race")
            room = await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
            assert [(racer.name, racer.ghost) for racer in room.view().racers] == [("Ann", False), ("Bob", True)]
            await eventually(lambda: "Bob (ghost)" in text_of(app, "#racers"), what="the ghost's line")
