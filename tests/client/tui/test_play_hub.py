"""The Play hub in the terminal UI, driven by Textual's test pilot against a real server: ``p``
on the home menu opens it, each of its entries opens the screen of that way to race (and Esc
comes back), and a challenge waiting for the player is listed there, counted on the inbox's
entry, and played with Enter. An invitation that expires (the server pushes its result) leaves
the hub and the home menu's count at once, with a notification."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widgets import OptionList

from client.tui.app import RaceApp
from client.tui.arenas import ArenasScreen
from client.tui.botrace import BotRaceScreen
from client.tui.brackets import BracketsScreen
from client.tui.challenges import ChallengeFormScreen, ChallengesScreen
from client.tui.daily import DailyScreen
from client.tui.game import GameScreen
from client.tui.ghost import GhostScreen
from client.tui.play_hub import INVITATION, PlayHubScreen
from client.tui.quick import QuickScreen
from protocol.messages import ChallengePlayer, Joined, Resign
from tests.client.conftest import Serve, eventually
from tests.client.tui.test_challenges import invite, lapse
from tests.client.tui.test_tui import client_of, home, notices, saved, screen_lines, showing

pytestmark = pytest.mark.asyncio

#: Each entry of the hub, and the screen it opens.
OPENS: dict[str, type[Screen[None]]] = {
    "quick": QuickScreen,
    "bot": BotRaceScreen,
    "challenge": ChallengeFormScreen,
    "async": ChallengeFormScreen,
    "take": ChallengeFormScreen,
    "ghost": GhostScreen,
    "daily": DailyScreen,
    "arenas": ArenasScreen,
    "brackets": BracketsScreen,
    "inbox": ChallengesScreen,
}


async def open_hub(app: RaceApp, pilot: Pilot[int]) -> PlayHubScreen:
    """From the home menu, ``p``: the Play hub, its entries usable (connected)."""
    await home(app)
    await pilot.press("p")
    hub = await eventually(showing(app, PlayHubScreen), what="the Play hub")
    menu = hub.query_one("#play", OptionList)
    await eventually(lambda: menu.option_count and not menu.get_option("quick").disabled, what="usable entries")
    return hub


async def pick(app: RaceApp, pilot: Pilot[int], choice: str) -> None:
    """Highlight the hub's entry ``choice`` (by id) with the arrow keys, then Enter."""
    menu = app.screen.query_one("#play", OptionList)
    target = menu.get_option_index(choice)
    while menu.highlighted != target:
        await pilot.press("down" if (menu.highlighted or 0) < target else "up")
    await pilot.press("enter")


async def test_each_entry_of_the_play_hub_opens_its_screen(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            hub = await open_hub(app, pilot)
            shown = "\n".join(screen_lines(app))
            for words in ("Race now", "Race a bot", "Challenge a player", "Ghost race", "Your challenges"):
                assert words in shown, words  # every entry fits 80x24
            for choice, kind in OPENS.items():
                await pick(app, pilot, choice)
                opened = await eventually(showing(app, kind), what=f"{choice}: {kind.__name__}")
                if isinstance(opened, ChallengeFormScreen):
                    assert opened.kind == choice
                await pilot.press("escape")
                assert await eventually(showing(app, PlayHubScreen), what=f"back from {choice}") is hub


async def test_a_challenge_waiting_shows_on_the_hub_and_enter_plays_it(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        bob = await srv.connect("Bob")
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            player = client_of(app).player
            assert player is not None
            joined = await bob.request(lambda i: ChallengePlayer(id=i, variant="antares", player=player))
            assert isinstance(joined, Joined)
            code = joined.room
            await bob.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
            await bob.request(lambda i: Resign(id=i, room=code))
            challenge = bob.rooms[code].view().challenge
            assert challenge is not None

            hub = await open_hub(app, pilot)
            menu = hub.query_one("#play", OptionList)
            entry = f"{INVITATION}{challenge}"
            await eventually(lambda: any(option.id == entry for option in menu.options), what="the invitation")
            assert "1 challenge waiting for you" in str(menu.get_option("inbox").prompt)
            assert "Bob's Antares challenge" in str(menu.get_option(entry).prompt)
            await pick(app, pilot, entry)
            screen = await eventually(showing(app, GameScreen), what="Ann's run")
            room = await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
            assert room.view().challenge == challenge


async def test_an_invitation_that_expires_leaves_the_hub_and_the_home_menus_count(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await home(app)
            ann = client_of(app).player
            assert ann is not None
            first, second = await invite(srv, ann, "LAPSING1"), await invite(srv, ann, "LAPSING2")
            hub = await open_hub(app, pilot)
            menu = hub.query_one("#play", OptionList)
            await eventually(lambda: "2 challenges waiting" in str(menu.get_option("inbox").prompt), what="both")

            await lapse(srv, first)  # the hub is not asked again: the pushed result updates it
            await eventually(lambda: "1 challenge waiting" in str(menu.get_option("inbox").prompt), what="one left")
            listed = [option.id for option in menu.options if (option.id or "").startswith(INVITATION)]
            assert listed == [f"{INVITATION}{second.id}"]
            told = "Challenge LAPSING1 (Antares) against Bob expired before both runs were in"
            await eventually(lambda: told in notices(app), what="the notification")

            await pilot.press("escape")
            await home(app)
            entry = app.screen.query_one("#menu", OptionList)
            await eventually(lambda: "1 challenge waiting" in str(entry.get_option("challenges").prompt), what="1")
            await lapse(srv, second)  # nor is the home menu: the push updates its count
            await eventually(lambda: "waiting" not in str(entry.get_option("challenges").prompt), what="none left")
            await eventually(lambda: "LAPSING2 (Antares) against Bob expired" in notices(app), what="told")
