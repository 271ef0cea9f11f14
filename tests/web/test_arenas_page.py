"""Arena tournaments in a real browser (headless Chromium) against a real server: the header's
Arenas link lists a live arena; Ann and Bob join it from its page and land in one race, whose
page names the arena (no rematch: the arena pairs the next race); Bob leaves the arena during
the race. Once both have resigned, Ann's race page joins the arena again by itself and waits
for her next race, and the arena's page shows the standings (the winner's 2 points, the
loser's 0, Ann's line marked) and her waiting; when Bob joins again, both are paired into a
new race, and the arena's page then offers the leader's race to watch. Someone watching an
arena race sees the arena's name on its page.
Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from client.lib.connection import RaceClient
from client.render.arenas import WAITING
from protocol.messages import JoinArena
from server.clock import now_ms
from server.competition.arena import Arena
from server.features.arenas import line_of
from server.storage.arenas import ArenaStore
from tests.end_to_end.test_quick_match import SHORT_WAIT
from tests.polling import eventually, eventually_async
from tests.web.conftest import ThreadedServer, named, shot
from tests.web.test_browser import WAIT

pytestmark = pytest.mark.slow

RACE = re.compile(r"/r/([A-Z0-9]{8})$")
ARENA = "ARENA1"


@pytest.fixture
def srv(web_server: Any) -> Iterator[ThreadedServer]:
    with web_server(quick_match_wait=SHORT_WAIT) as running:
        storage = running.server.storage
        assert storage is not None
        now = now_ms()
        arena = Arena(ARENA, "antares", "Evening arena", now - 1000, now + 10 * 60_000)
        running.call(ArenaStore(storage).create(arena, now))
        yield running


def raced_in(page: Any) -> str:
    """The room of the race the page landed in, once it races."""
    page.wait_for_url(RACE, timeout=WAIT)
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me", timeout=WAIT)
    found = RACE.search(page.url)
    assert found is not None
    return found.group(1)


def waits_in_line(srv: ThreadedServer, player: str) -> None:
    """Wait until the server has ``player`` in the arena's line (the page says "waiting" as it
    asks to join, before the server has answered)."""
    ctx = srv.server.ctx
    assert ctx is not None
    line = ctx.line
    srv.call(
        eventually_async(lambda: line.waiting(line_of(ARENA)), lambda entries: player in {e.player for e in entries})
    )


def standings(page: Any) -> dict[str, int]:
    """The arena page's top lines: points by name (the player's own marked " (you)")."""
    rows = page.locator("#arena-lines tbody tr")
    return {
        (rows.nth(n).locator(".name").text_content() or ""): int(rows.nth(n).get_attribute("data-points") or -1)
        for n in range(rows.count())
    }


def test_two_players_race_in_an_arena_score_and_race_on(srv: ThreadedServer, page: Any, bob: Any) -> None:
    named(page.context, "Ann")
    page.goto(srv.base + "/")
    page.click("#arenas-link")
    page.wait_for_selector(f'#arenas-lines tr[data-id="{ARENA}"][data-state=live]', timeout=WAIT)
    assert "left" in (page.text_content(f'#arenas-lines tr[data-id="{ARENA}"]') or "")
    page.click(f'#arenas-lines tr[data-id="{ARENA}"] a.arena-link')
    page.wait_for_selector("#arena-join", timeout=WAIT)
    assert page.text_content("#arena h1") == "Evening arena"
    page.click("#arena-join")
    page.wait_for_function("w => document.querySelector('#arena-status')?.textContent === w", arg=WAITING)

    bob.goto(f"{srv.base}/#/arena/{ARENA}")
    bob.click("#arena-join")
    room = raced_in(page)
    assert raced_in(bob) == room
    page.wait_for_selector("#arena-name:has-text('Evening arena')", timeout=WAIT)
    assert "You race on after this race." in (page.text_content("#arena-note") or "")
    shot(page, "arena-race")

    bob.click("#arena-race-leave")  # Bob stops after this race
    bob.wait_for_selector("#arena-race-leave", state="detached")
    for player in (bob, page):
        player.click("#resign")
        player.click("#resign-confirm")
    for player in (bob, page):
        player.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
    assert page.locator("#rematch").count() == 0
    winner = (page.locator("#results-table tbody tr").first.locator("td").nth(1).text_content() or "").split(" (")[0]

    # Ann races on: her race's page joins the arena's line again by itself.
    page.wait_for_function("w => document.querySelector('#arena-race-status')?.textContent === w", arg=WAITING)
    ann = page.evaluate("window.solitaireRace.conn.player")
    waits_in_line(srv, ann)
    assert bob.locator("#arena-race-status").count() == 0

    page.click("#arena-back")
    page.wait_for_function("() => document.querySelectorAll('#arena-lines tbody tr').length === 2", timeout=WAIT)
    page.wait_for_function("w => document.querySelector('#arena-status')?.textContent === w", arg=WAITING)
    loser = "Bob" if winner == "Ann" else "Ann"
    marked = {name: name + (" (you)" if name == "Ann" else "") for name in ("Ann", "Bob")}
    assert standings(page) == {marked[winner]: 2, marked[loser]: 0}
    assert "(you)" in (page.text_content("#arena-lines tr.me") or "")
    waits_in_line(srv, ann)
    shot(page, "arena-standings")

    # Bob joins again: the two waiting players race again, and Ann's page takes her there.
    bob.goto(f"{srv.base}/#/arena/{ARENA}")
    bob.click("#arena-join")
    again = raced_in(page)
    assert again != room
    assert raced_in(bob) == again

    # The standings name each racer's race: the rival's to watch, yours to go back to.
    page.goto(f"{srv.base}/#/arena/{ARENA}")
    watch = page.locator("#arena-lines tr:not(.me) a.watch")
    watch.wait_for(timeout=WAIT)
    assert watch.get_attribute("href") == f"/#/watch/{again}"
    assert page.get_attribute("#arena-your-race", "href") == f"/r/{again}"


async def paired(srv: ThreadedServer, names: tuple[str, ...]) -> tuple[list[RaceClient], str]:
    """Players ``names`` join the arena on connections of their own; them, and their race's room."""
    racers = [await RaceClient.connect(srv.ws, name, reconnect=False) for name in names]
    for racer in racers:
        await racer.request(lambda i: JoinArena(id=i, arena=ARENA))
    await eventually(lambda: all(racer.rooms for racer in racers), what="the arena's race")
    [room] = racers[0].rooms
    return racers, room


def test_someone_watching_an_arena_race_sees_the_arenas_name(srv: ThreadedServer, page: Any) -> None:
    racers, room = srv.call(paired(srv, ("Cat", "Dan")))
    try:
        page.goto(f"{srv.base}/#/watch/{room}")
        page.wait_for_selector("#room[data-mode=watch] #arena-name", timeout=WAIT)
        assert page.text_content("#arena-name") == "Arena: Evening arena"
        assert page.get_attribute("#arena-back", "href") == f"/#/arena/{ARENA}"
    finally:
        for racer in racers:
            srv.call(racer.close())
