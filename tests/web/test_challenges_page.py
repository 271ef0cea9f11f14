"""Async challenges in a real browser (headless Chromium) against a real server: Ann challenges
anyone given the id from the Challenges page; her run says she challenged, that it is rated, and
shows the id with a copy button, and its results say the result comes when the rival has played,
with no replay or rematch; Bob takes it by its id (his run says he was challenged, with no id to
give), and both inboxes then show who won, the rating change, each run's replay and the revealed
deal checked against the challenge's commitment. A casual challenge's run says it is casual, and
its result comes to the challenger's open inbox when the rival's run ends (pushed). An invitation
is counted on the header and played from the inbox; a finished room's racer is challenged from
its "Challenge" link.
Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
import time
from typing import Any

import pytest

from client.lib.connection import RaceClient
from protocol.messages import AcceptChallenge, ChallengePlayer, Joined, Resign
from tests.known_deals import ANTARES_DEAL
from tests.polling import PATIENCE
from tests.web.conftest import ThreadedServer, named, shot
from tests.web.test_browser import WAIT, create_room_in_page
from tests.web.test_room_page import seat_rival

pytestmark = pytest.mark.slow

RUN = re.compile(r"/r/[A-Z0-9]{8}$")


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server(deal=str(ANTARES_DEAL)) as running:
        yield running


def run_and_resign(page: Any) -> str:
    """On a challenge's run that just opened: wait for the race, resign it; the challenge's id."""
    page.wait_for_url(RUN, timeout=WAIT)
    page.wait_for_selector("#room[data-state=racing] #challenge-id", timeout=WAIT)
    code = page.text_content("#challenge-id") or ""
    page.click("#resign")
    page.click("#resign-confirm")
    page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
    return code


def inbox_row(page: Any, base: str, code: str, words: str) -> str:
    """Challenge ``code``'s row of the page's inbox once it says ``words`` (asked again until then)."""
    page.goto(f"{base}/#/challenges")
    row = page.locator(f'#inbox-lines tr[data-id="{code}"]')
    deadline = time.monotonic() + PATIENCE
    while True:
        page.click("#inbox-refresh")
        page.wait_for_timeout(200)
        text = row.text_content() if row.count() else ""
        if text and words in text:
            return text
        assert time.monotonic() < deadline, f"the inbox never said {words!r}: {text!r}"


def test_a_challenge_taken_by_its_id_ends_in_both_inboxes(srv: ThreadedServer, page: Any, bob: Any) -> None:
    named(page.context, "Ann")
    page.goto(f"{srv.base}/#/challenges")
    page.wait_for_selector("#inbox-lines td", timeout=WAIT)
    assert "No challenge yet" in (page.text_content("#inbox-lines") or "")
    page.select_option("#challenge-variant", "antares")
    page.click("#challenge-form button[type=submit]")
    page.wait_for_selector("#room[data-state=racing] #challenge-note", timeout=WAIT)
    assert "give this id to your rival" in (page.text_content("#challenge-note") or "")
    assert page.text_content("#challenge-side") == "you challenged"
    assert page.text_content("#challenge-rated") == "rated"
    assert page.locator("#copy-challenge").count() == 1
    shot(page, "challenge-run")
    code = run_and_resign(page)
    assert re.fullmatch(r"[A-Z0-9]{8}", code)
    # One attempt, secret until the rival has played: no replay, no rematch, no fairness check yet.
    assert "the result comes when your rival has played" in (page.text_content("#fairness") or "")
    assert page.locator("#replay-link").count() == 0
    assert page.locator("#rematch").count() == 0
    waiting = inbox_row(page, srv.base, code, "Waiting for a rival")
    assert f"give them the id {code}" in waiting

    bob.goto(f"{srv.base}/#/challenges")
    bob.fill("#take-id", code.lower())
    bob.click("#take-form button[type=submit]")
    bob.wait_for_selector("#room[data-state=racing] #challenge-side", timeout=WAIT)
    assert bob.text_content("#challenge-side") == "you were challenged"
    assert bob.text_content("#challenge-rated") == "rated"
    assert bob.locator("#copy-challenge").count() == 0  # the id is the challenger's to give
    assert run_and_resign(bob) == code

    # Both resigned with nothing home: an exact tie goes to the challenger. The rating changes
    # come just after the second run.
    row = inbox_row(bob, srv.base, code, "your rating")
    assert "Ann won" in row
    assert "1. Ann" in row
    assert "2. Bob" in row
    assert_fair(bob, code)
    shot(bob, "challenges-inbox")
    assert "You won · your rating" in inbox_row(page, srv.base, code, "You won")
    page.click(f'#inbox-lines tr[data-id="{code}"] a.replay-run >> nth=1')  # Bob's run
    page.wait_for_selector("#replay-step", timeout=WAIT)
    page.wait_for_function("() => document.querySelector('#replay-entry')?.textContent.startsWith('Step 0')")


def assert_fair(page: Any, code: str) -> None:
    """Challenge ``code``'s row of the inbox shows its revealed deal checked: it hashes to the
    commitment published with the challenge."""
    check = page.locator(f'#inbox-lines tr[data-id="{code}"] .fairness')
    page.wait_for_selector(f'#inbox-lines tr[data-id="{code}"] .fairness[data-ok]', timeout=WAIT)
    assert check.get_attribute("data-ok") == "true"
    assert (check.text_content() or "").startswith('✓ Fair deal: sha256("')
    assert "equals the commitment published with the challenge" in (check.text_content() or "")


async def take(racer: RaceClient, code: str) -> None:
    """``racer`` plays their run of challenge ``code`` and resigns it."""
    joined = await racer.request(lambda i: AcceptChallenge(id=i, challenge=code))
    assert isinstance(joined, Joined)
    await racer.wait_room(joined.room, lambda m: m.view().state == "racing", timeout=15)
    await racer.request(lambda i: Resign(id=i, room=joined.room))


def test_a_casual_challenges_result_comes_to_the_open_inbox(srv: ThreadedServer, page: Any) -> None:
    bob = srv.call(RaceClient.connect(srv.ws, "Bob", reconnect=False))
    try:
        named(page.context, "Ann")
        page.goto(f"{srv.base}/#/challenges/rival/{bob.player}/Bob")
        page.wait_for_selector("#challenge-form.chosen", timeout=WAIT)
        page.uncheck("#challenge-rated")
        page.click("#challenge-form button[type=submit]")
        page.wait_for_selector("#room[data-state=racing] #challenge-rated", timeout=WAIT)
        assert page.text_content("#challenge-rated") == "casual"
        assert page.text_content("#challenge-side") == "you challenged"
        code = run_and_resign(page)
        assert "no rating changes" in (page.text_content("#rating-note") or "")

        page.goto(f"{srv.base}/#/challenges")
        row = page.locator(f'#inbox-lines tr[data-id="{code}"]')
        page.wait_for_selector(f'#inbox-lines tr[data-id="{code}"][data-state=open]', timeout=WAIT)
        srv.call(take(bob, code))
        # Pushed: the open inbox shows the result (a tie goes to the challenger), with no rating.
        page.wait_for_selector(f'#inbox-lines tr[data-id="{code}"][data-state=over]', timeout=WAIT)
        assert "You won" in (row.text_content() or "")
        assert "rating" not in (row.locator(".where").text_content() or "")
        assert_fair(page, code)
    finally:
        srv.call(bob.close())


def test_an_invitation_is_counted_on_the_header_and_played_from_the_inbox(srv: ThreadedServer, page: Any) -> None:
    page.goto(srv.base + "/")
    page.wait_for_selector("#who-name", timeout=WAIT)
    assert page.is_hidden("#inbox-badge")
    player = page.evaluate("() => solitaireRace.conn.player")
    page.evaluate("() => { window.stillHere = true; }")  # gone if the page were loaded again
    srv.call(invite(srv, player))
    # Pushed (challenge_waiting): the count and a notice come without a reload.
    page.wait_for_selector("#inbox-badge:not([hidden])", timeout=WAIT)
    assert page.text_content("#inbox-badge") == "1"
    assert page.get_attribute("#inbox-badge", "title") == "1 challenge waiting for you"
    notice = page.locator('#notices .notice[data-kind="challenge_waiting"]')
    notice.wait_for(timeout=WAIT)
    assert (notice.text_content() or "").startswith("Bob challenges you (Antares, rated): ")
    assert page.evaluate("() => window.stillHere") is True
    page.click("#challenges-link")
    page.wait_for_selector("#inbox-lines .play-challenge", timeout=WAIT)
    assert "Bob challenges you" in (page.text_content("#inbox-lines") or "")
    page.click("#inbox-lines .play-challenge")
    code = run_and_resign(page)
    assert "Challenge" in (page.text_content("#challenge-note") or "")
    assert len(code) == 8


async def invite(srv: ThreadedServer, player: str) -> None:
    """Bob challenges ``player`` by their id, and resigns his run."""
    bob = await RaceClient.connect(srv.ws, "Bob", reconnect=False)
    try:
        joined = await bob.request(lambda i: ChallengePlayer(id=i, variant="antares", player=player))
        assert isinstance(joined, Joined)
        await bob.wait_room(joined.room, lambda m: m.view().state == "racing", timeout=15)
        await bob.request(lambda i: Resign(id=i, room=joined.room))
    finally:
        await bob.close()


def test_a_finished_rooms_racer_is_challenged_from_its_link(srv: ThreadedServer, page: Any) -> None:
    code = create_room_in_page(page, srv, seats=2)
    rival = seat_rival(srv, code, "Pat")
    page.click("#ready")
    page.wait_for_selector("#room[data-state=racing]", timeout=WAIT)
    assert page.locator(".challenge-racer").count() == 0  # not in the middle of a race
    srv.call(rival.request(lambda i: Resign(id=i, room=code)))
    page.click("#resign")
    page.click("#resign-confirm")
    page.wait_for_selector("#room[data-state=finished] .challenge-racer", timeout=WAIT)
    assert page.locator(".challenge-racer").count() == 1  # Pat's, not the player's own
    page.click(".challenge-racer")
    page.wait_for_selector("#challenge-form", timeout=WAIT)
    assert page.input_value("#challenge-player") == rival.player
    assert page.text_content("#challenge-form h2") == "Challenge Pat"
    page.click("#challenge-form button[type=submit]")
    page.wait_for_selector("#room[data-state=racing] #challenge-note", timeout=WAIT)
    srv.call(rival.close())
