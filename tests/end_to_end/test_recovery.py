"""The server as a process of its own (``python -m server`` with its embedded Redis):
killed with SIGKILL it loses no acknowledged move; stopped with SIGTERM it says goodbye."""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import socket
import sys
from collections.abc import AsyncIterator
from functools import partial
from pathlib import Path

import pytest
from websockets.asyncio.client import connect

from client.lib.connection import RaceClient
from protocol.messages import (
    Ack,
    AskLegalMoves,
    CreateRoom,
    Goodbye,
    Joined,
    JoinRoom,
    LegalMoves,
    PlayMove,
    Ready,
    Resign,
)
from server.games import Antares, Autoplay, Game, Options
from tests.end_to_end.conftest import COUNTDOWN, RawClient, board_lists, eventually

pytestmark = pytest.mark.asyncio

ROOT = Path(__file__).resolve().parents[2]
#: Starting the process includes starting its Redis: allow for a slow machine.
STARTUP = 30.0


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def launch(port: int, data_dir: Path, log: Path) -> asyncio.subprocess.Process:
    """``python -m server`` on ``port`` with the embedded Redis in ``data_dir`` (counting down
    :data:`~tests.polling.COUNTDOWN`); returns once it accepts connections."""
    env = {key: value for key, value in os.environ.items() if key != "REDIS_URL"}
    with log.open("ab") as out:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "server",
            "--port",
            str(port),
            "--data-dir",
            str(data_dir),
            "--solver-workers",
            "0",
            "--countdown",
            str(COUNTDOWN),
            cwd=ROOT,
            env=env,
            stdout=out,
            stderr=out,
        )
    deadline = asyncio.get_running_loop().time() + STARTUP
    while True:
        if process.returncode is not None:
            raise AssertionError(f"the server exited with {process.returncode}:\n{log.read_text()}")
        try:
            async with connect(f"ws://127.0.0.1:{port}"):
                return process
        except OSError:
            if asyncio.get_running_loop().time() > deadline:
                process.kill()
                raise AssertionError(f"the server did not start:\n{log.read_text()}") from None
            await asyncio.sleep(0.05)


@contextlib.asynccontextmanager
async def reaped(processes: list[asyncio.subprocess.Process]) -> AsyncIterator[None]:
    """Make sure every server process started in the block is gone after it."""
    try:
        yield
    finally:
        for process in processes:
            if process.returncode is None:
                process.kill()
            await process.wait()


#: Moves each racer plays: six before the kill, three after it.
MOVES_EACH = 9


async def play_random(client: RaceClient, code: str, replica: Game, rng: random.Random, left: int) -> str:
    """Play a random legal move; return its canonical text once acknowledged (and mirror it in
    ``replica``). ``left`` counts the moves this racer has still to play, this one included."""
    legal = await client.request(lambda i: AskLegalMoves(id=i, room=code))
    assert isinstance(legal, LegalMoves)
    # A random move after which the racer's other moves can still be played: a random line can
    # run into a dead end (once, in CI, two moves after a one-move look-ahead said it would not),
    # and the whole Antares position is public, so the replica can look down the rest of the line.
    candidates = rng.sample(legal.moves, len(legal.moves))
    choice = next((m for m in candidates if _line_after(replica, m, left - 1)), None)
    assert choice is not None, f"no line of {left} moves from here"
    ack = await client.request(lambda i: PlayMove(id=i, room=code, move=choice))
    assert isinstance(ack, Ack)
    assert ack.move is not None
    replica.apply(replica.parse_move(ack.move))
    return ack.move


def _line_after(replica: Game, move: str, length: int) -> bool:
    """Whether ``length`` more moves can be played after ``move`` (depth first, so it returns at
    the first such line: in practice the first moves it tries)."""
    after = replica.copy(history=False)
    after.apply(after.parse_move(move))
    if length == 0:
        return True
    return any(_line_after(after, after.move_text(m), length - 1) for m in after.legal_moves())


def replica_of(board: list[list[int | None]] | None) -> Game:
    """An Antares game in the position of ``board`` (Antares deals every card face up, so the
    public board is the whole position)."""
    assert board is not None
    piles = [[card for card in pile if card is not None] for pile in board]
    assert piles == board
    return Antares(None, Options(autoplay=Autoplay.SAFE), piles, [0] * len(piles))


async def test_a_killed_server_restarts_with_every_acknowledged_move(tmp_path: Path) -> None:
    port, data, log = free_port(), tmp_path / "data", tmp_path / "server.log"
    url = f"ws://127.0.0.1:{port}"
    processes = [await launch(port, data, log)]
    clients: list[RaceClient] = []
    async with reaped(processes):
        try:
            ann = await RaceClient.connect(url, "Ann", reconnect=False)
            bob = await RaceClient.connect(url, "Bob", reconnect=False)
            clients += [ann, bob]
            created = await ann.request(lambda i: CreateRoom(id=i, variant="antares"))
            assert isinstance(created, Joined)
            code = created.room
            await bob.request(lambda i: JoinRoom(id=i, room=code))
            for racer in (ann, bob):
                await racer.request(lambda i: Ready(id=i, room=code))
            await eventually(
                lambda: all(racer.rooms[code].board(seat) is not None for seat, racer in enumerate((ann, bob))),
                what="the deal",
            )
            replicas = [replica_of(racer.rooms[code].board(seat)) for seat, racer in enumerate((ann, bob))]
            rng = random.Random(20240611)
            played: list[list[str]] = [[], []]
            for _ in range(6):
                for seat, racer in enumerate((ann, bob)):
                    played[seat].append(
                        await play_random(racer, code, replicas[seat], rng, MOVES_EACH - len(played[seat]))
                    )

            processes[0].send_signal(signal.SIGKILL)  # right after the last acknowledgement
            await processes[0].wait()
            await eventually(
                lambda: not any(racer.connected.is_set() for racer in (ann, bob)), what="the connections dropping"
            )
            processes.append(await launch(port, data, log))

            back = [
                await RaceClient.connect(url, racer.name, resume=racer.resume, reconnect=False) for racer in (ann, bob)
            ]
            clients += back
            for seat, racer in enumerate(back):
                assert racer.player == (ann, bob)[seat].player
                mirror = await eventually(partial(racer.rooms.get, code), what="the seat back")
                assert racer.roles[code] == "racer"
                view = mirror.view()
                assert view.state == "racing"
                assert mirror.board(seat) == board_lists(replicas[seat].public_piles())
                assert view.racers[seat].progress.moves == len(played[seat])

            # The race goes on: more moves, acknowledged and on the boards, then the end.
            for _ in range(3):
                for seat, racer in enumerate(back):
                    played[seat].append(
                        await play_random(racer, code, replicas[seat], rng, MOVES_EACH - len(played[seat]))
                    )
            for racer in back:
                await racer.request(lambda i: Resign(id=i, room=code))
            results = await eventually(lambda: back[0].rooms[code].view().results, what="results")
            assert sorted((r.seat, r.moves) for r in results) == [(0, 9), (1, 9)]
            await eventually(
                lambda: all(
                    back[0].rooms[code].board(seat) == board_lists(replicas[seat].public_piles()) for seat in (0, 1)
                ),
                what="both final boards",
            )
        finally:
            for client in clients:
                await client.close()


async def test_sigterm_says_goodbye_and_closes_connections_with_1001(tmp_path: Path) -> None:
    port, log = free_port(), tmp_path / "server.log"
    processes = [await launch(port, tmp_path / "data", log)]
    async with reaped(processes):
        client = await RawClient.open(f"ws://127.0.0.1:{port}")
        await client.hello("Ann")
        created = await client.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(created, Joined)
        processes[0].send_signal(signal.SIGTERM)
        assert await client.closed(timeout=STARTUP) == 1001
        assert await asyncio.wait_for(processes[0].wait(), STARTUP) == 0
        assert any(isinstance(m, Goodbye) for m in client.messages)
    assert "server stopped" in log.read_text()
