"""The Play page in a real browser (headless Chromium) against a real server: the header's Play
link opens one page listing every way to race (a quick race, a bot, a ghost, the daily
challenge, a room of one's own, the challenges waiting, challenging someone, an async match,
the arenas and the brackets, with what the server lists of each), on a phone too; each entry
opens its page (the quick race's line, a bot's race, an async match's run, the Challenges page
with the form asked for, the tournament lists); a challenge waiting is listed, counted and
played from it; a challenge's result comes as a notice on it when the rival's run ends.
Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from client.lib.connection import RaceClient
from server.clock import now_ms
from server.competition.arena import Arena
from server.storage.arenas import ArenaStore
from tests.end_to_end.test_quick_match import SHORT_WAIT
from tests.known_deals import ANTARES_DEAL
from tests.web.conftest import ThreadedServer, named, shot
from tests.web.test_browser import WAIT
from tests.web.test_challenges_page import invite, run_and_resign, take

pytestmark = pytest.mark.slow

RUN = re.compile(r"/r/[A-Z0-9]{8}$")
#: Every entry of the Play page, in its order.
MODES = ["quick", "bot", "ghost", "daily", "rooms", "inbox", "challenge", "async", "arenas", "brackets"]


@pytest.fixture
def srv(web_server: Any) -> Iterator[ThreadedServer]:
    with web_server(deal=str(ANTARES_DEAL), quick_match_wait=SHORT_WAIT) as running:
        storage = running.server.storage
        assert storage is not None
        now = now_ms()
        running.call(ArenaStore(storage).create(Arena("HUB1", "antares", "Hub arena", now - 1000, now + 600_000), now))
        yield running


def open_hub(page: Any, base: str) -> None:
    """The Play page, from the header's link, once the server's lists are shown on it."""
    page.goto(base + "/")
    page.click("#play-link")
    page.wait_for_selector("#play-hub", timeout=WAIT)
    page.wait_for_function("() => !document.querySelector('#hub-arenas-count').textContent.includes('…')", timeout=WAIT)


def test_the_play_page_lists_every_way_to_race(srv: ThreadedServer, page: Any) -> None:
    open_hub(page, srv.base)
    assert page.url.endswith("#/play")
    assert page.eval_on_selector_all("#play-hub .hub-entry", "nodes => nodes.map(n => n.dataset.mode)") == MODES
    headings = page.eval_on_selector_all("#play-hub .hub-entry h2", "nodes => nodes.map(n => n.textContent)")
    assert headings == [
        "Quick race",
        "Race a bot",
        "Race your best",
        "Daily challenge",
        "A room of your own",
        "Challenges waiting for you",
        "Challenge a player",
        "Async match",
        "Arenas",
        "Brackets",
    ]
    assert page.text_content("#hub-arenas-count") == "1 live now."
    assert page.text_content("#hub-brackets-count") == "None scheduled now."
    assert page.text_content("#hub-inbox-count") == "None waiting for you."
    shot(page, "play-hub")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("() => document.scrollingElement.scrollWidth - innerWidth") <= 0
    height = page.evaluate("() => document.querySelector('header.site').getBoundingClientRect().height")
    assert height <= 80, f"the header takes {height} px of 844"
    assert page.is_visible("#play-link")
    shot(page, "play-hub-phone")


def test_each_entry_opens_its_page(srv: ThreadedServer, page: Any) -> None:
    open_hub(page, srv.base)
    for link, shown, url in [
        ("#hub-challenge-link", "#challenge-form.chosen", "#/challenges/new"),
        ("#hub-take-link", "#take-form.chosen", "#/challenges/take"),
        ("#hub-inbox-link", "#inbox.chosen", "#/challenges/inbox"),
        ("#hub-arenas-link", '#arenas-lines tr[data-id="HUB1"]', "#/arenas"),
        ("#hub-brackets-link", "#brackets-lines td", "#/brackets"),
        ("#hub-daily-link", "#daily", "#/daily"),
        ("#hub-rooms-link", "#lobby-rooms", "#/lobby"),
    ]:
        page.click(link)
        page.wait_for_selector(shown, timeout=WAIT)
        assert page.url.endswith(url)
        page.go_back()
        page.wait_for_selector("#play-hub", timeout=WAIT)
    # The challenge form asked for has the rival's field ready to type in.
    page.click("#hub-challenge-link")
    page.wait_for_selector("#challenge-form.chosen", timeout=WAIT)
    assert page.evaluate("() => document.activeElement.id") == "challenge-player"

    # Racing your best run's ghost: the server says there is none on this deal yet.
    page.click("#play-link")
    page.fill("#best-deal", "1")
    page.click("#best-race button[type=submit]")
    page.wait_for_selector("#best-race .status.error", timeout=WAIT)
    assert "/r/" not in page.url

    # A quick race: the page waits in the line, and races the next player who comes.
    page.select_option("#quick-variant", "antares")
    page.click("#quick-race button[type=submit]")
    page.wait_for_selector("#quick-line", timeout=WAIT)
    assert page.url.endswith("#/quick/antares")

    async def queue() -> RaceClient:
        client = await RaceClient.connect(srv.ws, "Quick Quentin", reconnect=False)
        ticket = await client.quick_match("antares")
        await ticket.joined
        return client

    page.wait_for_timeout(500)  # the page is in line first
    rival = srv.call(queue())
    page.wait_for_url(RUN, timeout=WAIT)
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me", timeout=WAIT)
    assert "Quick Quentin" in (page.text_content(".racer-panel:not(.me) .name") or "")
    srv.call(rival.close())

    # A bot: its race starts at once, the bot in the other seat.
    page.goto(f"{srv.base}/#/play")
    page.select_option("#bot-level", "hard")
    page.click("#bot-race button[type=submit]")
    page.wait_for_url(RUN, timeout=WAIT)
    page.wait_for_selector("#room[data-state=racing] .racer-panel:not(.me)", timeout=WAIT)
    assert "bot" in (page.text_content(".racer-panel:not(.me) .racer-head") or "")

    # An async match: the player's run opens at once.
    page.goto(f"{srv.base}/#/play")
    page.click("#async-form button[type=submit]")
    page.wait_for_url(RUN, timeout=WAIT)
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me", timeout=WAIT)


def test_a_challenge_waiting_is_listed_counted_and_played_from_the_play_page(srv: ThreadedServer, page: Any) -> None:
    named(page.context, "Ann")
    page.goto(srv.base + "/")
    page.wait_for_selector("#who-name", timeout=WAIT)
    srv.call(invite(srv, page.evaluate("() => solitaireRace.conn.player")))
    open_hub(page, srv.base)
    invitation = page.locator("#hub-inbox-lines li")
    invitation.wait_for(timeout=WAIT)
    assert invitation.count() == 1
    assert "Bob challenges you" in (invitation.text_content() or "")
    assert "Antares, rated" in (invitation.text_content() or "")
    assert page.text_content("#hub-inbox-count") == "1 challenge waiting for you."
    assert page.text_content("#inbox-badge") == "1"
    shot(page, "play-hub-invitation")
    page.set_viewport_size({"width": 390, "height": 844})  # the count on the header still fits a phone's
    height = page.evaluate("() => document.querySelector('header.site').getBoundingClientRect().height")
    assert height <= 80, f"the header takes {height} px of 844"
    page.set_viewport_size({"width": 1100, "height": 900})
    # Its entry opens the inbox, which lists it too.
    page.click("#hub-inbox-link")
    page.wait_for_selector("#inbox.chosen #inbox-lines .play-challenge", timeout=WAIT)
    assert "Bob challenges you" in (page.text_content("#inbox-lines") or "")
    page.go_back()
    page.click("#hub-inbox-lines .play-challenge")
    run_and_resign(page)
    assert "Challenge" in (page.text_content("#challenge-note") or "")
    open_hub(page, srv.base)
    page.wait_for_selector("#hub-inbox-count:text('None waiting for you.')", timeout=WAIT)
    assert page.locator("#hub-inbox-lines li").count() == 0


def test_a_challenges_result_comes_as_a_notice_on_the_play_page(srv: ThreadedServer, page: Any) -> None:
    named(page.context, "Ann")
    open_hub(page, srv.base)
    page.click("#hub-challenge-link")
    page.select_option("#challenge-variant", "antares")
    page.click("#challenge-form button[type=submit]")
    code = run_and_resign(page)
    open_hub(page, srv.base)
    page.evaluate("() => { window.stillHere = true; }")  # gone if the page were loaded again
    bob = srv.call(RaceClient.connect(srv.ws, "Bob", reconnect=False))
    try:
        srv.call(take(bob, code))
        notice = page.locator('#notices .notice[data-kind="challenge_result"]')
        notice.wait_for(timeout=WAIT)
        # Both resigned with nothing home: an exact tie goes to the challenger.
        assert (notice.text_content() or "").startswith(f"Challenge {code} (Antares, rated): You won · your rating ")
        assert page.evaluate("() => window.stillHere") is True
        assert page.url.endswith("#/play")
        shot(page, "play-hub-challenge-result")
        notice.locator("a").click()
        page.wait_for_selector(f'#inbox-lines tr[data-id="{code}"][data-state=over]', timeout=WAIT)
        assert page.locator("#notices .notice").count() == 0
    finally:
        srv.call(bob.close())
