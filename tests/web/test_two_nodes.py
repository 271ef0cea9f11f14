"""The web client on two nodes of one service, in a real browser (headless Chromium): Ann's page
talks to node A, Bob's to node B (each page's connection goes to the node that served it), and
what they do meets across the nodes. Ann challenges Bob by his player id from node A; Bob's Play
page on node B lists the challenge and plays it there, and each inbox then shows the result on
its own node. A run won on node A is raced as a ghost from its replay link on node B, its
progress beside Bob's board. Ann's async match run on node A is the one Bob's async match on
node B plays, and both inboxes show who won. Both join one arena from the Play page, are paired
into one race (run by one node, raced through the other), and both nodes' arena pages show the
standings. Bob registers on node B for a bracket with players of both nodes, plays his round
there and sees it close with its places. Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import msgspec
import pytest

from server.clock import now_ms
from server.competition.arena import Arena
from server.competition.bracket import Bracket
from server.storage.arenas import ArenaStore
from server.storage.brackets import BracketStore
from server.storage.challenges import ChallengeStore
from server.storage.connection import Storage
from tests.end_to_end.test_quick_match import SHORT_WAIT
from tests.features.test_brackets import play
from tests.known_deals import ANTARES_DEAL, won_by
from tests.polling import eventually_async
from tests.web.conftest import ThreadedServer, named, shot
from tests.web.test_arenas_page import raced_in, standings
from tests.web.test_brackets_page import CODE, registered
from tests.web.test_browser import WAIT
from tests.web.test_challenges_page import RUN, inbox_row, run_and_resign
from tests.web.test_ghost_page import GHOST, wait_ghost_race
from tests.web.test_play_hub import open_hub

pytestmark = pytest.mark.slow

ARENA = "NODES1"


@pytest.fixture
def nodes(web_service: Any) -> Iterator[list[ThreadedServer]]:
    """Nodes A and B of one service, with a live arena."""
    with web_service(2, deal=str(ANTARES_DEAL), quick_match_wait=SHORT_WAIT) as running:
        storage = running[0].server.storage
        assert storage is not None
        now = now_ms()
        arena = Arena(ARENA, "antares", "Two-node arena", now - 1000, now + 10 * 60_000)
        running[0].call(ArenaStore(storage).create(arena, now))
        yield running


def player_id(page: Any, base: str) -> str:
    """The player id the Challenges page tells its player (to give to a rival)."""
    page.goto(f"{base}/#/challenges")
    page.wait_for_selector("#your-player-id:has-text('Your player id')", timeout=WAIT)
    found = re.fullmatch(r"Your player id: (\S+)\.", page.text_content("#your-player-id") or "")
    assert found is not None
    return found.group(1)


def test_a_challenge_sent_on_one_node_is_played_from_the_play_page_on_the_other(
    nodes: list[ThreadedServer], page: Any, bob: Any
) -> None:
    a, b = nodes
    named(page.context, "Ann")
    bobs_id = player_id(bob, b.base)

    open_hub(page, a.base)
    page.click("#hub-challenge-link")
    page.wait_for_selector("#challenge-form.chosen", timeout=WAIT)
    page.fill("#challenge-player", bobs_id)
    page.select_option("#challenge-variant", "antares")
    page.click("#challenge-form button[type=submit]")
    code = run_and_resign(page)
    assert page.url.startswith(a.base)  # Ann's run, through node A

    open_hub(bob, b.base)
    invitation = bob.locator("#hub-inbox-lines li")
    invitation.wait_for(timeout=WAIT)
    assert "Ann challenges you" in (invitation.text_content() or "")
    assert bob.text_content("#inbox-badge") == "1"
    shot(bob, "two-nodes-invitation")
    bob.click("#hub-inbox-lines .play-challenge")
    assert run_and_resign(bob) == code
    assert bob.url.startswith(b.base)  # Bob's run, through node B

    # Both resigned with nothing home: an exact tie goes to the challenger, on either node.
    ann_row = inbox_row(page, a.base, code, "You won")
    assert "2. Bob" in ann_row
    assert "Ann won" in inbox_row(bob, b.base, code, "Ann won")


def storage_of(node: ThreadedServer) -> Storage:
    """``node``'s storage (shared by the service's nodes), for the test to look in on its loop."""
    assert node.server.storage is not None
    return node.server.storage


async def won_run(node: ThreadedServer, name: str) -> str:
    """``name`` wins a one-racer race of the Antares deal on ``node`` with the client library;
    once its run is kept (the race recorded, for every node to find), its room."""
    code = await won_by(node.ws, name)
    assert node.server.ctx is not None
    runs = node.server.ctx.runs
    await eventually_async(lambda: runs.ranked("antares", str(ANTARES_DEAL), 1), lambda kept: kept is not None)
    return code


def test_a_run_won_on_one_node_is_raced_as_a_ghost_from_its_replay_link_on_the_other(
    nodes: list[ThreadedServer], bob: Any
) -> None:
    a, b = nodes
    room = a.call(won_run(a, "Ann"))
    bob.goto(f"{b.base}/#/replay/{room}/0")  # the link Ann gives, opened on node B
    bob.click("#race-ghost:not([disabled])", timeout=WAIT)
    wait_ghost_race(bob, room)
    assert bob.url.startswith(b.base)
    assert bob.text_content(f"{GHOST} .racer-head .name") == "Ann (ghost)"
    # Its progress moves on Ann's recorded timing, beside Bob's own board.
    bob.wait_for_function("s => Number(document.querySelector(s)?.dataset.moves) >= 3", arg=GHOST, timeout=WAIT)
    assert bob.locator(".racer-panel.me .card.up").count() > 0
    shot(bob, "two-nodes-ghost-race")


def async_match(page: Any, base: str) -> str:
    """From the Play page on ``base``: an async match of Antares, its run resigned; the challenge's id."""
    open_hub(page, base)
    page.select_option("#async-variant", "antares")
    page.click("#async-form button[type=submit]")
    return run_and_resign(page)


def test_an_async_match_on_one_node_plays_the_run_waiting_from_the_other(
    nodes: list[ThreadedServer], page: Any, bob: Any
) -> None:
    a, b = nodes
    named(page.context, "Ann")
    code = async_match(page, a.base)  # nobody waits: Ann's run, on node A, waits for a rival
    assert page.text_content("#challenge-side") == "you challenged"
    challenges = ChallengeStore(storage_of(a))
    # Offered to async matches once recorded (just after its end).
    a.call(eventually_async(lambda: challenges.get(code), lambda found: found is not None and bool(found.runs)))

    assert async_match(bob, b.base) == code  # Ann's deal, played through node B
    assert bob.text_content("#challenge-side") == "you were challenged"
    assert bob.url.startswith(b.base)

    # Both resigned with nothing home: an exact tie goes to the challenger, on either node.
    assert "1. Ann" in inbox_row(page, a.base, code, "You won · your rating")
    assert "2. Bob" in inbox_row(bob, b.base, code, "Ann won · your rating")


def test_players_of_two_nodes_join_one_arena_from_the_play_page_and_race_each_other(
    nodes: list[ThreadedServer], page: Any, bob: Any
) -> None:
    a, b = nodes
    named(page.context, "Ann")
    for player, node in ((page, a), (bob, b)):
        open_hub(player, node.base)
        assert player.text_content("#hub-arenas-count") == "1 live now."
        player.click("#hub-arenas-link")
        player.click(f'#arenas-lines tr[data-id="{ARENA}"] a.arena-link')
        player.click("#arena-join")
    room = raced_in(page)
    assert raced_in(bob) == room  # one race, whichever node runs it
    assert page.url.startswith(a.base)
    assert bob.url.startswith(b.base)
    assert "Bob" in (page.text_content(".racer-panel:not(.me) .name") or "")
    assert "Ann" in (bob.text_content(".racer-panel:not(.me) .name") or "")
    shot(bob, "two-nodes-arena-race")

    for player in (page, bob):
        player.click("#arena-race-leave")  # no next race: the standings stay as this race left them
        player.wait_for_selector("#arena-race-leave", state="detached")
        player.click("#resign")
        player.click("#resign-confirm")
    for player in (page, bob):
        player.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)

    # Each node's arena page shows the race's points: 2 for its winner, 0 for the other.
    for player, node, me in ((page, a, "Ann"), (bob, b, "Bob")):
        player.goto(f"{node.base}/#/arena/{ARENA}")
        player.wait_for_function("() => document.querySelectorAll('#arena-lines tbody tr').length === 2", timeout=WAIT)
        points = {name.removesuffix(" (you)"): shown for name, shown in standings(player).items()}
        assert sorted(points.values()) == [0, 2]
        assert set(points) == {"Ann", "Bob"}
        assert f"{me} (you)" in standings(player)


def test_players_of_two_nodes_play_one_bracket_and_its_round_closes_on_the_page(
    nodes: list[ThreadedServer], bob: Any
) -> None:
    a, b = nodes
    store = BracketStore(storage_of(a))
    # It starts when the test says (below), once everyone has registered.
    a.call(store.create(Bracket(CODE, "scorpion", "Two-node bracket", now_ms() + 600_000, 8, 5), now_ms()))
    others = [(node, node.call(registered(node, name))) for node, name in ((a, "Ann"), (a, "Cat"), (b, "Dan"))]
    try:
        bob.goto(f"{b.base}/#/bracket/{CODE}")
        bob.click("#bracket-register", timeout=WAIT)
        bob.wait_for_selector("#bracket-unregister", timeout=WAIT)
        a.call(store.change(CODE, lambda bracket: msgspec.structs.replace(bracket, starts=now_ms())))
        bob.click("#bracket-play", timeout=WAIT)  # round 1, opened by whichever node runs the bracket
        bob.wait_for_url(RUN, timeout=WAIT)
        assert bob.url.startswith(b.base)
        bob.wait_for_selector("#room[data-state=racing] #bracket-note", timeout=WAIT)
        bob.click("#resign")
        bob.click("#resign-confirm")
        bob.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)

        for node, racer in others:  # two runs through node A, one through node B
            node.call(play(racer, CODE))
        bob.click("#bracket-back")
        closed = bob.locator('.bracket-round[data-number="1"][data-closed="true"]')
        closed.wait_for(timeout=WAIT)
        assert closed.locator("li").count() == 4
        assert "Bob (you)" in (closed.locator("li.me").text_content() or "")
        shown = closed.text_content() or ""
        assert all(name in shown for name in ("Ann", "Cat", "Dan"))  # the players of node A and B
        assert closed.locator("li.went-on").count() == 2  # the better half of four
        assert bob.locator('.bracket-round[data-number="2"][data-closed="false"]').count() == 1
        shot(bob, "two-nodes-bracket-round-closed")
    finally:
        for node, racer in others:
            node.call(racer.close())
