"""The Play hub end to end in a real terminal: ``python -m client`` under tmux against a real
server (the helpers of test_terminal.py), ``p`` on the home menu, then one way to race each: a
ghost race from a replay link, a challenge sent to a player and seen in both inboxes, an arena's
page with its standings, and a bracket's page, registering there.

Each test starts one server in this process and one client, with its name already saved (no
first-run prompt); what the server should already hold (a finished run, an arena's points, a
bracket) is put there directly, as the Pilot tests of those screens do."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from protocol.messages import AskInbox, CreateRoom, Inbox, Joined, Ready, Resign, RoomOptions
from server.clock import now_ms
from server.competition.arena import Arena
from server.competition.bracket import Bracket
from server.storage.arenas import ArenaStore
from server.storage.brackets import BracketStore
from tests.client.conftest import Running, Serve
from tests.client.test_terminal import ROOT, Terminal, tmux
from tests.client.tui.test_tui import saved

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

#: How many times Down moves from the hub's first entry (Race now) to each entry.
DOWNS = {"challenge": 2, "ghost": 5, "arenas": 7, "brackets": 8, "inbox": 9}


@contextlib.asynccontextmanager
async def client_of(srv: Running, tmp_path: Path, name: str = "Ann") -> AsyncIterator[Terminal]:
    """The client, playing as ``name``, in an 80x24 tmux session, on its home menu."""
    config = saved(tmp_path, name)
    command = shlex.join([sys.executable, "-m", "client", "--server", srv.url, "--config-dir", str(config)])
    await tmux(
        "-u", "new-session", "-d", "-s", "play", "-x", "80", "-y", "24", "-c", str(ROOT),
        "-e", "LANG=C.UTF-8", "-e", "TERM=xterm-256color", command,
    )  # fmt: skip
    try:
        terminal = Terminal("play")
        await terminal.shows(f"Playing as {name}")
        yield terminal
    finally:
        with contextlib.suppress(AssertionError):
            await tmux("kill-server")


async def play(terminal: Terminal, entry: str) -> None:
    """From the home menu, ``p``: the Play hub; then its entry ``entry``."""
    await terminal.type("p")
    await terminal.shows("Play: every way to race")
    await terminal.keys(*["Down"] * DOWNS[entry], "Enter")


async def test_a_replay_links_run_raced_as_a_ghost_from_the_play_hub(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        bob = await srv.connect("Bob")  # a run of Bob's, resigned at once: a finished race
        options = RoomOptions(max_racers=1)
        joined = await bob.request(lambda i: CreateRoom(id=i, variant="scorpion", options=options))
        assert isinstance(joined, Joined)
        code = joined.room
        await bob.request(lambda i: Ready(id=i, room=code))
        await bob.wait_room(code, lambda m: m.view().state == "racing", timeout=10)
        await bob.request(lambda i: Resign(id=i, room=code))
        await bob.wait_room(code, lambda m: m.view().results is not None, timeout=10)

        async with client_of(srv, tmp_path) as terminal:
            await play(terminal, "ghost")
            await terminal.shows("Link or room code")
            await terminal.type(f"{srv.url.replace('ws://', 'http://')}/#/replay/{code}/0")
            await terminal.keys("Enter")
            screen = await terminal.shows("Bob (ghost)")
            assert "Ann (you)" in screen


async def test_a_challenge_sent_from_the_play_hub_is_in_both_inboxes(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        bob = await srv.connect("Bob")
        assert bob.player is not None
        async with client_of(srv, tmp_path) as terminal:
            await play(terminal, "challenge")
            await terminal.shows("Challenge someone")
            await terminal.keys("Tab")  # from the game to the rival's id
            await asyncio.sleep(0.3)  # the focus moves on the UI's next frame
            await terminal.type(bob.player)
            await terminal.keys("Enter")  # Ann's run opens, counting down
            await terminal.shows(" racing")
            await terminal.type("R")
            await terminal.shows("Press R again to resign")
            await terminal.type("R")
            await terminal.shows("Your run is in")  # its results
            await terminal.type("q")
            await terminal.shows("Playing as Ann")
            await play(terminal, "inbox")
            await terminal.shows("Your player id")  # the Challenges screen
            screen = await terminal.shows("waiting for a rival")
            assert "Bob" in screen
        inbox = await bob.request(lambda i: AskInbox(id=i))
        assert isinstance(inbox, Inbox)
        assert [(line.challenger, line.state) for line in inbox.challenges] == [("Ann", "open")]


async def test_an_arenas_page_shows_its_standings_from_the_play_hub(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        assert srv.server.storage is not None
        store, now = ArenaStore(srv.server.storage), now_ms()
        arena = Arena("ARENA1", "antares", "Evening arena", now - 1000, now + 600_000)
        await store.create(arena, now)
        await store.score_race(arena, "ROOM1", 1, [("bob", "Bob", 1), ("cat", "Cat", 2)], now)
        async with client_of(srv, tmp_path) as terminal:
            await play(terminal, "arenas")
            await terminal.shows("Evening arena")  # the list
            await terminal.keys("Enter")
            await terminal.shows("Arena: Evening arena")
            screen = await terminal.shows("Cat")
            standings = [line.split() for line in screen.splitlines() if "Bob" in line or "Cat" in line]
            assert [row[:3] for row in standings] == [["1", "Bob", "2"], ["2", "Cat", "0"]]
            assert "j: join" in screen


async def test_a_brackets_page_registers_from_the_play_hub(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        assert srv.server.storage is not None
        bracket = Bracket("FRIDAY", "scorpion", "Friday bracket", now_ms() + 600_000, 8, 5)
        await BracketStore(srv.server.storage).create(bracket, now_ms())
        async with client_of(srv, tmp_path) as terminal:
            await play(terminal, "brackets")
            await terminal.shows("Friday bracket")  # the list
            await terminal.keys("Enter")
            await terminal.shows("Bracket: Friday bracket")
            await terminal.shows("j: register")
            await terminal.type("j")
            await terminal.shows("You are registered")
