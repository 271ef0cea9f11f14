"""Races at any hour in the terminal UI when its player and their rival are on different nodes
of one service: two ``python -m server`` processes sharing one (embedded) Redis, driven by
Textual's test pilot. Ann, a plain client on node 1, challenges Bob by his player id and plays
her run; Bob's UI, on node 2, counts the invitation, plays it from the inbox, and then shows
who won. In an arena Ann's UI, on node 2, is paired with Bob on node 1: her race opens
naming the arena, and its standings show both players' points."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from textual.widgets import DataTable, OptionList

from client.lib.connection import RaceClient
from client.render.arenas import WAITING
from client.tui.app import RaceApp
from client.tui.arenas import ArenaScreen, ArenasScreen
from client.tui.challenges import ChallengesScreen
from client.tui.game import GameScreen
from client.tui.results import ResultsScreen
from protocol.messages import ChallengePlayer, JoinArena, Joined, Resign
from server.clock import now_ms
from server.competition.arena import Arena
from server.storage.arenas import ArenaStore
from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis
from tests.client.conftest import eventually
from tests.client.tui.test_challenges import inbox_says, open_challenges
from tests.client.tui.test_tui import choose, client_of, home, saved, showing, text_of
from tests.end_to_end.test_quick_match import SHORT_WAIT
from tests.nodes.conftest import NodeProcess, Service
from tests.nodes.conftest import embedded as embedded

pytestmark = pytest.mark.asyncio

ARENA = "ARENA2"


@pytest_asyncio.fixture
async def two_nodes(embedded: EmbeddedRedis, tmp_path: Path) -> AsyncIterator[tuple[Service, NodeProcess, NodeProcess]]:
    """Two server processes on one embedded Redis (arena races formed after a short wait):
    the service, node 1 and node 2. Every process and client is stopped after the test."""
    service = Service(embedded.url, tmp_path)
    try:
        first, second = await service.start(2, "--quick-match-wait", str(SHORT_WAIT))
        yield service, first, second
    finally:
        await service.close()


async def resign_when_racing(client: RaceClient, room: str) -> None:
    await client.wait_room(room, lambda m: m.view().state == "racing", timeout=15)
    await client.request(lambda i: Resign(id=i, room=room))


async def test_a_challenge_sent_on_one_node_is_played_from_the_inbox_on_the_other(
    two_nodes: tuple[Service, NodeProcess, NodeProcess], tmp_path: Path
) -> None:
    service, first, second = two_nodes
    ann = await service.connect(first, "Ann")
    app = RaceApp(second.url, config_dir=saved(tmp_path, "Bob"))
    async with app.run_test(size=(80, 24)) as pilot:
        await home(app)
        bob = client_of(app).player  # as a leaderboard or a room gives his id
        assert bob is not None
        joined = await ann.request(lambda i: ChallengePlayer(id=i, variant="antares", player=bob))
        assert isinstance(joined, Joined), joined
        challenge = (await ann.wait_room(joined.room, lambda m: m.view().challenge is not None)).view().challenge
        await resign_when_racing(ann, joined.room)  # Ann's run, on node 1

        # Bob's UI on node 2: the invitation is counted, then played from the inbox.
        await open_challenges(app, pilot)
        assert (await inbox_says(app, pilot, "Ann")).startswith(f"{challenge} Antares Ann")
        await eventually(lambda: "1 challenge waiting for you" in text_of(app, "#challenges-title"), what="count")
        await pilot.press("escape")
        menu = app.screen.query_one("#menu", OptionList)
        await eventually(
            lambda: "1 challenge waiting for you" in str(menu.get_option("challenges").prompt),
            what="the count on the home menu",
        )
        await choose(app, pilot, "challenges")
        await eventually(showing(app, ChallengesScreen), what="the Challenges screen")
        await eventually(lambda: "Enter plays it now" in text_of(app, "#inbox-detail"), what="the invitation")
        await pilot.press("enter")
        await eventually(showing(app, GameScreen), what="Bob's run")
        await eventually(lambda: "· racing ·" in text_of(app, "#topbar"), what="Bob's run racing")
        await pilot.press("R", "R")
        await eventually(showing(app, ResultsScreen), what="the run's results")
        await pilot.press("q")

        # Both resigned with nothing home: an exact tie goes to the challenger.
        await open_challenges(app, pilot)
        row = await inbox_says(app, pilot, "Ann won · your rating")
        assert row.startswith(f"{challenge} Antares Ann")
        detail = text_of(app, "#inbox-detail")
        assert "1. Ann" in detail
        assert "2. Bob" in detail
        assert "1 challenge waiting for you" not in text_of(app, "#challenges-title")


async def open_arena(redis_url: str) -> None:
    """A live Antares arena, stored as an operator's ``server.admin arena`` stores one."""
    storage = await Storage.connect(redis_url)
    try:
        now = now_ms()
        await ArenaStore(storage).create(Arena(ARENA, "antares", "Two-node arena", now - 1000, now + 600_000), now)
    finally:
        await storage.close()


async def test_an_arena_pairs_players_of_two_nodes_and_shows_both_in_its_standings(
    two_nodes: tuple[Service, NodeProcess, NodeProcess], embedded: EmbeddedRedis, tmp_path: Path
) -> None:
    service, first, second = two_nodes
    await open_arena(embedded.url)
    app = RaceApp(second.url, config_dir=saved(tmp_path, "Ann"))
    async with app.run_test(size=(80, 24)) as pilot:
        await home(app)
        await choose(app, pilot, "arenas")
        arenas = await eventually(showing(app, ArenasScreen), what="the arenas")
        table = arenas.query_one("#arenas", DataTable)
        await eventually(lambda: table.row_count == 1, what="the live arena")
        await pilot.press("enter")
        page = await eventually(showing(app, ArenaScreen), what="the arena's page")
        await eventually(lambda: "Two-node arena" in text_of(app, "#arena-title"), what="its name")
        await pilot.press("j")
        await eventually(lambda: text_of(app, "#arena-status").startswith(WAITING), what="waiting")

        bob = await service.connect(first, "Bob")  # on the other node
        await bob.request(lambda i: JoinArena(id=i, arena=ARENA))
        race = await eventually(showing(app, GameScreen), what="the race with Bob")
        await eventually(lambda: "Two-node arena (a: the arena)" in text_of(app, "#topbar"), what="the arena")
        await resign_when_racing(bob, race.code)
        await pilot.press("R", "R")
        await eventually(showing(app, ResultsScreen), what="the results")
        assert "Two-node arena: results of your race" in text_of(app, "#results-title")

        await pilot.press("a")
        assert await eventually(showing(app, ArenaScreen), what="back on the arena's page") is page
        standings = page.query_one("#standings", DataTable)

        def points() -> dict[str, int]:
            rows = [standings.get_row_at(n) for n in range(standings.row_count)]
            return {str(row[1]): int(str(row[2])) for row in rows if int(str(row[3])) == 1}

        # One race, scored for both: the winner's 2 points and the loser's 0, whichever node.
        await eventually(lambda: len(points()) == 2, what="the race scored for both")
        assert sorted(points().values()) == [0, 2]
        assert set(points()) == {"Ann (you)", "Bob"}
        assert "1 race" in text_of(app, "#arena-me")
