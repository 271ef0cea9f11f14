"""Bracket tournaments in a real browser (headless Chromium) against a real server: Ann finds a
bracket on the Brackets page (from the header), registers on its page, and when round 1 opens
plays her run with "Play your round"; its results say the round's results come when it closes,
with no replay, rematch or fairness check yet. Once the three other players' runs are in, the
round closes: the bracket's page shows its places with the two who went on marked, and the
list shows round 2 being played. When a round closes while the bracket's page is open, the page
shows it at once (pushed), its deal checked against the round's commitment, with a notice that
the player goes on; the player is marked by id, not by name, beside another player of her name.
Screenshots go to build/screenshots/.
"""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from client.lib.connection import RaceClient
from protocol.messages import JoinBracket
from server.clock import now_ms
from server.competition.bracket import SHOW_UP_MS, Bracket, Round
from server.storage.brackets import BracketStore
from tests.features.test_brackets import play
from tests.web.conftest import ThreadedServer, named, shot
from tests.web.test_browser import WAIT
from tests.web.test_challenges_page import RUN

pytestmark = pytest.mark.slow

CODE = "FRIDAY"


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server() as running:
        yield running


async def registered(srv: ThreadedServer, name: str) -> RaceClient:
    """A player ``name`` on a connection of their own, registered for the bracket."""
    racer = await RaceClient.connect(srv.ws, name, reconnect=False)
    await racer.request(lambda i: JoinBracket(id=i, bracket=CODE))
    return racer


def test_a_bracket_round_is_played_from_its_page_and_closes_with_its_places(srv: ThreadedServer, page: Any) -> None:
    assert srv.server.storage is not None
    store = BracketStore(srv.server.storage)
    # It starts when the test says (below), once everyone has registered.
    srv.call(store.create(Bracket(CODE, "scorpion", "Friday bracket", now_ms() + 600_000, 8, 5), now_ms()))
    others = [srv.call(registered(srv, name)) for name in ("Bob", "Cat", "Dan")]
    try:
        named(page.context, "Ann")
        page.goto(f"{srv.base}/#/lobby")
        page.click("#brackets-link")
        row = page.locator(f'#brackets-lines tr[data-id="{CODE}"]')
        row.wait_for(timeout=WAIT)
        assert "5 places left" in (row.text_content() or "")
        row.locator("a.bracket-link").click()
        page.click("#bracket-register", timeout=WAIT)
        page.wait_for_selector("#bracket-unregister", timeout=WAIT)
        assert "You are registered" in (page.text_content("#bracket-status") or "")

        srv.call(store.change(CODE, lambda bracket: msgspec.structs.replace(bracket, starts=now_ms())))
        page.wait_for_selector("#bracket-play", timeout=WAIT)
        assert "Play your round 1 now: start within" in (page.text_content("#bracket-status") or "")
        notice = page.locator('#notices .notice[data-kind="bracket_started"]')
        notice.wait_for(timeout=WAIT)  # pushed: the player may be on another page
        assert (notice.text_content() or "").startswith("Friday bracket started: play round 1 now.")
        assert "Ann (you)" in (page.text_content('.bracket-round[data-number="1"]') or "")
        shot(page, "bracket-to-play")
        page.click("#bracket-play")
        page.wait_for_url(RUN, timeout=WAIT)
        page.wait_for_selector("#room[data-state=racing] #bracket-note", timeout=WAIT)
        page.click("#resign")
        page.click("#resign-confirm")
        page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
        # One attempt, secret until the round closes: no replay, no rematch, no fairness check yet.
        assert "the round's results come when it closes" in (page.text_content("#fairness") or "")
        assert page.locator("#replay-link").count() == 0
        assert page.locator("#rematch").count() == 0

        for racer in others:
            srv.call(play(racer, CODE))
        page.click("#bracket-back")
        closed = page.locator('.bracket-round[data-number="1"][data-closed="true"]')
        closed.wait_for(timeout=WAIT)
        assert closed.locator("li.went-on").count() == 2  # the better half of four
        assert closed.locator("li").count() == 4
        closed.locator(".fairness[data-ok=true]").wait_for(timeout=WAIT)  # the revealed deal, checked
        assert page.locator('.bracket-round[data-number="2"][data-closed="false"]').count() == 1
        shot(page, "bracket-round-closed")
        page.click("text=All brackets")
        page.wait_for_function(
            "s => (document.querySelector(s)?.textContent || '').includes('round 2 being played')",
            arg=f'#brackets-lines tr[data-id="{CODE}"]',
            timeout=WAIT,
        )
    finally:
        for racer in others:
            srv.call(racer.close())


#: Makes the page's requests for the bracket go unanswered: whatever it shows next is pushed.
NO_MORE_ASKING = """() => {
  const conn = window.solitaireRace.conn;
  const ask = conn.request.bind(conn);
  conn.request = (fields) => (fields.type === "bracket" ? new Promise(() => {}) : ask(fields));
}"""


def test_a_round_that_closes_shows_on_the_open_page_with_its_deal_checked(srv: ThreadedServer, page: Any) -> None:
    assert srv.server.storage is not None
    store = BracketStore(srv.server.storage)
    srv.call(store.create(Bracket(CODE, "scorpion", "Friday bracket", now_ms() + 600_000, 8, 5), now_ms()))
    # Another Ann: the page must tell its player from her by id.
    namesake, *others = [srv.call(registered(srv, name)) for name in ("Ann", "Bob", "Cat")]
    try:
        named(page.context, "Ann")
        page.goto(f"{srv.base}/#/bracket/{CODE}")
        page.click("#bracket-register", timeout=WAIT)
        page.wait_for_selector("#bracket-unregister", timeout=WAIT)
        srv.call(store.change(CODE, lambda bracket: msgspec.structs.replace(bracket, starts=now_ms())))
        page.wait_for_selector("#bracket-play", timeout=WAIT)
        first = page.locator('.bracket-round[data-number="1"]')
        assert [(first.locator("li").nth(n).text_content() or "") for n in range(4)].count("Ann") == 1
        assert first.locator("li.me").text_content() == "Ann (you)"
        page.click("#bracket-play")
        page.wait_for_url(RUN, timeout=WAIT)
        page.wait_for_selector("#room[data-state=racing] #bracket-note", timeout=WAIT)
        page.click("#resign")
        page.click("#resign-confirm")
        page.wait_for_selector("#room[data-state=finished] #run-commitment", timeout=WAIT)
        page.click("#bracket-back")
        page.wait_for_selector('.bracket-round[data-number="1"][data-closed="false"]', timeout=WAIT)
        page.evaluate(NO_MORE_ASKING)

        # The other Ann plays; Bob and Cat never show up (their time to start is made over), so
        # the round closes and both Anns go on.
        srv.call(play(namesake, CODE))
        srv.call(
            store.change(
                CODE, lambda bracket: msgspec.structs.replace(bracket, rounds=[show_up_over(bracket.rounds[0])])
            )
        )
        closed = page.locator('.bracket-round[data-number="1"][data-closed="true"]')
        closed.wait_for(timeout=WAIT)
        assert closed.locator("li.went-on").count() == 2
        assert closed.locator("li.me.went-on").count() == 1
        assert "Ann (you)" in (closed.locator("li.me").text_content() or "")
        page.wait_for_selector('.bracket-round[data-number="1"] .fairness[data-ok]', timeout=WAIT)
        check = closed.locator(".fairness")
        assert check.get_attribute("data-ok") == "true"
        assert (check.text_content() or "").startswith('✓ Fair deal: sha256("scorpion|')
        assert "equals the commitment published when the round opened" in (check.text_content() or "")
        second = page.locator('.bracket-round[data-number="2"][data-closed="false"]')
        assert second.locator("li").count() == 2
        assert second.locator("li.me").text_content() == "Ann (you)"
        assert page.locator("#bracket-play").count() == 1
        notice = page.locator('#notices .notice[data-kind="round_closed"]')
        assert "Friday bracket: round 1 closed and you go on. Play round 2 now." in (notice.text_content() or "")
        shot(page, "bracket-round-closed-pushed")

        # The final, both Anns: the final standings mark this page's player by id.
        page.click("#bracket-play")
        page.wait_for_url(RUN, timeout=WAIT)
        page.wait_for_selector("#room[data-state=racing] #bracket-note", timeout=WAIT)
        page.click("#resign")
        page.click("#resign-confirm")
        page.wait_for_selector("#room[data-state=finished]", timeout=WAIT)
        srv.call(play(namesake, CODE))
        page.goto(f"{srv.base}/#/bracket/{CODE}")
        final = page.locator("#bracket-final li")
        final.first.wait_for(timeout=WAIT)
        assert final.count() == 4
        assert page.locator("#bracket-final li.me").count() == 1
        assert "Ann (you)" in (page.locator("#bracket-final li.me").text_content() or "")
        assert page.locator("#bracket-final li", has_text="🏆").count() == 1
    finally:
        for racer in (namesake, *others):
            srv.call(racer.close())


def show_up_over(round_: Round) -> Round:
    """``round_`` as it is once the time to start a run is over (opened that long ago)."""
    return msgspec.structs.replace(round_, opens=round_.opens - SHOW_UP_MS)
