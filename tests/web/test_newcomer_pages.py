"""A newcomer's run of the web client (issue 40) in a real browser (headless Chromium) against a
real server: each game's move box shows its own pile names and only a game with a stock deals on
`d`; resigning says so; the lobby fits a phone with live rooms listed, every control readable;
the bot levels play at the terminal's paces and are described in its words; a replay counts its
steps in good English. Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from client.lib.bot import LEVELS, STYLES, level_text
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.web.conftest import ThreadedServer, shot
from tests.web.test_browser import WAIT, create_room_in_page, play_line, wait_moves
from tests.web.test_room_page import open_room, practice, seat_rival

pytestmark = pytest.mark.slow

#: Records every request the page sends (``window.sent``), on the page's own connection.
SPY = """() => {
    const conn = solitaireRace.conn;
    const request = conn.request.bind(conn);
    window.sent = [];
    conn.request = (fields, ...rest) => { window.sent.push(fields); return request(fields, ...rest); };
}"""

#: The controls of the lobby whose text does not fit their box: a select's chosen option, a text
#: box's placeholder (measured in the control's own font; a select keeps room for its arrow).
CUT_CONTROLS = """() => {
    const context = document.createElement('canvas').getContext('2d');
    const cut = [];
    for (const control of document.querySelectorAll('#lobby select, #lobby input[type=text]')) {
        const style = getComputedStyle(control);
        context.font = `${style.fontWeight} ${style.fontSize} ${style.fontFamily}`;
        const text = control.tagName === 'SELECT' ? control.selectedOptions[0].text : control.placeholder;
        const room = control.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight)
            - (control.tagName === 'SELECT' ? 16 : 0);
        if (context.measureText(text).width > room) cut.push(`${control.id}: ${text}`);
    }
    return cut;
}"""


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server(deal=str(ANTARES_DEAL)) as running:
        yield running


def sent_moves(page: Any) -> list[str]:
    return [str(fields.get("move")) for fields in page.evaluate("() => window.sent") if fields.get("type") == "move"]


def test_each_game_has_its_own_move_examples_and_only_scorpion_deals(srv: ThreadedServer, page: Any) -> None:
    practice(page, srv)  # Antares
    page.wait_for_selector("#move-text:visible", timeout=WAIT)
    placeholder = page.get_attribute("#move-text", "placeholder") or ""
    assert placeholder == "QS>f1, 7H>c1, c2>h"  # the terminal client's examples, Antares pile names
    page.evaluate(SPY)
    page.locator("h1").click()
    page.keyboard.press("d")  # Antares has no stock: nothing to deal, nothing sent
    page.wait_for_timeout(500)
    assert sent_moves(page) == []
    assert "deal" not in (page.text_content(".status") or "")

    page.goto(srv.base + "/")
    page.wait_for_selector("#create-room")
    page.select_option("#new-variant", "scorpion")
    page.select_option("#new-seats", "1")
    page.click("#create-room button[type=submit]")
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    assert page.get_attribute("#move-text", "placeholder") == "QS>5, deal"
    page.evaluate(SPY)
    page.locator("h1").click()
    page.keyboard.press("d")  # Scorpion: d deals the stock
    wait_moves(page, 1)
    assert sent_moves(page) == ["deal"]


def test_resigning_says_so(srv: ThreadedServer, page: Any) -> None:
    code = create_room_in_page(page, srv, seats=2)
    rival = seat_rival(srv, code, "Rival Rae")
    page.click("#ready")
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    play_line(page, list(winning_line())[:1])
    page.click("#undo")
    page.wait_for_function("() => document.querySelector('.status').textContent.includes('back')", timeout=WAIT)
    page.click("#resign")
    page.click("#resign-confirm")
    # The rival races on (the room is still racing): the status line says what happened.
    page.wait_for_function("() => document.querySelector('.status').textContent === 'You resigned.'", timeout=WAIT)
    assert page.get_attribute("#room", "data-state") == "racing"
    srv.call(rival.close())


def test_the_lobby_fits_a_phone_with_rooms_listed(srv: ThreadedServer, page: Any) -> None:
    host, code = open_room(srv, "Quite A Long Name", max_racers=4, public=True)
    rival = seat_rival(srv, code, "Another Longish Name")
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(srv.base + "/")
    page.wait_for_selector(f'#lobby-rooms tr[data-code="{code}"]', timeout=WAIT)
    overflow = page.evaluate("() => document.scrollingElement.scrollWidth - innerWidth")
    assert overflow <= 0, f"the page is {overflow} px wider than the phone"
    row = page.text_content(f'#lobby-rooms tr[data-code="{code}"]') or ""
    assert "Quite A Long Name, Another Longish Name (2/4)" in row
    assert "0 watching" in row  # no table head on a phone: the count says what it counts
    assert page.evaluate(CUT_CONTROLS) == []
    for level in LEVELS:  # whichever level is chosen, the line under the choice says how it plays
        page.select_option("#bot-level", level)
        assert page.text_content("#bot-level-text") == level_text(level)
        assert page.evaluate(CUT_CONTROLS) == []
    shot(page, "lobby-phone-rooms")
    page.set_viewport_size({"width": 1100, "height": 900})  # the desktop keeps its table
    assert page.is_visible("#lobby-table thead")
    assert page.evaluate(CUT_CONTROLS) == []
    for client in (host, rival):
        srv.call(client.close())


def test_the_web_bot_plays_the_terminal_bots_levels(srv: ThreadedServer, page: Any) -> None:
    page.goto(srv.base + "/")
    page.wait_for_selector("#bot-race")
    levels = page.evaluate(
        """async () => {
            const { LEVELS } = await import('/js/bot.js');
            return LEVELS;
        }"""
    )
    assert list(levels) == list(LEVELS)
    for level in LEVELS:
        style = STYLES[level]
        assert levels[level]["delay"] == style.delay, level
        assert levels[level]["noise"] == style.tactics.noise, level
        assert levels[level]["patience"] == style.patience, level
        assert levels[level]["text"] == level_text(level), level
    assert page.input_value("#bot-level") == "medium"
    assert page.text_content("#bot-level-text") == "medium: a move every 2 s, strays now and then"


def test_a_replay_counts_its_steps(srv: ThreadedServer, page: Any) -> None:
    code = practice(page, srv)
    page.click("#resign")
    page.click("#resign-confirm")
    page.wait_for_selector("#room[data-state=finished] #replay-link", timeout=WAIT)
    page.goto(f"{srv.base}/#/replay/{code}")
    page.wait_for_selector("#replay-step[max='1']", timeout=WAIT)  # the resignation only
    page.wait_for_function("() => document.querySelector('#replay .status').textContent.endsWith('.')")
    assert re.fullmatch(r".+: 1 step\.", page.text_content("#replay .status") or "")
