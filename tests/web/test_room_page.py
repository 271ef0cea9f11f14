"""The room page in a real browser (headless Chromium) against a real server: a double click
sends a card home, every pile shows its name and the two kinds of Antares pile stand apart,
resigning asks first, hints leave the board where it is, undo says what it did, the state is
shown once and a spectator delay only when there is one, a spectator of a full room is not
offered a seat, practice rooms are unlisted and start at once, a room that does not exist
says so, the replay has buttons and page keys, and results explain themselves.
Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from client.lib.connection import RaceClient
from protocol.messages import CreateRoom, Joined, JoinRoom, Ready, Resign, RoomOptions
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.web.conftest import ThreadedServer, shot
from tests.web.test_browser import CORNER, WAIT, create_room_in_page, play_line, type_line, wait_moves

pytestmark = pytest.mark.slow


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server(deal=str(ANTARES_DEAL)) as running:
        yield running


def moves(page: Any) -> int:
    return int(page.get_attribute(".racer-panel.me", "data-moves") or 0)


def practice(page: Any, srv: ThreadedServer) -> str:
    """A practice room on the known deal, racing."""
    code = create_room_in_page(page, srv, seats=1, deal=str(ANTARES_DEAL))
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    return code


def open_room(srv: ThreadedServer, name: str, bot: bool = False, **options: Any) -> tuple[RaceClient, str]:
    """A protocol client that opens a room with ``options``."""

    async def run() -> tuple[RaceClient, str]:
        client = await RaceClient.connect(srv.ws, name, reconnect=False, bot=bot)
        joined = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(**options)))
        assert isinstance(joined, Joined)
        return client, joined.room

    return srv.call(run())


def seat_rival(srv: ThreadedServer, code: str, name: str, bot: bool = False) -> RaceClient:
    """A protocol client that takes a seat in ``code`` and says ready."""

    async def run() -> RaceClient:
        client = await RaceClient.connect(srv.ws, name, reconnect=False, bot=bot)
        joined = await client.request(lambda i: JoinRoom(id=i, room=code))
        assert isinstance(joined, Joined)
        await client.request(lambda i: Ready(id=i, room=code))
        return client

    return srv.call(run())


def test_a_double_click_sends_a_card_home(srv: ThreadedServer, page: Any) -> None:
    practice(page, srv)
    line = list(winning_line())
    first_home = next(n for n, move in enumerate(line) if move.endswith(">h"))
    type_line(page, line[:first_home])
    for number in (first_home, first_home + 1):
        card = line[number].split(">")[0]
        assert line[number] == f"{card}>h"
        source = page.locator(f'.racer-panel.me .card[data-card="{card}"]')
        # The first click picks the card up and redraws the board: the second lands on a new element.
        source.dblclick(position=CORNER)
        wait_moves(page, number + 1)
        suit = card[-1].lower()
        page.wait_for_selector(f'.racer-panel.me .pile[data-pile="h{suit}"] .card[data-card="{card}"]', timeout=WAIT)
        # The page asks for reduced motion (tests/web/conftest.py): the card went home without sliding.
        assert page.evaluate("() => document.getAnimations().length") == 0
    # One move per double click, no more; nothing left selected.
    page.wait_for_timeout(400)
    assert moves(page) == first_home + 2
    assert page.locator(".racer-panel.me .card.selected").count() == 0
    # Two quick clicks whose first puts a card down are two moves, not a double click.
    card, target = line[first_home + 2].split(">")
    page.click(f'.racer-panel.me .card[data-card="{card}"]', position=CORNER)
    page.click(f'.racer-panel.me .pile[data-pile="{target}"]', position=CORNER)
    wait_moves(page, first_home + 3)
    page.wait_for_timeout(400)
    assert moves(page) == first_home + 3


def test_every_pile_shows_its_name_and_the_two_kinds_stand_apart(srv: ThreadedServer, page: Any) -> None:
    practice(page, srv)
    line = list(winning_line())
    # A move redraws the piles whose cards it changed (the server may send a card home after
    # it) and leaves every other pile's nodes as they were.
    piles = (
        "() => Object.fromEntries([...document.querySelectorAll('.racer-panel.me .pile')]"
        ".map(p => [p.dataset.pile, p.textContent]))"
    )
    before = page.evaluate(piles)
    page.evaluate("() => document.querySelectorAll('.racer-panel.me .pile').forEach(p => { p.drawn = 1; })")
    type_line(page, line[:1])
    after = page.evaluate(piles)
    redrawn = page.evaluate(
        "() => [...document.querySelectorAll('.racer-panel.me .pile')].filter(p => !p.drawn).map(p => p.dataset.pile)"
    )
    assert sorted(redrawn) == sorted(name for name in after if after[name] != before[name])
    assert line[0].split(">")[1] in redrawn
    assert len(redrawn) < len(after) / 2
    play_line(page, line[1:4], start=1)  # four cards in the four cells
    names = page.evaluate(
        "() => [...document.querySelectorAll('.racer-panel.me .pile')]"
        ".map(p => p.querySelector('.pile-name')?.textContent)"
    )
    assert sorted(names) == sorted(
        [f"s{n}" for n in range(1, 5)]
        + [f"f{n}" for n in range(1, 5)]
        + [f"c{n}" for n in range(1, 5)]
        + ["hc", "hs", "hh", "hd"]
    )
    # Each name is visible, above its pile's cards (filled cells included), never under a card.
    boxes = page.evaluate(
        """() => [...document.querySelectorAll('.racer-panel.me .pile')].map(pile => {
            const name = pile.querySelector('.pile-name').getBoundingClientRect();
            const cards = [...pile.querySelectorAll('.card')].map(c => c.getBoundingClientRect().top);
            return {pile: pile.dataset.pile, count: cards.length, height: name.height, bottom: name.bottom,
                    top: Math.min(pile.getBoundingClientRect().top, ...cards),
                    shown: getComputedStyle(pile.querySelector('.pile-name')).visibility === 'visible'};
        })"""
    )
    filled = [box for box in boxes if box["pile"].startswith("c")]
    assert all(box["count"] == 1 for box in filled), filled
    for box in boxes:
        assert box["shown"], box
        assert box["height"] > 5, box
        assert box["bottom"] <= box["top"] + 0.5, box
    # The Scorpion piles and the FreeCell piles are two groups, captioned, with a wider gap between.
    groups = page.evaluate(
        """() => [...document.querySelectorAll('.racer-panel.me .board-tableau .pile-group')].map(g => ({
            kind: g.dataset.kind, caption: g.querySelector('.group-name')?.textContent || '',
            piles: [...g.querySelectorAll('.pile')].map(p => p.dataset.pile),
            boxes: [...g.querySelectorAll('.pile')]
                .map(p => [p.getBoundingClientRect().left, p.getBoundingClientRect().right]),
        }))"""
    )
    assert [g["kind"] for g in groups] == ["scorpion", "freecell"]
    assert groups[0]["piles"] == ["s1", "s2", "s3", "s4"]
    assert groups[1]["piles"] == ["f1", "f2", "f3", "f4"]
    assert "in suit" in groups[0]["caption"]
    assert "alternate colours" in groups[1]["caption"]
    inside = groups[0]["boxes"][1][0] - groups[0]["boxes"][0][1]
    between = groups[1]["boxes"][0][0] - groups[0]["boxes"][-1][1]
    assert between >= inside + 6, (inside, between)
    shot(page, "antares-pile-names")


def test_resigning_asks_first(srv: ThreadedServer, page: Any) -> None:
    practice(page, srv)
    page.click("#resign")
    page.wait_for_selector("#resign-question", timeout=WAIT)
    page.click("#resign-cancel")
    page.wait_for_selector("#resign:not([disabled])", timeout=WAIT)
    page.wait_for_timeout(300)
    assert page.get_attribute("#room", "data-state") == "racing"
    page.click("#resign")
    page.click("#resign-confirm")
    page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)


def test_hints_leave_the_board_where_it_is_and_undo_says_so(srv: ThreadedServer, page: Any) -> None:
    practice(page, srv)

    def board_top() -> float:
        return float(page.evaluate("() => document.querySelector('.racer-panel.me').getBoundingClientRect().top"))

    before = board_top()
    page.click("#hint")
    page.wait_for_selector("#hints li", timeout=WAIT)
    with_hints = board_top()
    page.locator("#hints li").first.click()
    wait_moves(page, 1)
    page.wait_for_function("() => document.querySelectorAll('#hints li').length === 0", timeout=WAIT)
    after = board_top()
    assert abs(with_hints - before) <= 1, (before, with_hints)
    assert abs(after - before) <= 1, (before, after)
    # Undo replaces "Played …" by what it did.
    page.wait_for_function("() => document.querySelector('.status').textContent.startsWith('Played ')", timeout=WAIT)
    page.click("#undo")
    page.wait_for_function("() => !document.querySelector('.status').textContent.includes('Played')", timeout=WAIT)
    assert "back" in (page.text_content(".status") or "")
    page.keyboard.press("h")
    page.wait_for_selector("#hints li", timeout=WAIT)
    assert abs(board_top() - before) <= 1


def test_the_state_is_shown_once_and_a_delay_only_when_there_is_one(srv: ThreadedServer, page: Any) -> None:
    client, code = open_room(srv, "Host", max_racers=2, spectator_delay=2)
    page.goto(f"{srv.base}/#/watch/{code}")
    page.wait_for_selector("#room[data-state=waiting]", timeout=WAIT)
    assert page.is_hidden("#clock")
    assert page.text_content("#room-state") == "waiting"
    assert page.text_content("#delay") == "you see this room 2 s behind"
    # A free seat before the race: the spectator may race here.
    assert page.locator("#race-here").count() == 1
    rival = seat_rival(srv, code, "Rival")
    srv.call(client.request(lambda i: Ready(id=i, room=code)))
    page.wait_for_selector("#room[data-state=racing]", timeout=WAIT)
    page.wait_for_selector("#clock:not([hidden])", timeout=WAIT)
    # The room says "racing" once: not again on every racer, nor in the clock.
    assert "racing" not in (page.text_content("#clock") or "")
    assert "racing" not in " ".join(page.locator(".racer-panel .badge").all_text_contents())
    assert page.locator("#race-here").count() == 0  # racing: no seat to offer
    for racer in (client, rival):
        srv.call(racer.request(lambda i: Resign(id=i, room=code)))
    page.wait_for_selector("#room[data-state=finished]", timeout=WAIT)
    assert "over" not in (page.text_content("#clock") or "")
    assert re.fullmatch(r"\d+:\d\d\.\d\d", page.text_content("#clock") or "")
    assert page.locator("#race-here").count() == 0
    for racer in (client, rival):
        srv.call(racer.close())


def test_a_spectator_of_a_full_room_is_not_offered_a_seat(srv: ThreadedServer, page: Any) -> None:
    client, code = open_room(srv, "Alone", max_racers=2)
    rival = seat_rival(srv, code, "Second")
    page.goto(f"{srv.base}/#/watch/{code}")
    page.wait_for_selector("#room[data-state=waiting] .racer-panel[data-seat='1']", timeout=WAIT)
    assert page.locator("#race-here").count() == 0
    srv.call(rival.leave(code))
    page.wait_for_selector("#race-here", timeout=WAIT)
    for racer in (client, rival):
        srv.call(racer.close())


def test_practice_rooms_are_unlisted_and_start_at_once(srv: ThreadedServer, page: Any) -> None:
    page.goto(srv.base + "/")
    page.wait_for_selector("#create-room")
    assert page.is_checked("#new-public")  # a room for several is listed by default
    page.select_option("#new-seats", "1")
    assert not page.is_checked("#new-public")
    page.select_option("#new-variant", "antares")
    page.click("#create-room button[type=submit]")
    page.wait_for_url(re.compile(r"/r/[A-Z0-9]{8}$"))
    code = page.url.rsplit("/", 1)[1]
    # No Ready to press: the countdown runs, then the race.
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    assert page.evaluate(f"() => solitaireRace.conn.rooms.get('{code}').view.options.public") in (None, False)
    page.goto(srv.base + "/")
    page.wait_for_selector("#lobby-rooms tr", timeout=WAIT)
    assert page.locator(f'#lobby-rooms tr[data-code="{code}"]').count() == 0


@pytest.mark.parametrize("code", ["NOPE1234", "ABCDEFGH"])
def test_a_room_that_does_not_exist_says_so(srv: ThreadedServer, page: Any, code: str) -> None:
    page.goto(f"{srv.base}/r/{code}")
    page.wait_for_selector("#no-room", timeout=WAIT)
    assert code in (page.text_content("#no-room") or "")
    assert page.locator("#move-text:visible").count() == 0
    assert page.locator("#join-form").count() == 0
    assert page.locator("#to-lobby").count() == 1
    page.goto(f"{srv.base}/#/watch/{code}")
    page.wait_for_selector("#no-room", timeout=WAIT)


def test_the_replay_has_buttons_and_page_keys(srv: ThreadedServer, page: Any) -> None:
    practice(page, srv)
    play_line(page, list(winning_line())[:3])
    page.click("#resign")
    page.click("#resign-confirm")
    page.wait_for_selector("#room[data-state=finished] #replay-link", timeout=WAIT)
    page.click("#replay-link")
    page.wait_for_selector("#replay-step[max='4']", timeout=WAIT)  # three moves and the resignation

    def step() -> int:
        text = page.text_content("#replay-entry") or ""
        return int(text.split()[1])

    assert step() == 0
    assert page.is_disabled("#replay-back")
    page.click("#replay-forward")
    assert step() == 1
    page.click("#replay-forward")
    page.click("#replay-back")
    assert step() == 1
    # Arrow keys on the page, wherever the focus is (here: nowhere in particular).
    page.locator("h1").click()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert step() == 3
    page.keyboard.press("ArrowLeft")
    assert step() == 2
    page.keyboard.press("Home")
    assert step() == 0
    page.click("#replay-play")
    assert "Pause" in (page.text_content("#replay-play") or "")
    page.wait_for_function(
        "() => document.querySelector('#replay-entry').textContent.startsWith('Step 4 ')", timeout=WAIT
    )
    page.wait_for_selector("#replay-play:text('Play')", timeout=WAIT)
    assert page.is_disabled("#replay-forward")
    shot(page, "replay-controls")


def test_results_explain_themselves_in_a_race_with_a_bot(srv: ThreadedServer, page: Any) -> None:
    code = create_room_in_page(page, srv, seats=2)
    bot = seat_rival(srv, code, "Bot Bert", bot=True)
    page.click("#ready")
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    play_line(page, list(winning_line())[:2])
    srv.call(bot.request(lambda i: Resign(id=i, room=code)))
    page.click("#resign")
    page.click("#resign-confirm")
    page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
    headings = page.locator("#results-table th").all_text_contents()
    assert "Rating" not in headings
    assert "bots are never rated" in (page.text_content("#rating-note") or "")
    assert "(you)" in (page.text_content("#results-table tr.me") or "")
    assert "Seat order breaks exact ties" in (page.text_content("#ranking-rule") or "")
    srv.call(bot.close())


def test_results_explain_themselves_in_a_rated_race(srv: ThreadedServer, page: Any) -> None:
    code = create_room_in_page(page, srv, seats=2)
    rival = seat_rival(srv, code, "Person Pat")
    page.click("#ready")
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    line = list(winning_line())
    srv.call(rival.request(lambda i: Resign(id=i, room=code)))
    type_line(page, line)
    page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
    assert "Rating" in page.locator("#results-table th").all_text_contents()
    mine = page.text_content("#results-table tr.me") or ""
    assert "(you)" in mine
    # One time format, hundredths as in the terminal client, here and on the board.
    time_text = page.locator("#results-table tr.me td").nth(3).text_content() or ""
    assert re.fullmatch(r"\d+:\d\d\.\d\d", time_text), time_text
    assert re.search(r"won in \d+:\d\d\.\d\d", page.text_content(".racer-panel.me .racer-head") or "")
    # A guest is rated but not on the boards: the results say so, with a way to register.
    assert "only accounts are on the leaderboards" in (page.text_content("#guest-note") or "")
    assert page.get_attribute("#guest-register", "href") == "/#/account"
    assert page.locator("#rating-note").count() == 0
    shot(page, "results-rated")
    srv.call(rival.close())
