"""The web client on two nodes of one service, in a real browser (headless Chromium): Ann's page
talks to node A, Bob's to node B (each page's connection goes to the node that served it), and
what they do from the Play page meets across the nodes. Ann challenges Bob by his player id
from node A; Bob's Play page on node B lists the challenge and plays it there, and each inbox
then shows the result on its own node. Both join one arena from the Play page, are paired into
one race (run by one node, raced through the other), and both nodes' arena pages show the
standings. Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from server.clock import now_ms
from server.competition.arena import Arena
from server.storage.arenas import ArenaStore
from tests.end_to_end.test_quick_match import SHORT_WAIT
from tests.known_deals import ANTARES_DEAL
from tests.web.conftest import ThreadedServer, named, shot
from tests.web.test_arenas_page import raced_in, standings
from tests.web.test_browser import WAIT
from tests.web.test_challenges_page import inbox_row, run_and_resign
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
