"""The web client in a real browser (headless Chromium) against a real server.

A bot races while the page watches; a person in the browser plays a known winnable deal to
the end against a bot, with clicks, drags and typed moves; a reload puts the person back in
their seat; the daily board shows the entry of the account registered in the page. Screenshots go to build/screenshots/.
"""

from __future__ import annotations

import itertools
import re
from functools import partial
from typing import Any

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from client.lib.bot import Bot
from client.lib.connection import RaceClient
from protocol.messages import (
    CreateRoom,
    Joined,
    JoinRoom,
    PlayMove,
    Ready,
    RoomOptions,
    Variant,
)
from server.storage.accounts import AccountStore
from tests.end_to_end.conftest import registered_before_today
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.web.conftest import ThreadedServer, register_in_page, shot

#: Milliseconds the page may take for something the server does at once (on a busy machine).
WAIT = 15_000

pytestmark = pytest.mark.slow


@pytest.fixture
def srv(web_server: Any) -> Any:
    with web_server(deal=str(ANTARES_DEAL)) as running:
        yield running


CORNER = {"x": 8, "y": 6}


def foundation(card: str) -> str:
    return "h" + card[-1].lower()


#: Moves a person plays by hand in a race to the end (:func:`play_line`: clicks, drags and typing).
PLAYED = 14


def play_line(page: Any, moves: list[str], start: int = 0) -> None:
    """Play ``moves`` on the page's own board: mostly click-click, every fifth move by drag and
    drop, every seventh typed in the move box; waits for each move's board update."""
    me = page.locator(".racer-panel.me")
    for number, text in enumerate(moves, start=start):
        card, target = text.split(">")
        pile = foundation(card) if target == "h" else target
        source = me.locator(f'.card[data-card="{card}"]')
        destination = me.locator(f'.pile[data-pile="{pile}"]')
        if number % 7 == 3:
            how = "typed"
            page.fill("#move-text", text)
            page.press("#move-text", "Enter")
        elif number % 5 == 4:
            how = "dragged"
            source.drag_to(destination, source_position=CORNER, target_position=CORNER)
        else:
            # The top left corner: the part of a card that cards lying on it leave visible.
            how = "clicked"
            source.click(position=CORNER)
            destination.click(position=CORNER)
        try:
            wait_moves(page, number + 1)
        except PlaywrightTimeout:
            shown = page.evaluate(
                "() => [document.querySelector('.racer-panel.me')?.dataset.moves,"
                " document.querySelector('.status')?.textContent, document.querySelector('.selected')?.outerHTML]"
            )
            failure = f"move {number + 1} ({text}, {how}) not shown: moves, status, selection {shown}"
            raise AssertionError(failure) from None


def type_line(page: Any, moves: list[str], start: int = 0) -> None:
    """Type ``moves`` in the page's move box one after the other, without waiting for each
    to show (the server takes them in order; :func:`play_line` tries each way of moving a
    card); waits until the board shows them all (``start`` moves were played before). A line
    longer than the server's request burst (100 by default) could meet its rate limit, which
    the page does not retry."""
    for text in moves:
        page.fill("#move-text", text)
        page.press("#move-text", "Enter")
    wait_moves(page, start + len(moves))


def wait_moves(page: Any, count: int) -> None:
    """Wait until the player's own board shows ``count`` moves."""
    page.wait_for_function(
        "n => Number(document.querySelector('.racer-panel.me')?.dataset.moves) === n", arg=count, timeout=WAIT
    )


def create_room_in_page(page: Any, srv: ThreadedServer, seats: int, deal: str | None = None) -> str:
    page.goto(srv.base + "/")
    page.wait_for_selector("#create-room")
    page.select_option("#new-variant", "antares")
    page.select_option("#new-seats", str(seats))
    page.uncheck("#new-public")
    if deal:
        page.fill("#new-deal", deal)
    page.click("#create-room button[type=submit]")
    page.wait_for_url(re.compile(r"/r/[A-Z0-9]{8}$"))
    if seats == 1:
        # A practice room starts at once, as in the terminal client: no Ready to press.
        page.wait_for_selector("#room[data-state=countdown], #room[data-state=racing]", timeout=WAIT)
    else:
        page.wait_for_selector("#ready")
    return str(page.url.rsplit("/", 1)[1])


def test_the_page_watches_a_bot_race(srv: ThreadedServer, moving_page: Any) -> None:
    page = moving_page

    async def open_room() -> tuple[RaceClient, str]:
        client = await RaceClient.connect(srv.ws, "Botty", reconnect=False)
        options = RoomOptions(max_racers=1, deal=str(ANTARES_DEAL), spectator_delay=0)
        joined = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
        assert isinstance(joined, Joined)
        return client, joined.room

    client, code = srv.call(open_room())
    page.goto(f"{srv.base}/#/watch/{code}")
    page.wait_for_selector("#room[data-state=waiting]", timeout=WAIT)
    # No delay, so no word about one.
    assert page.locator("#delay").count() == 0
    bot = Bot(client, code, delay=0.25, max_moves=12)
    srv.call(bot.ready())
    played = srv.spawn(bot.play())
    panel = page.locator(".racer-panel[data-seat='0']")
    page.wait_for_selector("#room[data-state=racing] .racer-panel .card.up", timeout=WAIT)
    # The watched board changes as the bot plays (the bot may undo, so count distinct boards).
    boards: set[str] = set()
    for _ in range(300):
        boards.add(panel.locator(".board").inner_html())
        if len(boards) >= 4:
            break
        page.wait_for_timeout(50)
    assert len(boards) >= 4, "the watched board did not follow the bot's moves"
    # Moves slide in: cards of the watched board are caught animating.
    page.wait_for_function("() => document.getAnimations().length > 0", timeout=WAIT, polling=10)
    assert page.locator(".racer-panel progress").count() == 1
    shot(page, "watch-desktop")
    page.set_viewport_size({"width": 390, "height": 844})
    page.wait_for_timeout(300)
    check_board_fits(page, "watch-phone")
    played.result(60)
    page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
    page.wait_for_selector("#fairness[data-ok=true]", timeout=WAIT)
    assert 'sha256("antares|24|' in (page.text_content("#fairness") or "")
    check_board_fits(page, "watch-phone-results")
    srv.call(client.close())


def check_board_fits(page: Any, name: str) -> None:
    """Every board fits the viewport's width, its cards are drawn, and the screenshot is not blank."""
    page.evaluate("() => document.getAnimations().forEach(animation => animation.finish())")
    overflow = page.evaluate("() => document.scrollingElement.scrollWidth - window.innerWidth")
    wide = page.evaluate(
        "() => [...document.querySelectorAll('body *')]"
        ".filter(e => e.getBoundingClientRect().right > innerWidth + 1).slice(0, 5)"
        ".map(e => `${e.tagName}.${e.className} ${(e.textContent || '').slice(0, 30)}`)"
    )
    assert overflow <= 0, f"the page is {overflow} px wider than the screen: {wide}"
    widths = page.evaluate("() => [...document.querySelectorAll('.card.up')].map(c => c.getBoundingClientRect().width)")
    assert widths
    assert min(widths) >= 30, "cards too small to read"
    # Columns side by side, never overlapping: each pile's box starts right of the previous one.
    lefts = page.evaluate(
        "() => [...document.querySelectorAll('.board-tableau')].map(row => [...row.querySelectorAll('.pile')]"
        ".map(p => [p.getBoundingClientRect().left, p.getBoundingClientRect().right]))"
    )
    for row in lefts:
        assert all(a[1] <= b[0] + 0.5 for a, b in itertools.pairwise(row)), row
    path = shot(page, name)
    # A blank or single-colour page compresses to a few kilobytes; drawn cards do not.
    assert path.stat().st_size > 15_000, "the screenshot looks blank"


async def seat_ready_rival(srv: ThreadedServer, code: str) -> RaceClient:
    """A second racer, Robo, seated in room ``code`` and ready."""
    client = await RaceClient.connect(srv.ws, "Robo", reconnect=False)
    assert isinstance(await client.request(lambda i: JoinRoom(id=i, room=code)), Joined)
    await client.request(lambda i: Ready(id=i, room=code))
    return client


def test_a_rivals_move_in_the_middle_of_a_click_does_not_lose_it(srv: ThreadedServer, page: Any) -> None:
    """The rival's update redraws the room between the button's press and its release: the
    card pressed is still picked up (the press and the release land on the same card)."""
    code = create_room_in_page(page, srv, seats=2)
    rival = srv.call(seat_ready_rival(srv, code))
    page.wait_for_selector(".racer-panel:not(.me)", timeout=WAIT)
    page.click("#ready")
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    first = winning_line()[0]
    card = first.split(">")[0]
    box = page.locator(f'.racer-panel.me .card[data-card="{card}"]').bounding_box()
    page.mouse.move(box["x"] + CORNER["x"], box["y"] + CORNER["y"])
    page.mouse.down()
    srv.call(rival.request(lambda i: PlayMove(id=i, room=code, move=first)))
    page.wait_for_function(
        "() => Number(document.querySelector('.racer-panel:not(.me)')?.dataset.moves) === 1", timeout=WAIT
    )
    page.mouse.up()
    page.wait_for_selector(f'.racer-panel.me .card.selected[data-card="{card}"]', timeout=WAIT)
    srv.call(rival.close())


def test_a_person_plays_a_deal_to_the_end_against_a_bot(srv: ThreadedServer, page: Any) -> None:
    code = create_room_in_page(page, srv, seats=2)
    rival = srv.call(seat_ready_rival(srv, code))
    page.wait_for_selector(".racer-panel:not(.me)", timeout=WAIT)
    page.click("#ready")
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    bot = srv.spawn(Bot(rival, code, delay=0.5, max_moves=8).play())
    # An illegal move: the page shows the server's reason.
    page.fill("#move-text", "2D>s2")
    page.press("#move-text", "Enter")
    page.wait_for_selector(".status.error", timeout=WAIT)
    assert "build-in-suit" in (page.text_content(".status.error") or "")
    # A rival's board stays hidden while the person races.
    assert page.locator(".racer-panel:not(.me) .card").count() == 0
    shot(page, "race-start")
    line = list(winning_line())
    # Each way of moving a card, several times over; the rest of the line typed at once.
    play_line(page, line[:PLAYED])
    type_line(page, line[PLAYED:], start=PLAYED)
    page.wait_for_selector(".racer-panel.me .badge:text('won in')", timeout=WAIT)
    bot.result(60)
    page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
    first = page.locator("#results-table tbody tr").first
    assert "won" in (first.text_content() or "")
    page.wait_for_selector("#fairness[data-ok=true]", timeout=WAIT)
    shot(page, "race-finished")
    # The replay of the race, from the results.
    page.click("#replay-link")
    page.wait_for_selector("#replay-step[max]:not([max='0'])", timeout=WAIT)
    assert int(page.get_attribute("#replay-step", "max") or 0) >= len(line)
    page.fill("#replay-step", "5")
    page.wait_for_function("() => document.querySelector('#replay-entry').textContent.startsWith('Step 5 ')")
    shot(page, "replay")
    srv.call(rival.close())


def test_a_reload_puts_the_racer_back_in_the_seat(srv: ThreadedServer, page: Any) -> None:
    code = create_room_in_page(page, srv, seats=1, deal=str(ANTARES_DEAL))
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    line = list(winning_line())
    play_line(page, line[:3])
    # Undo takes the third move back (the move count keeps it); playing it again makes 4 moves.
    moved = page.get_attribute(f'.racer-panel.me .card[data-card="{line[2].split(">")[0]}"]', "data-pile")
    page.click("#undo")
    page.wait_for_function(
        "([card, pile]) => document.querySelector(`.racer-panel.me .card[data-card='${card}']`).dataset.pile !== pile",
        arg=[line[2].split(">")[0], moved],
        timeout=WAIT,
    )
    page.fill("#move-text", line[2])
    page.press("#move-text", "Enter")
    page.wait_for_function("() => document.querySelector('.racer-panel.me').dataset.moves === '4'", timeout=WAIT)
    # Hints: the server's list, best first, shown under the buttons.
    page.click("#hint")
    page.wait_for_selector(".hints li", timeout=WAIT)
    token = page.evaluate("() => localStorage.getItem('solitaire-race.resume')")
    page.reload()
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    assert page.get_attribute(".racer-panel.me", "data-moves") == "4"
    assert page.locator("#join-form").count() == 0
    assert page.evaluate("() => localStorage.getItem('solitaire-race.resume')") == token
    # Keyboard play after the reload: the cursor to the card, Enter, the cursor to the pile, Enter.
    card, target = line[3].split(">")
    piles = page.evaluate("() => [...document.querySelectorAll('.racer-panel.me .pile')].map(p => p.dataset.pile)")
    order = page.evaluate(
        "() => [...document.querySelectorAll('.racer-panel.me .pile')]"
        ".sort((a, b) => a.compareDocumentPosition(b) & 2 ? 1 : -1).map(p => p.dataset.pile)"
    )
    assert sorted(piles) == sorted(order)
    play_by_keyboard(page, card, target)
    page.wait_for_function("() => document.querySelector('.racer-panel.me').dataset.moves === '5'", timeout=WAIT)
    assert code in page.url
    # A dropped connection: the page reconnects by itself, resumes, and play goes on.
    page.evaluate("() => solitaireRace.conn.socket.close()")
    page.wait_for_selector(".status.error:text('reconnecting')", timeout=WAIT)
    page.fill("#move-text", line[4])
    page.press("#move-text", "Enter")
    page.wait_for_function("() => document.querySelector('.racer-panel.me').dataset.moves === '6'", timeout=WAIT)


def play_by_keyboard(page: Any, card: str, target: str) -> None:
    """Move the keyboard cursor to ``card``, pick it up, move to ``target``, put it down."""
    source = page.get_attribute(f'.racer-panel.me .card[data-card="{card}"]', "data-pile")
    index = int(page.get_attribute(f'.racer-panel.me .card[data-card="{card}"]', "data-index") or 0)
    # Pile numbers follow the room's pile list: s1-s4, f1-f4, c1-c4, hc-hd.
    order = ["s1", "s2", "s3", "s4", "f1", "f2", "f3", "f4", "c1", "c2", "c3", "c4", "hc", "hs", "hh", "hd"]
    page.locator("body").click(position={"x": 2, "y": 2})
    page.keyboard.press("ArrowRight")  # the cursor appears on s1, then moves to s2
    page.keyboard.press("ArrowLeft")
    for _ in range(order.index(source or "s1")):
        page.keyboard.press("ArrowRight")
    count = page.locator(f'.racer-panel.me .pile[data-pile="{source}"] .card').count()
    for _ in range(count - 1 - index):
        page.keyboard.press("ArrowUp")
    page.keyboard.press("Enter")
    assert page.locator(".racer-panel.me .card.selected").count() >= 1
    steps = (order.index(target) - order.index(source or "s1")) % len(order)
    for _ in range(steps):
        page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")


def test_the_daily_board_shows_the_players_entry(web_server: Any, page: Any) -> None:
    with web_server(solver_workers=1, solver_budget=0.5, pool_size=1) as srv:
        # A guest is told today's deal is for accounts, and offered to register, before anything.
        page.goto(f"{srv.base}/#/daily/antares")
        page.wait_for_selector("#daily-register", timeout=90_000)
        assert "for accounts" in (page.text_content("#daily-access") or "")
        # Only accounts have a ranked attempt: register in the page.
        register_in_page(page, srv.base, "Daily Dora", "a browser password")
        storage = srv.server.storage
        assert storage is not None
        account = srv.call(AccountStore(storage).by_name("Daily Dora"))
        assert account is not None
        srv.call(registered_before_today(storage, account.player))  # today's deal is for those
        page.goto(f"{srv.base}/#/daily/antares")
        page.wait_for_selector("#play-daily", timeout=90_000)
        assert "ranked" in (page.text_content("#play-daily") or "")
        page.click("#play-daily")
        page.wait_for_url(re.compile(r"/r/[A-Z0-9]{8}$"))
        page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
        assert page.is_disabled("#hint")
        name = page.evaluate("() => localStorage.getItem('solitaire-race.name')")
        page.click("#resign")
        page.click("#resign-confirm")
        page.wait_for_selector("#room[data-state=finished] #results-table", timeout=WAIT)
        assert "secret until the day ends" in (page.text_content("#fairness") or "")
        page.goto(f"{srv.base}/#/daily/antares")
        page.wait_for_selector("#daily-board tr.me", timeout=WAIT)
        assert name in (page.text_content("#daily-board tr.me") or "")
        assert name in (page.text_content("#daily-around tr.me") or "")
        assert "You have played today's deal" in (page.text_content("#daily-today") or "")
        shot(page, "daily")


def test_the_lobby_lists_public_rooms_live(srv: ThreadedServer, page: Any) -> None:
    page.goto(srv.base + "/")
    page.wait_for_selector("#lobby-rooms")

    async def open_public() -> tuple[RaceClient, str]:
        client = await RaceClient.connect(srv.ws, "Lobbyist", reconnect=False)
        options = RoomOptions(max_racers=3, public=True)
        joined = await client.request(lambda i: CreateRoom(id=i, variant="scorpion", options=options))
        assert isinstance(joined, Joined)
        return client, joined.room

    client, code = srv.call(open_public())
    row = page.locator(f'#lobby-rooms tr[data-code="{code}"]')
    row.wait_for(timeout=WAIT)
    assert "Lobbyist (1/3)" in (row.text_content() or "")

    srv.call(client.leave(code))
    row.wait_for(state="detached", timeout=WAIT)
    srv.call(client.close())


def test_the_lobby_pages_as_the_server_does_and_shows_one_game(web_server: Any, page: Any) -> None:
    with web_server(max_rooms_per_player=10, public_rooms_per_address=100) as srv:

        async def open_public() -> list[RaceClient]:
            hosts = []
            for host in range(6):
                client = await RaceClient.connect(srv.ws, f"Host {host}", reconnect=False)
                hosts.append(client)
                for n in range(min(10, 51 - 10 * host)):
                    variant: Variant = "antares" if n % 2 == 0 else "scorpion"
                    options = RoomOptions(public=True)
                    joined = await client.request(partial(CreateRoom, variant=variant, options=options))
                    assert isinstance(joined, Joined)
            return hosts

        hosts = srv.call(open_public())
        page.goto(srv.base + "/")
        rows = page.locator("#lobby-rooms tr[data-code]")
        page.wait_for_function("() => document.querySelectorAll('#lobby-rooms tr[data-code]').length === 50")
        assert page.is_disabled("#lobby-previous")
        page.click("#lobby-next")
        page.wait_for_function("() => document.querySelectorAll('#lobby-rooms tr[data-code]').length === 1")
        assert "page 2" in (page.text_content("#lobby-page") or "")
        assert page.is_disabled("#lobby-next")
        page.click("#lobby-previous")
        page.wait_for_function("() => document.querySelectorAll('#lobby-rooms tr[data-code]').length === 50")
        page.select_option("#lobby-game", "scorpion")
        page.wait_for_function("() => document.querySelectorAll('#lobby-rooms tr[data-code]').length === 25")
        assert set(rows.all_text_contents()) == set(rows.filter(has_text="Scorpion").all_text_contents())
        shot(page, "lobby-pages")
        for client in hosts:
            srv.call(client.close())


def test_joining_from_a_link_with_a_name(srv: ThreadedServer, page: Any) -> None:
    async def open_room() -> tuple[RaceClient, str]:
        client = await RaceClient.connect(srv.ws, "Host", reconnect=False)
        joined = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=2)))
        assert isinstance(joined, Joined)
        return client, joined.room

    client, code = srv.call(open_room())
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"{srv.base}/r/{code}")
    page.wait_for_selector("#join-form", timeout=WAIT)
    page.fill("#join-name", "Zoë")
    page.click("#join")
    page.wait_for_selector(".racer-panel.me", timeout=WAIT)
    assert "Zoë (you)" in (page.text_content(".racer-panel.me .name") or "")
    assert page.evaluate("() => localStorage.getItem('solitaire-race.name')") == "Zoë"
    page.click("#ready")
    srv.call(client.request(lambda i: Ready(id=i, room=code)))
    page.wait_for_selector("#room[data-state=racing] .racer-panel.me .card.up", timeout=WAIT)
    check_board_fits(page, "race-phone")
    srv.call(client.close())
