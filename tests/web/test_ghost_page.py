"""Ghost races in a real browser (headless Chromium) against a real server: "Race this run" on a
replay opens a room where the run's ghost races beside you, named "(ghost)", without readiness
or connection noise, its progress moving on the run's recorded timing; the results name it too
and say why nothing is rated; the lobby races the ghost of your best run on a deal you name, and
the daily page the fastest run of yesterday's deal.
Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

import pytest

from client.lib.connection import RaceClient
from protocol.messages import AskDaily, DailyInfo, Joined, PlayMove, StartDaily
from server.clock import now_ms
from server.competition.daily import previous_date, utc_date
from tests.known_deals import ANTARES_DEAL, won_by
from tests.web.conftest import ThreadedServer, shot
from tests.web.test_browser import WAIT

pytestmark = pytest.mark.slow

#: The ghost's seat in a ghost race (the player's is 0).
GHOST = '.racer-panel[data-seat="1"]'


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server(deal=str(ANTARES_DEAL)) as running:
        yield running


def room_code(page: Any) -> str:
    return str(page.url.rsplit("/", 1)[1])


def wait_ghost_race(page: Any, after: str = "") -> str:
    """The room a ghost race opened (not room ``after``, where the page was), racing; its code."""
    page.wait_for_url(re.compile(rf"/r/(?!{after}$)[A-Z0-9]{{8}}$"), timeout=WAIT)
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    return room_code(page)


def test_race_this_run_from_a_replay(srv: ThreadedServer, page: Any) -> None:
    first = srv.call(won_by(srv.ws, "Ada"), timeout=90)
    page.goto(f"{srv.base}/#/replay/{first}")
    page.wait_for_selector("#race-ghost:not([disabled])", timeout=WAIT)

    page.click("#race-ghost")
    wait_ghost_race(page, first)
    name = page.text_content(f"{GHOST} .racer-head .name") or ""
    assert name == "Ada (ghost)"
    assert "ghost race" in (page.text_content("#ghost-race") or "")
    # Its progress follows the run while its board stays hidden: you race it, not study it.
    page.wait_for_function("s => Number(document.querySelector(s)?.dataset.moves) >= 3", arg=GHOST, timeout=WAIT)
    assert page.locator(f"{GHOST} .card").count() == 0
    head = page.text_content(f"{GHOST} .racer-head") or ""
    assert "disconnected" not in head
    assert "ready" not in head
    shot(page, "ghost-race")

    # Resigning ends the race at once: the ghost plays the rest of its run, a win.
    page.click("#resign")
    page.click("#resign-confirm")
    page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
    first_row = page.locator("#results-table tbody tr").first.text_content() or ""
    assert name in first_row
    assert "won" in first_row
    assert "against a ghost" in (page.text_content("#rating-note") or "")


def test_the_lobby_races_your_best_run_on_a_deal(srv: ThreadedServer, page: Any) -> None:
    page.goto(srv.base + "/")
    page.wait_for_selector("#best-race")
    page.select_option("#best-variant", "antares")
    page.fill("#best-deal", str(ANTARES_DEAL))
    page.click("#best-race button[type=submit]")
    # Nothing kept yet: the server's refusal, in the form.
    page.wait_for_selector("#best-race .status.error", timeout=WAIT)

    # The page's player wins the deal (from a second connection of its own, resuming its token).
    page.wait_for_selector("#who-name[data-account=false]", timeout=WAIT)
    name, token = page.evaluate(
        "() => [localStorage.getItem('solitaire-race.name'), localStorage.getItem('solitaire-race.resume')]"
    )
    first = srv.call(won_by(srv.ws, name, resume=token), timeout=90)
    page.reload()
    page.wait_for_selector("#best-race")
    page.select_option("#best-variant", "antares")
    page.fill("#best-deal", str(ANTARES_DEAL))
    page.click("#best-race button[type=submit]")
    wait_ghost_race(page, first)
    assert (page.text_content(f"{GHOST} .racer-head .name") or "").endswith(" (ghost)")
    page.wait_for_function("s => Number(document.querySelector(s)?.dataset.moves) >= 1", arg=GHOST, timeout=WAIT)


def test_the_daily_page_races_yesterdays_fastest_run(web_server: Any, page: Any) -> None:
    with web_server(solver_workers=1, solver_budget=0.5, pool_size=1) as srv:
        ctx = srv.server.ctx
        assert ctx is not None
        assert ctx.daily is not None
        yesterday = previous_date(utc_date(now_ms()))
        srv.call(ctx.daily.get("antares", yesterday), timeout=90)
        srv.call(win_yesterday(srv, yesterday), timeout=90)
        page.goto(f"{srv.base}/#/daily/antares")
        page.wait_for_selector("#race-fastest", timeout=90_000)
        assert yesterday in (page.text_content("#race-fastest") or "")
        # Yesterday's revealed deal, checked in the browser against that day's commitment.
        page.wait_for_selector("#daily-yesterday-check[data-ok=true]", timeout=WAIT)
        assert f"published on {yesterday}" in (page.text_content("#daily-yesterday-check") or "")
        page.click("#race-fastest")
        wait_ghost_race(page)
        assert page.text_content(f"{GHOST} .racer-head .name") == "Bob (ghost)"


async def win_yesterday(srv: ThreadedServer, yesterday: str) -> None:
    """Bob wins yesterday's Antares deal with the solver's line: the fastest run kept on it."""
    bob = await RaceClient.connect(srv.ws, "Bob", reconnect=False)
    try:
        info = await bob.request(lambda i: AskDaily(id=i, variant="antares"))
        assert isinstance(info, DailyInfo)
        assert info.yesterday is not None
        joined = await bob.request(lambda i: StartDaily(id=i, variant="antares", date=yesterday))
        assert isinstance(joined, Joined)
        code = joined.room
        await bob.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
        for text in info.yesterday.solution:
            await bob.request(partial(PlayMove, room=code, move=text))
        await bob.wait_room(code, lambda m: m.view().results is not None, timeout=15)
    finally:
        await bob.close()
