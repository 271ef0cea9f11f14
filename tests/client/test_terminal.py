"""End to end in a real terminal: ``python -m client`` under tmux against a real server,
driven by keys, checked on the captured screen.

A key that moves the focus (Tab, ``:``, Escape) is followed by a wait for the screen to show the
move before the next keys go: Textual moves the focus after the keys it has already read, so on a
busy machine, where the client reads a key and the next ones at once, they would land on the
widget the focus left (and an Escape read with the next key is Alt and that key)."""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.client.conftest import Serve
from tests.known_deals import ANTARES_DEAL
from tests.polling import COUNTDOWN

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

ROOT = Path(__file__).resolve().parents[2]


#: A tmux server of our own (``-L``), so the test never touches the user's sessions.
SOCKET = f"solitaire-race-test-{uuid.uuid4().hex[:8]}"


async def tmux(*args: str) -> str:
    process = await asyncio.create_subprocess_exec(
        "tmux", "-L", SOCKET, *args, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    try:
        # A tmux command answers at once; a wedged tmux server fails the test, not the run.
        out, err = await asyncio.wait_for(process.communicate(), 30)
    except TimeoutError:
        process.kill()
        await process.wait()
        raise AssertionError(f"tmux {' '.join(args)} did not answer in 30 s") from None
    assert process.returncode == 0, err.decode()
    return out.decode()


class Terminal:
    """An 80x24 tmux session running one command."""

    def __init__(self, session: str) -> None:
        self.session = session

    async def screen(self) -> str:
        return await tmux("capture-pane", "-p", "-t", self.session)

    async def keys(self, *keys: str) -> None:
        await tmux("send-keys", "-t", self.session, *keys)

    async def type(self, text: str) -> None:
        await tmux("send-keys", "-t", self.session, "-l", text)

    async def shows(self, text: str, timeout: float = 10.0) -> str:
        """Wait until the screen shows ``text``; return the screen."""
        deadline = time.monotonic() + timeout
        while True:
            screen = await self.screen()
            if text in screen:
                return screen
            if time.monotonic() > deadline:
                raise AssertionError(f"the screen never showed {text!r}; it shows:\n{screen}")
            await asyncio.sleep(0.1)

    async def typing_on(self, text: str, timeout: float = 10.0) -> None:
        """Wait until the focused text field is on the line that shows ``text`` (Textual puts the
        terminal's cursor, hidden, in the focused field), so that what is typed next goes there."""
        deadline = time.monotonic() + timeout
        while True:
            row = int(await tmux("display-message", "-p", "-t", self.session, "#{cursor_y}"))
            lines = (await self.screen()).splitlines()
            if row < len(lines) and text in lines[row]:
                return
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"the cursor never went to the line showing {text!r}; it is on line {row} of:\n" + "\n".join(lines)
                )
            await asyncio.sleep(0.1)


async def test_a_practice_race_in_a_real_terminal(serve: Serve, tmp_path: Path) -> None:
    async with serve() as srv:
        session = "client"
        command = " ".join(
            shlex.quote(part)
            for part in (sys.executable, "-m", "client", "--server", srv.url, "--config-dir", str(tmp_path))
        )
        await tmux(
            "-u", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", str(ROOT),
            "-e", "LANG=C.UTF-8", "-e", "TERM=xterm-256color", command,
        )  # fmt: skip
        terminal = Terminal(session)
        try:
            await terminal.shows("What name should other racers see?")
            await terminal.type("Ann")
            await terminal.keys("Enter")
            await terminal.shows("Playing as Ann")
            # Race a bot, quick race, challenges, arenas, brackets, the daily challenge, Create, Join,
            # Spectate: then Practice.
            await terminal.keys(*["Down"] * 9, "Enter")
            await terminal.shows("Deal number")  # the practice form
            await terminal.keys("Enter")  # open the game list
            await terminal.shows("Scorpion              ▲")
            await terminal.keys("Down")
            await terminal.keys("Enter")
            await terminal.shows("Antares    ")  # chosen
            await terminal.keys("Tab")
            await terminal.typing_on("Deal number")
            await terminal.type(str(ANTARES_DEAL))
            await terminal.shows(f"Deal number           {ANTARES_DEAL}")
            await terminal.keys("Enter")
            screen = await terminal.shows(" s1 ", timeout=10)  # the board, after the countdown
            lines = screen.splitlines()
            assert lines[0].split()[:9] == ["Room", lines[0].split()[1], "·", "Antares", "·", "deal", "24", "·", "race"]
            assert lines[1].split()[:8] == ["c1", "c2", "c3", "c4", "hc", "hs", "hh", "hd"]
            assert lines[4].split()[:9] == ["s1", "s2", "s3", "s4", "│", "f1", "f2", "f3", "f4"]
            assert lines[5].split()[:9] == ["2♦", "7♥", "A♥", "7♠", "│", "4♣", "5♥", "Q♣", "5♦"]
            assert "Ann (you)" in screen

            await terminal.type(":")  # to the move line
            await terminal.typing_on("type a move")
            await terminal.type("JD>c1")
            await terminal.keys("Enter")
            screen = await terminal.shows("✓ JD>c1")
            assert screen.splitlines()[2].split()[0] == "J♦"  # now in the first cell
            await terminal.type("QD>s2")
            await terminal.keys("Enter")
            await terminal.shows("✗ QD>s2: on a Scorpion pile, QD needs")

            await terminal.keys("Escape")  # back to the board: its keys are in the footer again
            await terminal.shows("q Leave")
            await terminal.type("q")  # leaving a race resigns: asked twice
            await terminal.shows("press q again to leave")
            await terminal.type("q")
            await terminal.shows("Playing as Ann")
        finally:
            await tmux("kill-server")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


async def test_a_first_visit_help_rules_and_a_race_against_a_bot_to_the_results(tmp_path: Path) -> None:
    """A newcomer's first visit, as the README tells it: start the server, then the client's
    one command that races a bot; read the help and the rules on the way; race to the results."""
    port = free_port()
    log = (tmp_path / "server.log").open("wb")
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "server", "--port", str(port), "--data-dir", str(tmp_path / "data"),
        "--solver-workers", "0", "--countdown", str(COUNTDOWN), cwd=ROOT, stdout=log, stderr=subprocess.STDOUT,
    )  # fmt: skip
    session = "visit"
    try:
        deadline = time.monotonic() + 30
        while b"listening on" not in (tmp_path / "server.log").read_bytes():
            assert server.returncode is None, (tmp_path / "server.log").read_text()
            assert time.monotonic() < deadline, "the server did not start"
            await asyncio.sleep(0.1)
        command = " ".join(
            shlex.quote(part)
            for part in (
                sys.executable, "-m", "client", "--server", f"ws://127.0.0.1:{port}", "--config-dir", str(tmp_path),
                # The easy bot at full speed: it gives up soon after its moves stop helping.
                "play", "--bot", "--level", "easy", "--delay", "0",
            )
        )  # fmt: skip
        await tmux(
            "-u", "new-session", "-d", "-s", session, "-x", "80", "-y", "24", "-c", str(ROOT),
            "-e", "LANG=C.UTF-8", "-e", "TERM=xterm-256color", command,
        )  # fmt: skip
        terminal = Terminal(session)
        await terminal.shows("What name should other racers see?")
        await terminal.type("Ann")
        await terminal.keys("Enter")
        await terminal.shows("Bot (easy)", timeout=15)  # the room, with the bot in it
        await terminal.shows("? all keys · F2 rules")  # the key legend beside the board
        await terminal.type("?")
        await terminal.shows("Your board during a race")
        await terminal.shows("deal the stock (Scorpion)")  # waited for too: tmux can catch a half-painted help
        await terminal.keys("Escape")
        await terminal.shows("? all keys · F2 rules")  # the race screen again, the help closed
        await terminal.keys("F2")
        await terminal.shows("How to play Scorpion")
        await terminal.shows("A worked example: deal 617")
        await terminal.keys("Escape")
        await terminal.shows(" racing", timeout=15)
        await terminal.shows("? all keys · F2 rules")  # the race screen again, the rules closed
        await terminal.type("R")
        await terminal.shows("Press R again to resign")
        await terminal.type("R")
        await terminal.shows("Results of race 1", timeout=60)
        for racer in ("Bot (easy)", "Ann"):  # each waited for: tmux can catch the rows half-painted
            await terminal.shows(racer)
    finally:
        with contextlib.suppress(AssertionError):
            await tmux("kill-server")
        server.send_signal(signal.SIGINT)
        await asyncio.wait_for(server.wait(), 20)
        log.close()
