"""The lobby and its neighbours in a real browser (headless Chromium) against a real server:
guests get names that tell them apart, a bot race and a quick race start from the lobby (and
leaving the quick race's page leaves the line), the phone header is compact with room codes
whole, and the boards tell a guest why they are not there. Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from client.lib.connection import RaceClient
from tests.known_deals import ANTARES_DEAL
from tests.web.conftest import ThreadedServer, new_context, shot
from tests.web.test_browser import WAIT
from tests.web.test_room_page import practice

pytestmark = pytest.mark.slow


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server(deal=str(ANTARES_DEAL)) as running:
        yield running


def test_guests_get_names_that_tell_them_apart(srv: ThreadedServer, page: Any, browser: Any) -> None:
    names = []
    other = new_context(browser)
    try:
        for guest in (page, other.new_page()):
            guest.goto(srv.base + "/")
            guest.wait_for_selector("#who-name[data-account=false]", timeout=WAIT)
            names.append(guest.evaluate("() => solitaireRace.conn.name"))
            assert (guest.text_content("#who-name") or "").startswith("Guest: ")
    finally:
        other.close()
    assert all(re.fullmatch(r"Guest \d{4}", name) for name in names), names
    assert names[0] != names[1]
    # The name stays across a reload, and the guest may change it.
    page.reload()
    page.wait_for_selector("#who-name[data-account=false]", timeout=WAIT)
    assert page.evaluate("() => solitaireRace.conn.name") == names[0]
    page.once("dialog", lambda dialog: dialog.accept("Zed"))
    page.click("#rename")
    page.wait_for_function("() => document.querySelector('#who-name')?.textContent === 'Guest: Zed'", timeout=WAIT)


def test_racing_a_bot_from_the_lobby(srv: ThreadedServer, page: Any) -> None:
    page.goto(srv.base + "/")
    page.wait_for_selector("#bot-race")
    page.select_option("#bot-variant", "antares")
    page.select_option("#bot-level", "hard")
    page.click("#bot-race button[type=submit]")
    page.wait_for_url(re.compile(r"/r/[A-Z0-9]{8}$"))
    # The bot takes the other seat and says ready; the player was made ready: the race starts at once.
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    rival = page.locator(".racer-panel:not(.me)")
    assert "bot" in rival.locator(".racer-head").text_content()
    assert page.evaluate("() => solitaireRace.conn.rooms.values().next().value.view.options.public") in (None, False)
    page.wait_for_function(
        "() => Number(document.querySelector('.racer-panel:not(.me)').dataset.moves) >= 2", timeout=WAIT
    )
    shot(page, "bot-race")
    # A reload brings the same bot back to its seat, and it plays on.
    played = int(rival.get_attribute("data-moves") or 0)
    page.reload()
    page.wait_for_selector("#room[data-state=racing] .racer-panel:not(.me)", timeout=WAIT)
    page.wait_for_function(
        "n => Number(document.querySelector('.racer-panel:not(.me)').dataset.moves) >= n + 2", arg=played, timeout=WAIT
    )
    assert page.locator(".racer-panel:not(.me) .badge:text('disconnected')").count() == 0


def test_a_quick_race_from_the_lobby(srv: ThreadedServer, page: Any) -> None:
    page.goto(srv.base + "/")
    page.wait_for_selector("#quick-race")
    shot(page, "lobby-play-now")
    page.set_viewport_size({"width": 390, "height": 844})
    assert page.evaluate("() => document.scrollingElement.scrollWidth - innerWidth") <= 0
    shot(page, "lobby-play-now-phone")
    page.set_viewport_size({"width": 1100, "height": 900})
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
    page.wait_for_url(re.compile(r"/r/[A-Z0-9]{8}$"), timeout=WAIT)
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    assert "Quick Quentin" in (page.text_content(".racer-panel:not(.me) .name") or "")
    srv.call(rival.close())


def test_leaving_the_quick_race_page_leaves_the_line(srv: ThreadedServer, page: Any) -> None:
    page.goto(f"{srv.base}/#/quick/scorpion")
    page.wait_for_selector("#quick-line", timeout=WAIT)
    page.wait_for_timeout(500)
    page.click("#quick-cancel")
    page.wait_for_selector("#lobby", timeout=WAIT)

    async def alone() -> RaceClient:
        client = await RaceClient.connect(srv.ws, "Latecomer", reconnect=False)
        await client.quick_match("scorpion")
        return client

    rival = srv.call(alone())
    page.wait_for_timeout(4000)  # two waiting players would race after 3 seconds
    assert "/r/" not in page.url
    srv.call(rival.close())


def test_the_phone_header_is_compact_and_room_codes_stay_whole(srv: ThreadedServer, page: Any) -> None:
    page.set_viewport_size({"width": 390, "height": 844})
    code = practice(page, srv)
    height = page.evaluate("() => document.querySelector('header.site').getBoundingClientRect().height")
    assert height <= 80, f"the header takes {height} px of 844"
    page.goto(f"{srv.base}/#/replay/{code}")  # a long title
    page.wait_for_selector("#replay .room-code", timeout=WAIT)
    page.goto(f"{srv.base}/r/{code}")
    page.wait_for_selector("#room .room-code", timeout=WAIT)
    lines = page.evaluate("() => [...document.querySelectorAll('.room-code')].map(c => c.getClientRects().length)")
    assert lines
    assert all(n == 1 for n in lines), lines
    # Also a title forced to wrap: it wraps around the code, never inside it.
    page.evaluate("() => document.querySelector('#room h1').style.setProperty('width', '9ch')")
    assert page.evaluate("() => document.querySelector('#room h1 .room-code').getClientRects().length") == 1
    check_phone = page.evaluate("() => document.scrollingElement.scrollWidth - innerWidth")
    assert check_phone <= 0
    shot(page, "phone-header")


def test_the_boards_tell_a_guest_why_they_are_not_there(srv: ThreadedServer, page: Any) -> None:
    page.goto(f"{srv.base}/#/daily/antares")
    page.wait_for_selector("#boards-guest", timeout=WAIT)
    assert "only accounts are on these boards" in (page.text_content("#boards-guest") or "")
    assert page.get_attribute("#boards-register", "href") == "#/account"
    # Counts and times as the terminal client writes them.
    shown = page.evaluate(
        """async () => {
            const dom = await import('/js/dom.js');
            return [dom.count(1, 'day'), dom.count(2, 'day'), dom.formatMs(43890), dom.formatMs(3723450)];
        }"""
    )
    assert shown == ["1 day", "2 days", "0:43.89", "62:03.45"]
