"""The daily page's weekly and season boards in a real browser (headless Chromium) against a real
server: this week's board with the player's line, the week before and back, the part around the
player, and the season. Screenshots go to build/screenshots/."""

from __future__ import annotations

from typing import Any

import pytest

from client.lib.connection import RaceClient
from server.competition.periods import period_of
from server.features.daily import today
from server.storage.accounts import AccountStore
from tests.web.conftest import ThreadedServer, register_in_page, shot
from tests.web.test_browser import WAIT

pytestmark = pytest.mark.slow


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server() as running:  # no solver: these boards need no daily deal to be shown
        yield running


def title(page: Any) -> str:
    return page.text_content("#period-title") or ""


def wait_for_title(page: Any, text: str) -> None:
    """Wait until the board's title says ``text`` (the next board has come)."""
    script = "text => document.querySelector('#period-title')?.textContent.includes(text)"
    page.wait_for_function(script, arg=text, timeout=WAIT)


def test_the_weekly_board_shows_the_player_and_browses_the_weeks(srv: ThreadedServer, page: Any) -> None:
    register_in_page(page, srv.base, "Weekly Wanda", "a browser password")
    storage, boards = srv.server.storage, srv.server.ctx.boards if srv.server.ctx else None
    assert storage is not None
    assert boards is not None
    wanda = srv.call(AccountStore(storage).by_name("Weekly Wanda"))
    assert wanda is not None
    bob = srv.call(RaceClient.connect(srv.ws, "Bob", reconnect=False))
    assert bob.player is not None
    week = period_of("weekly", today())
    before = week.previous()
    assert before is not None
    # Ranked daily wins, as finished attempts record them: Wanda's today, Bob's last week.
    srv.call(boards.daily_result("antares", wanda.player, today(), True, 75_000))
    srv.call(boards.daily_result("antares", bob.player, before.last_day.isoformat(), True, 61_000))

    page.goto(f"{srv.base}/#/daily/antares")
    page.wait_for_selector("#period-board tr.me", timeout=WAIT)
    assert title(page).startswith(f"Week {week.name}: {week.first_day} to {week.last_day} (now)")
    mine = page.text_content("#period-board tr.me") or ""
    assert "Weekly Wanda (you)" in mine
    assert "1 win" in mine
    assert "1:15.00" in mine
    assert "Weeks start on Monday 00:00 UTC" in (page.text_content("#period-boards") or "")
    assert page.is_disabled("#period-next")  # nothing later than this week
    shot(page, "weekly-board")

    page.click("#period-previous")  # the week before: Bob's
    page.wait_for_function(
        "name => document.querySelector('#period-title')?.textContent.includes(name)", arg=before.name
    )
    assert "Bob" in (page.text_content("#period-board") or "")
    assert page.locator("#period-board tr.me").count() == 0
    page.click("#period-next")  # back to this week
    wait_for_title(page, week.name)
    page.click("#period-around")  # around Wanda
    wait_for_title(page, "around you")
    assert "Weekly Wanda (you)" in (page.text_content("#period-board tr.me") or "")

    page.click("#period-season")  # this season: the current one, whatever week was shown
    season = period_of("season", today())
    page.wait_for_function(
        "name => document.querySelector('#period-title')?.textContent.includes(name)", arg=season.name
    )
    assert title(page).startswith(f"Season {season.name}: {season.first_day} to {season.last_day} (now)")
    assert "Weekly Wanda (you)" in (page.text_content("#period-board tr.me") or "")
    srv.call(bob.close())
