"""The Play hub in the terminal UI, driven by Textual's test pilot against a real server: ``p``
on the home menu opens it, each of its entries opens the screen of that way to race (and Esc
comes back), and a challenge waiting for the player is listed there, counted on the inbox's
entry, and played with Enter. A challenge the server pushes as waiting for the player's run
joins the hub and the home menu's count at once, and an invitation that expires (the server
pushes its result) leaves them, each with a notification."""

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
from client.tui.home import HomeScreen
from client.tui.play_hub import INVITATION, PlayHubScreen
from client.tui.quick import QuickScreen
from protocol.messages import ChallengePlayer, Joined, Resign
from tests.client.conftest import Serve, eventually
from tests.client.tui.keyboard import step_highlight
from tests.client.tui.test_challenges import LAPSING_MS, LAPSING_PATIENCE, invite
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
        await step_highlight(app, menu, "down" if (menu.highlighted or 0) < target else "up")
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


def count_on(menu: OptionList, entry: str) -> str:
    """What a menu's entry ``entry`` (by id) says ("" while the menu has none)."""
    return str(menu.get_option(entry).prompt) if menu.option_count else ""


def home_count(app: RaceApp) -> str:
    """The home menu's Challenges entry, shown or under another screen."""
    under = next(screen for screen in app.screen_stack if isinstance(screen, HomeScreen))
    return count_on(under.query_one("#menu", OptionList), "challenges")


async def hub_over_home(app: RaceApp, pilot: Pilot[int], waiting: str) -> PlayHubScreen:
    """The Play hub over the home menu, once each has asked for the inbox since the test's
    invitations were stored and says ``waiting`` ("2 challenges waiting"): neither asks again
    (the hub is not left, the home menu not shown), so from then on only what the server pushes
    changes what they say."""
    hub = await open_hub(app, pilot)
    await eventually(lambda: waiting in count_on(hub.query_one("#play", OptionList), "inbox"), what="the hub's count")
    await pilot.press("escape")
    await home(app)
    await eventually(lambda: waiting in home_count(app), what="the home menu's count")  # asked on its return
    hub = await open_hub(app, pilot)
    await eventually(lambda: waiting in count_on(hub.query_one("#play", OptionList), "inbox"), what="the hub's count")
    return hub


async def test_a_challenge_pushed_as_waiting_shows_at_once_and_enter_plays_it(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        bob = await srv.connect("Bob")
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await home(app)
            player = client_of(app).player
            assert player is not None
            await invite(srv, player, "EARLIER1")
            hub = await hub_over_home(app, pilot, "1 challenge waiting")
            menu = hub.query_one("#play", OptionList)

            # Bob challenges Ann by her player id (as a leaderboard or a room gives it) and plays.
            joined = await bob.request(lambda i: ChallengePlayer(id=i, variant="antares", player=player))
            assert isinstance(joined, Joined)
            code = joined.room
            await bob.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
            await bob.request(lambda i: Resign(id=i, room=code))
            challenge = bob.rooms[code].view().challenge
            assert challenge is not None
            # Nobody pressed r: the challenge pushed as waiting for her is listed, counted and told.
            entry = f"{INVITATION}{challenge}"
            await eventually(lambda: any(option.id == entry for option in menu.options), what="the invitation")
            assert "2 challenges waiting for you" in count_on(menu, "inbox")
            assert "2 challenges waiting for you" in home_count(app)
            assert "Bob's Antares challenge" in count_on(menu, entry)
            told = "Bob challenges you (Antares, rated): play the same deal within 23 h"
            await eventually(lambda: told in notices(app), what="the notification")

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
            await invite(srv, ann, "LAPSING1", window_ms=LAPSING_MS)
            staying = await invite(srv, ann, "STAYING1")
            hub = await hub_over_home(app, pilot, "2 challenges waiting")
            menu = hub.query_one("#play", OptionList)

            # The first one's window closes: the pushed result updates the hub and the home menu.
            await eventually(
                lambda: "1 challenge waiting" in count_on(menu, "inbox"), timeout=LAPSING_PATIENCE, what="one left"
            )
            listed = [option.id for option in menu.options if (option.id or "").startswith(INVITATION)]
            assert listed == [f"{INVITATION}{staying.id}"]
            assert "1 challenge waiting" in home_count(app)
            told = "Challenge LAPSING1 (Antares) against Bob expired before both runs were in"
            await eventually(lambda: told in notices(app), what="the notification")
