"""Races at any hour in the terminal UI when its player and their rival are on different nodes
of one service: two ``python -m server`` processes sharing one (embedded) Redis, driven by
Textual's test pilot. Ann, a plain client on node 1, challenges Bob by his player id and plays
her run; Bob's UI, on node 2, counts the invitation, plays it from the inbox, and then shows
who won. A run Ann won on node 1 is raced as a ghost from Bob's UI on node 2 (the fastest run
kept on its deal), its progress beside his board. Ann's async match run, played from her UI on
node 1, is the one Bob's async match on node 2 plays; each UI's inbox then shows who won. In an
arena Ann's UI, on node 2, is paired with Bob on node 1: her race opens naming the arena, and
its standings show both players' points. Bob's UI on node 2 registers for a bracket with
players of both nodes, plays his round, and shows it closed with its places."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from pathlib import Path

import msgspec
import pytest
import pytest_asyncio
from textual.widgets import DataTable, OptionList

from client.lib.connection import RaceClient
from client.render.arenas import WAITING
from client.render.brackets import WENT_ON
from client.tui.app import RaceApp
from client.tui.arenas import ArenaScreen, ArenasScreen
from client.tui.brackets import BracketScreen
from client.tui.challenges import ChallengesScreen
from client.tui.game import GameScreen
from client.tui.ghost import GhostScreen
from client.tui.results import ResultsScreen
from protocol.messages import ChallengePlayer, JoinArena, JoinBracket, Joined, Resign
from server.clock import now_ms
from server.competition.arena import Arena
from server.competition.bracket import Bracket
from server.storage.arenas import ArenaStore
from server.storage.best_runs import BestRuns
from server.storage.brackets import BracketStore
from server.storage.challenges import ChallengeStore
from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis
from tests.client.conftest import eventually
from tests.client.tui.keyboard import send_keys
from tests.client.tui.test_brackets import open_listed
from tests.client.tui.test_challenges import inbox_says, open_challenges, play_and_resign
from tests.client.tui.test_play_hub import open_hub, pick
from tests.client.tui.test_tui import choose, client_of, home, saved, showing, text_of
from tests.end_to_end.test_quick_match import SHORT_WAIT
from tests.features.test_brackets import play
from tests.known_deals import ANTARES_DEAL, win_known_deal
from tests.nodes.conftest import NodeProcess, Service
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio(loop_scope="module")

ARENA = "ARENA2"
BRACKET = "BRACKET2"


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def embedded(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[EmbeddedRedis]:
    """The embedded Redis of this module's two nodes, for the tests to store what they set up."""
    redis = EmbeddedRedis(tmp_path_factory.mktemp("two-nodes") / "redis")
    await redis.start()
    try:
        yield redis
    finally:
        await redis.stop()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def two_nodes(
    embedded: EmbeddedRedis, tmp_path_factory: pytest.TempPathFactory
) -> AsyncIterator[tuple[Service, NodeProcess, NodeProcess]]:
    """Two server processes on one embedded Redis (arena races formed after a short wait):
    the service, node 1 and node 2, shared by this module's tests (starting them is most of a
    test's time; each test has players, and an arena or bracket, of its own). Every process and
    client is stopped after the module."""
    service = Service(embedded.url, tmp_path_factory.mktemp("nodes"))
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
        send_keys(app, "enter")
        await eventually(showing(app, GameScreen), what="Bob's run")
        await eventually(lambda: "· racing ·" in text_of(app, "#topbar"), what="Bob's run racing")
        send_keys(app, "R", "R")
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


def ghost_moves(app: RaceApp) -> int:
    """The moves the racers' panel shows for Ann's ghost (0 while it shows none)."""
    found = re.search(r"Ann \(ghost\).*?(\d+) moves?", text_of(app, "#racers"), re.DOTALL)
    return int(found.group(1)) if found else 0


async def test_a_run_won_on_one_node_is_raced_as_a_ghost_from_the_other(
    two_nodes: tuple[Service, NodeProcess, NodeProcess], embedded: EmbeddedRedis, tmp_path: Path
) -> None:
    service, first, second = two_nodes
    await win_known_deal(await service.connect(first, "Ann"))
    storage = await Storage.connect(embedded.url)
    try:  # kept once the race is recorded, for every node to find
        runs = BestRuns(storage)
        await eventually_async(lambda: runs.ranked("antares", str(ANTARES_DEAL), 1), lambda kept: kept is not None)
    finally:
        await storage.close()

    app = RaceApp(second.url, config_dir=saved(tmp_path, "Bob"))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_hub(app, pilot)
        await pick(app, pilot, "ghost")
        await eventually(showing(app, GhostScreen), what="the ghost race form")
        await pilot.press("tab", "enter", "down", "enter")  # the game: Antares
        await pilot.press("tab", *str(ANTARES_DEAL))
        await pilot.press("tab", "enter", "down", "enter")  # whose run: the fastest
        await pilot.click("#ghost-race")
        screen = await eventually(showing(app, GameScreen), what="the ghost race")
        room = await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
        assert [(racer.name, racer.ghost) for racer in room.view().racers] == [("Bob", False), ("Ann", True)]
        # Its progress moves on Ann's recorded timing, beside Bob's own board.
        await eventually(lambda: ghost_moves(app) >= 3, what="the ghost's moves")
        assert room.board(0) is not None
        assert "Bob (you)" in text_of(app, "#racers")


async def test_an_async_match_on_one_node_plays_the_run_waiting_from_the_other(
    two_nodes: tuple[Service, NodeProcess, NodeProcess], embedded: EmbeddedRedis, tmp_path: Path
) -> None:
    _, first, second = two_nodes
    ann_config, bob_config = saved(tmp_path / "ann", "Ann"), saved(tmp_path / "bob", "Bob")
    app = RaceApp(first.url, config_dir=ann_config)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_challenges(app, pilot)
        code = await play_and_resign(app, pilot, "a")  # nobody waits: Ann's run, on node 1, waits
    storage = await Storage.connect(embedded.url)
    try:  # offered to async matches once recorded (just after its end)
        challenges = ChallengeStore(storage)
        await eventually_async(lambda: challenges.get(code), lambda found: found is not None and bool(found.runs))
    finally:
        await storage.close()

    app = RaceApp(second.url, config_dir=bob_config)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_challenges(app, pilot)
        assert await play_and_resign(app, pilot, "a") == code  # Ann's deal, through node 2
        await pilot.press("q")
        await open_challenges(app, pilot)
        # Both resigned with nothing home: an exact tie goes to the challenger.
        row = await inbox_says(app, pilot, "Ann won · your rating")
        assert row.startswith(f"{code} Scorpion Ann")
        assert "2. Bob" in text_of(app, "#inbox-detail")

    app = RaceApp(first.url, config_dir=ann_config)
    async with app.run_test(size=(80, 24)) as pilot:
        await open_challenges(app, pilot)
        assert "you won · your rating" in await inbox_says(app, pilot, "you won")
        assert "2. Bob" in text_of(app, "#inbox-detail")


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
        send_keys(app, "enter")
        page = await eventually(showing(app, ArenaScreen), what="the arena's page")
        await eventually(lambda: "Two-node arena" in text_of(app, "#arena-title"), what="its name")
        await pilot.press("j")
        await eventually(lambda: text_of(app, "#arena-status").startswith(WAITING), what="waiting")

        bob = await service.connect(first, "Bob")  # on the other node
        await bob.request(lambda i: JoinArena(id=i, arena=ARENA))
        race = await eventually(showing(app, GameScreen), what="the race with Bob")
        await eventually(lambda: "Two-node arena (a: the arena)" in text_of(app, "#topbar"), what="the arena")
        await resign_when_racing(bob, race.code)
        send_keys(app, "R", "R")
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


async def test_players_of_two_nodes_play_one_bracket_and_the_ui_shows_its_round_close(
    two_nodes: tuple[Service, NodeProcess, NodeProcess], embedded: EmbeddedRedis, tmp_path: Path
) -> None:
    service, first, second = two_nodes
    storage = await Storage.connect(embedded.url)
    try:
        store = BracketStore(storage)
        # It starts when the test says (below), once everyone has registered.
        await store.create(Bracket(BRACKET, "scorpion", "Two-node bracket", now_ms() + 600_000, 8, 5), now_ms())
        others = [await service.connect(node, name) for node, name in ((first, "Ann"), (first, "Cat"), (second, "Dan"))]
        for racer in others:
            await racer.request(lambda i: JoinBracket(id=i, bracket=BRACKET))

        app = RaceApp(second.url, config_dir=saved(tmp_path, "Bob"))
        async with app.run_test(size=(80, 24)) as pilot:
            await open_listed(app, pilot, "5 places left")
            await eventually(showing(app, BracketScreen), what="the bracket's page")
            await eventually(lambda: "j: register" in text_of(app, "#bracket-status"), what="the page")
            await pilot.press("j")
            await eventually(lambda: "You are registered" in text_of(app, "#bracket-status"), what="registered")

            await store.change(BRACKET, lambda bracket: msgspec.structs.replace(bracket, starts=now_ms()))
            # Round 1, opened by whichever node runs the bracket.
            await eventually(lambda: "Play your round 1 now" in text_of(app, "#bracket-status"), what="round 1")
            send_keys(app, "p")
            run = await eventually(showing(app, GameScreen), what="Bob's run")
            room = await client_of(app).wait_room(run.code, lambda m: m.view().state == "racing", timeout=15)
            assert room.view().bracket == BRACKET
            send_keys(app, "R", "R")
            await eventually(showing(app, ResultsScreen), what="the run's results")

            for racer in others:  # two runs through node 1, one through node 2
                await play(racer, BRACKET)
            await pilot.press("q")
            await open_listed(app, pilot, "round 2 being played")
            await eventually(lambda: "Round 1 · closed" in text_of(app, "#bracket-rounds"), what="round 1 closed")
            rounds = text_of(app, "#bracket-rounds")
            assert rounds.count(WENT_ON) == 2  # the better half of four
            assert all(name in rounds for name in ("Ann", "Bob (you)", "Cat", "Dan"))
            assert "4. " in rounds
            assert "Round 2 · open" in rounds
    finally:
        await storage.close()
