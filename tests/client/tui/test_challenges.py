"""Async challenges in the terminal UI, driven by Textual's test pilot against a real server: Ann
challenges anyone given the id from the Challenges screen, her run says the id to give and,
once resigned, that the result comes with the rival's run; Bob takes it by its id, and both
inboxes then show who won, with the rating change, and replay the runs. An async match gives
the second player the first one's deal: the same challenge. A run says its side and whether it
is rated; a result the server pushes shows in the open inbox at once, with a notification; an
expired challenge's revealed deal is checked against the commitment seen before."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable, Input, OptionList

from client.render.challenges import CHALLENGE_WAIT
from client.tui import navigation as to
from client.tui.app import RaceApp
from client.tui.challenges import ChallengeFormScreen, ChallengesScreen
from client.tui.game import GameScreen
from client.tui.results import ReplayScreen, ResultsScreen
from protocol.messages import (
    AcceptChallenge,
    AskInbox,
    ChallengePlayer,
    CreateRoom,
    Inbox,
    Joined,
    JoinRoom,
    Ready,
    Resign,
    RoomOptions,
)
from server.clock import now_ms
from server.competition.challenges import Challenge, Run, Side
from tests.client.conftest import PATIENCE, Running, Serve, eventually, row_text
from tests.client.tui.keyboard import send_keys, type_text
from tests.client.tui.test_roomtext import footer_cut
from tests.client.tui.test_tui import choose, client_of, home, notices, saved, showing, text_of
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio


#: The window of an invitation a test lets lapse: long enough for the screens to show it open
#: first, short enough to wait out (the server tells its players within a second).
LAPSING_MS = 3_000
#: Seconds to wait for what the server tells of a lapsing invitation, from its creation.
LAPSING_PATIENCE = LAPSING_MS / 1000 + PATIENCE


async def invite(srv: Running, player: str, code: str, window_ms: int = 3_600_000) -> Challenge:
    """A casual Antares challenge from Bob (whose run ended: he resigned it) to ``player``,
    with ``window_ms`` to play it (an hour unless told; :data:`LAPSING_MS` for one to let
    lapse): stored as the server would store it."""
    now = now_ms()
    invitation = Challenge(
        id=code,
        variant="antares",
        deal="617",
        salt="ab" * 16,
        rated=False,
        created=now - 1000,
        expires=now + window_ms,
        challenger=Side("b0b", "Bob"),
        invited=player,
        invited_name="Ann",
        runs={0: Run("B0BRUN01", None, 0, 0, 0)},
    )
    await srv.hub.challenges.create(invitation, now)
    return invitation


async def open_challenges(app: RaceApp, pilot: Pilot[int]) -> ChallengesScreen:
    await home(app)
    await choose(app, pilot, "challenges")
    return await eventually(showing(app, ChallengesScreen), what="the Challenges screen")


async def play_and_resign(app: RaceApp, pilot: Pilot[int], kind: str, typed: str = "") -> str:
    """From the Challenges screen: open the form ``kind`` (a key), type ``typed``, send it, and
    resign the run that opens; the run's challenge id."""
    await pilot.press(kind)
    await eventually(showing(app, ChallengeFormScreen), what="the form")
    if typed:
        await type_text(app, typed)
    await pilot.click("#send")
    screen = await eventually(showing(app, GameScreen), what="the run")
    room = await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
    challenge = room.view().challenge
    assert challenge is not None
    assert room.view().options.max_racers == 1
    send_keys(app, "R", "R")
    await eventually(showing(app, ResultsScreen), what="the run's results")
    return challenge


async def inbox_says(app: RaceApp, pilot: Pilot[int], words: str) -> str:
    """The inbox's first line once it says ``words`` (asked again with r until then)."""

    async def first_row() -> str:
        await pilot.press("r")
        await pilot.pause()
        return row_text(app.screen.query_one("#inbox", DataTable))

    return await eventually_async(first_row, lambda row: words in row)


async def test_a_challenge_taken_by_its_id_ends_in_both_inboxes(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        ann = RaceApp(srv.url, config_dir=saved(tmp_path / "ann", "Ann"))
        async with ann.run_test(size=(80, 24)) as pilot:
            await open_challenges(ann, pilot)
            assert "No challenge yet" in text_of(ann, "#inbox-detail")
            assert await footer_cut(ann) == []
            code = await play_and_resign(ann, pilot, "c")
            # The run said the id to give; its results say the result comes later, and offer no
            # replay nor rematch: one attempt, secret until the rival has played.
            assert CHALLENGE_WAIT in text_of(ann, "#fairness")
            assert f"Challenge {code}" in text_of(ann, "#results-title")
            assert "rematch" not in text_of(ann, "#results-hint")
            await pilot.press("q")
            await open_challenges(ann, pilot)
            assert code in await inbox_says(ann, pilot, "waiting for a rival")
            assert f"give them the id {code}" in text_of(ann, "#inbox-detail")

        bob = RaceApp(srv.url, config_dir=saved(tmp_path / "bob", "Bob"))
        async with bob.run_test(size=(80, 24)) as pilot:
            await open_challenges(bob, pilot)
            assert await play_and_resign(bob, pilot, "t", code.lower()) == code
            await pilot.press("q")
            await open_challenges(bob, pilot)
            # Both resigned with nothing home: an exact tie goes to the challenger.
            row = await inbox_says(bob, pilot, "Ann won · your rating")
            assert row.startswith(f"{code} Scorpion Ann")
            detail = text_of(bob, "#inbox-detail")
            assert "1. Ann" in detail
            assert "2. Bob" in detail
            assert "✓ Fair: deal " in detail  # checked against the commitment of his run
            assert "which you saw before the reveal" in detail
            send_keys(bob, "enter")  # his own run, replayed
            replay = await eventually(showing(bob, ReplayScreen), what="Bob's run")
            assert replay.replay.name == "Bob"

        ann = RaceApp(srv.url, config_dir=saved(tmp_path / "ann", "Ann"))
        async with ann.run_test(size=(80, 24)) as pilot:
            await open_challenges(ann, pilot)
            assert "you won · your rating" in await inbox_says(ann, pilot, "you won")
            send_keys(ann, "v")  # her rival's run
            replay = await eventually(showing(ann, ReplayScreen), what="Bob's run")
            assert replay.replay.name == "Bob"


async def run_async_match(srv: Running, config: Path, name: str) -> str:
    """``name`` plays an async match of Scorpion from the Challenges screen and resigns: the
    challenge of the run."""
    app = RaceApp(srv.url, config_dir=saved(config, name))
    async with app.run_test(size=(80, 24)) as pilot:
        await open_challenges(app, pilot)
        return await play_and_resign(app, pilot, "a")


async def test_an_async_match_plays_the_waiting_players_deal(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        first = await run_async_match(srv, tmp_path / "cat", "Cat")
        # Cat's run waits for the next player once recorded (just after its end).
        stored = await eventually_async(lambda: srv.hub.challenges.get(first), lambda c: c is not None and bool(c.runs))
        assert stored is not None
        assert await run_async_match(srv, tmp_path / "dan", "Dan") == first


async def test_an_invitation_is_counted_on_the_home_menu_and_played_from_the_inbox(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve() as srv:
        bob = await srv.connect("Bob")
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            menu = app.screen.query_one("#menu", OptionList)
            assert "waiting for you" not in str(menu.get_option("challenges").prompt)
            # Bob challenges Ann by her player id (as a leaderboard or a room gives it).
            player = client_of(app).player
            assert player is not None
            joined = await bob.request(lambda i: ChallengePlayer(id=i, variant="antares", player=player))
            assert isinstance(joined, Joined)
            code = joined.room
            await bob.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
            await bob.request(lambda i: Resign(id=i, room=code))

            await open_challenges(app, pilot)
            await eventually(lambda: "1 challenge waiting for you" in text_of(app, "#challenges-title"), what="count")
            await pilot.press("escape")
            await eventually(
                lambda: "1 challenge waiting for you" in str(menu.get_option("challenges").prompt),
                what="the count on the home menu",
            )
            await choose(app, pilot, "challenges")
            await eventually(showing(app, ChallengesScreen), what="the Challenges screen")
            await eventually(lambda: "Enter plays it now" in text_of(app, "#inbox-detail"), what="the invitation")
            send_keys(app, "enter")
            screen = await eventually(showing(app, GameScreen), what="Ann's run")
            room = await client_of(app).wait_room(screen.code, lambda m: m.view().state == "racing", timeout=15)
            assert room.view().challenge == bob.rooms[code].view().challenge
            assert "(rated) · you were challenged" in text_of(app, "#topbar")
            assert "give this id" not in text_of(app, "#topbar")


async def test_c_on_the_results_challenges_the_selected_racer(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        bob = await srv.connect("Bob")
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await home(app)
            client = client_of(app)
            created = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions()))
            assert isinstance(created, Joined)
            code = created.room
            app.post_message(to.Navigate(to.Game(code, created.seat)))
            await bob.request(lambda i: JoinRoom(id=i, room=code))
            for racer in (client, bob):
                await racer.request(lambda i: Ready(id=i, room=code))
            await client.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
            await bob.request(lambda i: Resign(id=i, room=code))
            await eventually(showing(app, GameScreen), what="the race")
            send_keys(app, "R", "R")
            results = await eventually(showing(app, ResultsScreen), what="the results")
            await eventually(lambda: "c: challenge the selected racer" in text_of(app, "#results-hint"), what="c")
            table = results.query_one("#results", DataTable)
            bob_row = next(row for row in range(table.row_count) if str(table.get_row_at(row)[1]) == "Bob")
            table.move_cursor(row=bob_row)
            await pilot.press("c")
            form = await eventually(showing(app, ChallengeFormScreen), what="the challenge form")
            assert form.query_one("#rival", Input).value == bob.player
            await pilot.click("#send")
            await eventually(showing(app, GameScreen), what="Ann's run")
            inbox = await bob.request(lambda i: AskInbox(id=i))
            assert isinstance(inbox, Inbox)
            assert [(line.challenger, line.state, line.side) for line in inbox.challenges] == [("Ann", "open", None)]


async def test_a_challenges_run_says_your_side_and_whether_it_is_rated(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24)) as pilot:
            await open_challenges(app, pilot)
            await pilot.press("c")
            await eventually(showing(app, ChallengeFormScreen), what="the form")
            await pilot.click("#rated")  # casual
            await pilot.click("#send")
            run = await eventually(showing(app, GameScreen), what="the run")
            await client_of(app).wait_room(run.code, lambda m: m.view().state == "racing", timeout=15)
            topbar = await eventually(lambda: text_of(app, "#topbar"), what="the top bar")
            assert "(casual) · you challenged: give this id to your rival" in topbar
            send_keys(app, "R", "R")
            await eventually(showing(app, ResultsScreen), what="the run's results")
            assert "Casual: no rating moves." in text_of(app, "#results-notes")


async def test_a_result_pushed_while_the_inbox_shows_replaces_its_line_with_a_notification(
    serve: Serve, tmp_path: Path
) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await open_challenges(app, pilot)
            code = await play_and_resign(app, pilot, "c")
            await pilot.press("q")
            await open_challenges(app, pilot)
            table = app.screen.query_one("#inbox", DataTable)
            await eventually(lambda: "waiting for a rival" in row_text(table), what="Ann's challenge")

            bob = await srv.connect("Bob")
            joined = await bob.request(lambda i: AcceptChallenge(id=i, challenge=code))
            assert isinstance(joined, Joined)
            await bob.wait_room(joined.room, lambda m: m.view().state == "racing", timeout=15)
            await bob.request(lambda i: Resign(id=i, room=joined.room))
            # Nobody pressed r: the pushed result is the line, and a notification says it.
            await eventually(lambda: "you won · your rating" in row_text(table), what="the result in the inbox")
            told = f"Challenge {code} (Scorpion) against Bob: you won · your rating"
            await eventually(lambda: told in notices(app), what="the notification")
            assert "1. Ann" in text_of(app, "#inbox-detail")


async def test_a_revealed_deal_is_checked_against_the_commitment_seen_before(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        app = RaceApp(srv.url, config_dir=saved(tmp_path, "Ann"))
        async with app.run_test(size=(80, 24), notifications=True) as pilot:
            await home(app)
            ann = client_of(app).player
            assert ann is not None
            await open_challenges(app, pilot)
            await eventually(lambda: "No challenge yet" in text_of(app, "#inbox-detail"), what="the empty inbox")
            await invite(srv, ann, "LAPSING1", window_ms=LAPSING_MS)
            await pilot.press("r")
            await eventually(lambda: "Enter plays it now" in text_of(app, "#inbox-detail"), what="the invitation")
            assert "617" not in text_of(app, "#inbox-detail")  # its commitment only, seen now

            # Its window closes: the server says it expired and reveals the deal.
            table = app.screen.query_one("#inbox", DataTable)
            await eventually(
                lambda: "expired: void" in row_text(table), timeout=LAPSING_PATIENCE, what="the expiry in the inbox"
            )
            detail = text_of(app, "#inbox-detail")
            assert "✓ Fair: deal 617 hashes to the commitment" in detail
            assert "which you saw before the reveal" in detail
            told = "Challenge LAPSING1 (Antares) against Bob expired before both runs were in"
            await eventually(lambda: told in notices(app), what="the notification")
