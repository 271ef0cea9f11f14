"""A mutation fuzzer against a real server process (``python -m server``) over real
websockets: valid frames of every request type, broken (bytes flipped, inserted, deleted,
cut, spliced, nesting bombs, huge lengths, fields of the wrong type, non-ASCII resume
tokens) and sent over many connections. Every frame gets an answer (an error or a normal
reply), never ``internal-error``; no connection is closed with 1011; the server's log
holds no traceback and only a few lines about bad frames, at DEBUG.

The accounts' requests are fuzzed too: each worker may log in to an account of its own, no
fuzzed frame knows the current password a password change needs (so none closes another
connection), a connection whose frame reads as a ``logout`` stops there and must be closed
with 4001, and the server refuses logins from the address after 4 failures (each failure
holds its connection 1 s).

The default run sends about 3,000 frames in a few seconds. ``FUZZ_FRAMES=100000`` (and
``FUZZ_SEED``) runs a larger one; the summary line is printed (``pytest -s``).

Also here, on an in-process server: a too-deep frame is a ``bad-frame`` and the connection
stays open; a non-ASCII resume token is an ``invalid-token``.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
from websockets.exceptions import ConnectionClosed

from protocol.codec import MalformedFrame, decode_client, encode
from protocol.messages import (
    PROTOCOL_VERSION,
    AskDaily,
    AskHint,
    AskLeaderboard,
    AskLegalMoves,
    AskRaceLog,
    AskReplay,
    AskSnapshot,
    AskStats,
    ChangePassword,
    ClientMessage,
    CreateRoom,
    Error,
    Goodbye,
    Hello,
    Joined,
    JoinRoom,
    Leave,
    LeaveQueue,
    LegalMoves,
    ListRooms,
    Lobby,
    Login,
    Logout,
    PlayMove,
    QuickMatch,
    Ready,
    Register,
    Rematch,
    Resign,
    RoomOptions,
    ServerMessage,
    Snapshot,
    Spectate,
    Start,
    StartDaily,
    Undo,
    Update,
    Welcome,
)
from tests.end_to_end.conftest import COUNTDOWN, PATIENCE, RawClient, RunningServer, eventually
from tests.end_to_end.test_recovery import STARTUP, free_port, launch, reaped

pytestmark = pytest.mark.asyncio

FRAMES = int(os.environ.get("FUZZ_FRAMES", "3000"))
SEED = int(os.environ.get("FUZZ_SEED", "20261201"))
#: Connections fuzzing at once, and frames each sends before the next one takes over
#: (within the burst of the rate limit and below the offence limit, so neither answers).
WORKERS = 4
PER_CONNECTION = 80
SENTINEL = 2**53 - 1
PRACTICE = RoomOptions(max_racers=1)


#: The password of the accounts the fuzzing connections may log in to (one per worker, so a
#: logout everywhere ends no other worker's connection). No fuzzed frame knows it as the
#: current password of ``change_password``, so no password change closes other connections.
PASSWORD = "fuzz password 1"


def account_name(worker: int) -> str:
    return f"Fuzz Account {worker}"


def templates(room: str, move: str, token: str, worker: int = 0) -> list[ClientMessage]:
    """A valid request of every type, naming ``room``, resuming with ``token``, logging in to
    ``worker``'s account."""
    return [
        Hello(id=1, protocol=PROTOCOL_VERSION, name="Fuzz", resume=token),
        CreateRoom(id=2, variant="antares", options=RoomOptions(max_racers=1, time_limit=600, deal="617")),
        JoinRoom(id=3, room=room),
        Spectate(id=4, room=room),
        Leave(id=5, room=room),
        ListRooms(id=6),
        Ready(id=7, room=room, ready=False),
        Start(id=8, room=room),
        PlayMove(id=9, room=room, move=move),
        Undo(id=10, room=room),
        AskHint(id=11, room=room),
        AskLegalMoves(id=12, room=room),
        Resign(id=13, room=room),
        Rematch(id=14, room=room),
        AskSnapshot(id=15, room=room),
        AskRaceLog(id=16, room=room),
        AskReplay(id=17, room=room, seat=0),
        QuickMatch(id=18, variant="scorpion"),
        LeaveQueue(id=19, variant="scorpion"),
        AskDaily(id=20, variant="antares"),
        StartDaily(id=21, variant="antares"),
        AskLeaderboard(id=22, variant="scorpion", board="wins", limit=5, around=True),
        AskStats(id=23, variant="antares", player="0123456789abcdef"),
        Register(id=24, name="Fuzz New", password="fuzz password 2"),
        Login(id=25, name=account_name(worker), password=PASSWORD),
        ChangePassword(id=26, password="not the password", new_password="fuzz password 3"),
        Logout(id=27, everywhere=False),
    ]


def is_logout(frame: bytes) -> bool:
    """Whether the server reads ``frame`` as a ``logout`` (its answer closes the connection)."""
    try:
        return isinstance(decode_client(frame), Logout)
    except MalformedFrame:
        return False


#: Headers claiming far more than any frame holds: str32, bin32, array32, map32, ext32.
HUGE = [b"\xdb\xff\xff\xff\xff", b"\xc6\xff\xff\xff\xff", b"\xdd\xff\xff\xff\xff", b"\xdf\xff\xff\xff\xff"]
HUGE.append(b"\xc9\xff\xff\xff\xff\x01")
ODD_VALUES: list[Any] = [None, True, -1, 2**64 - 1, 1.5, float("nan"), "", "\u0661\u0662", b"\x00", [], {}, [[[]]]]


def nonascii_token(token: str, rng: random.Random) -> str:
    """``token`` with a character replaced by a non-ASCII letter or digit."""
    at = rng.randrange(len(token))
    return token[:at] + rng.choice("\u0661\u0967\uff11\u00e9\u0416\u4e00") + token[at + 1 :]


def retyped(message: ClientMessage, rng: random.Random, token: str) -> bytes:
    """``message`` as a map with one field dropped, added or given a value of another type."""
    fields: dict[str, Any] = msgspec.to_builtins(message)
    name = rng.choice(sorted(fields))
    action = rng.randrange(4)
    if action == 0:
        del fields[name]
    elif action == 1:
        fields[rng.choice(["extra", "type2", "\u00e9"])] = rng.choice(ODD_VALUES)
    elif action == 2 and isinstance(message, Hello):
        fields["resume"] = nonascii_token(token, rng)
    else:
        fields[name] = rng.choice(ODD_VALUES)
    return msgspec.msgpack.encode(fields)


def mutated(frames: list[bytes], rng: random.Random) -> bytes:
    """A frame of ``frames`` broken by one to three byte-level mutations."""
    frame = bytearray(rng.choice(frames))
    for _ in range(rng.randint(1, 3)):
        at = rng.randint(0, len(frame))
        action = rng.randrange(8)
        if action == 0 and frame:
            frame[min(at, len(frame) - 1)] ^= 1 << rng.randrange(8)
        elif action == 1:
            frame[at:at] = rng.randbytes(rng.randint(1, 8))
        elif action == 2:
            del frame[at : at + rng.randint(1, 8)]
        elif action == 3:
            del frame[at:]
        elif action == 4:
            other = rng.choice(frames)
            frame[at:] = other[rng.randint(0, len(other)) :]
        elif action == 5:
            level = rng.choice([b"\x91", b"\x81\xa1a", b"\xdc\x00\x01", b"\xde\x00\x01\xa0"])
            frame[at:at] = level * rng.choice([2, 9, 100, 1000, 3000])
        elif action == 6:
            frame[at:at] = rng.choice(HUGE)
        elif frame:
            frame[min(at, len(frame) - 1)] = rng.randrange(256)
    return bytes(frame)


@dataclass
class Tally:
    frames: int = 0
    by_worker: dict[int, int] = field(default_factory=dict)
    connections: int = 0
    internal_errors: int = 0
    unanswered: int = 0
    closes: dict[int | None, int] = field(default_factory=dict)
    logouts: int = 0
    error_codes: dict[str, int] = field(default_factory=dict)
    replies: int = 0

    def frames_by(self, worker: int) -> int:
        return self.by_worker.get(worker, 0)


def is_direct_answer(message: ServerMessage | None) -> bool:
    """A message that answers a request (not an update, goodbye, or unasked snapshot)."""
    if message is None or isinstance(message, Update | Goodbye):
        return False
    return not (isinstance(message, Snapshot) and message.id is None)


async def fuzz_connection(
    url: str, rng: random.Random, racer: tuple[str, str, str] | None, tally: Tally, worker: int
) -> None:
    """One connection: a few broken hellos, a hello, a room, then PER_CONNECTION broken
    frames and a sentinel request, counting the answers. ``racer`` is the (token, room,
    move) of the player racing a practice race: the connection says hello as that player."""
    client = await RawClient.open(url)
    tally.connections += 1
    sent = 0
    token, room, move = racer or ("0" * 16 + "." + "0" * 32, "ZZZZ", "1C>c")
    base = [encode(m) for m in templates(room, move, token, worker)]
    try:
        for _ in range(3):  # before any hello: broken hellos reach the token check
            await client.send_raw(retyped(templates(room, move, token)[0], rng, token))
            sent += 1
        hello = Hello(id=100, protocol=PROTOCOL_VERSION, name=f"Fuzz {rng.randrange(10**6)}")
        reply = await client.request(lambda i: msgspec.structs.replace(hello, id=i, resume=token if racer else None))
        sent += 1
        if racer is None:
            created = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=PRACTICE))
            sent += 1
            if isinstance(created, Joined):
                room = created.room
        elif isinstance(reply, Welcome):
            legal = await client.request(lambda i: AskLegalMoves(id=i, room=room))
            sent += 1
            if isinstance(legal, LegalMoves) and legal.moves:
                move = rng.choice(legal.moves)
        requests = templates(room, move, token, worker)
        if racer is not None:  # keep the race (and its player) going: no leave, resign, account or logout
            requests = [m for m in requests if not isinstance(m, Leave | Resign | Register | Logout)]
        base = [encode(m) for m in requests]
        for _ in range(PER_CONNECTION):
            choice = rng.randrange(10)
            if choice < 6:
                frame = mutated(base, rng)
            elif choice < 9:
                frame = retyped(rng.choice(requests), rng, token)
            else:
                frame = rng.choice(base)
            await client.send_raw(frame)
            sent += 1
            if is_logout(frame):  # answered by an ack, then the server closes (4001)
                tally.logouts += 1
                await asyncio.wait_for(client.socket.wait_closed(), PATIENCE)
                return
        await client.send_raw(encode(ListRooms(id=SENTINEL)))
        sent += 1
        # The sentinel's answer says every frame before it was read; stop waiting if the
        # server closes the connection instead.
        answer = asyncio.ensure_future(client.reply(SENTINEL))
        closed = asyncio.ensure_future(client.socket.wait_closed())
        await asyncio.wait({answer, closed}, timeout=PATIENCE, return_when=asyncio.FIRST_COMPLETED)
        for waiting in (answer, closed):
            waiting.cancel()
    except (ConnectionClosed, TimeoutError):
        pass
    finally:
        tally.frames += sent
        tally.by_worker[worker] = tally.frames_by(worker) + sent
        code = client.socket.close_code
        tally.closes[code] = tally.closes.get(code, 0) + 1
        answers = [m for m in client.messages if is_direct_answer(m)]
        tally.replies += len(answers)
        tally.unanswered += max(0, sent - len(answers))
        for message in answers:
            if isinstance(message, Error):
                tally.error_codes[message.code] = tally.error_codes.get(message.code, 0) + 1
                tally.internal_errors += message.code == "internal-error"
        await client.close()


async def register(url: str, name: str) -> None:
    client = await RawClient.open(url)
    await client.hello(name)
    assert not isinstance(await client.request(lambda i: Register(id=i, name=name, password=PASSWORD)), Error)
    await client.close()


async def practice_race(url: str) -> tuple[RawClient, str, str]:
    """A player racing a practice race: its client, resume token and room code."""
    client = await RawClient.open(url)
    welcome = await client.hello("Racer")
    created = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=PRACTICE))
    assert isinstance(created, Joined)
    await client.request(lambda i: Ready(id=i, room=created.room))
    return client, welcome.resume, created.room


async def test_mutated_frames_of_every_request_type_never_crash_the_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOG_LEVEL", "DEBUG")  # even at DEBUG, bad frames write few lines
    port, log = free_port(), tmp_path / "server.log"
    url = f"ws://127.0.0.1:{port}"
    # Each failed login holds its connection 1 s: few failures before every login from the
    # address is refused at once, so the run takes about as long as without accounts.
    monkeypatch.setenv("ADDRESS_ATTEMPTS", "4")
    processes = [await launch(port, tmp_path / "data", log)]
    tally = Tally()
    started = time.monotonic()
    async with reaped(processes):
        racer, token, room = await practice_race(url)
        for number in range(WORKERS):
            await register(url, account_name(number))
        countdown_ends = time.monotonic() + COUNTDOWN + 0.5

        async def worker(number: int) -> None:
            rng = random.Random(SEED * 100 + number)
            # Half the workers act as the racer, once the practice race has started.
            as_racer = number % 2 == 1
            if as_racer:
                await asyncio.sleep(max(0.0, countdown_ends - time.monotonic()))
            quota = tally.frames_by(number) + FRAMES // WORKERS
            while tally.frames_by(number) < quota:
                await fuzz_connection(url, rng, (token, room, "1C>c") if as_racer else None, tally, number)

        await asyncio.gather(*(worker(n) for n in range(WORKERS)))
        await racer.close()
        processes[0].send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(processes[0].wait(), STARTUP) == 0
    elapsed = time.monotonic() - started
    text = log.read_text(errors="replace")
    bad_frame_lines = re.findall(r"DEBUG +[\w.]+: bad.frame from", text)
    print(
        f"\nfuzz: {tally.frames} frames over {tally.connections} connections in {elapsed:.1f} s (seed {SEED}); "
        f"{tally.replies} answers, {tally.unanswered} unanswered, {tally.internal_errors} internal-error, "
        f"closes {tally.closes}, {tally.logouts} logouts; "
        f"log: {text.count('Traceback')} tracebacks, {len(text.splitlines())} lines "
        f"{dict(Counter(re.findall(r'^[-0-9]+ [:,0-9]+ ([A-Z]+) ', text, re.MULTILINE)))} "
        f"({len(bad_frame_lines)} about bad frames), {len(text)} bytes; "
        f"errors {dict(sorted(tally.error_codes.items()))}"
    )
    assert tally.frames >= FRAMES - WORKERS
    assert tally.internal_errors == 0
    assert tally.closes.get(1011, 0) == 0
    # Every connection open until the client closed it, or until its own logout (4001).
    assert set(tally.closes) <= {None, 4001}, tally.closes
    assert tally.closes.get(4001, 0) == tally.logouts, tally.closes
    assert tally.unanswered == 0
    assert "Traceback" not in text, text[max(0, text.find("Traceback") - 300) :][:4000]
    # One line per kind of bad frame per 10 s (and a few a second over all kinds).
    assert len(bad_frame_lines) <= 5 + elapsed


# -- on an in-process server -------------------------------------------------------------


async def test_a_frame_nested_too_deep_is_a_bad_frame_and_the_connection_stays_open(server: RunningServer) -> None:
    client = await server.raw("Ann")
    for bomb in (b"\x91" * 5000 + b"\xc0", b"\x83\xa4type\xa4undo\xa2id\x05\xa4room" + b"\x81\xa1k" * 3000 + b"\xc0"):
        await client.send_raw(bomb)
        error = await client.error(None)
        assert error.code == "bad-frame"
        assert "nest" in error.message
    assert isinstance(await client.request(lambda i: ListRooms(id=i)), Lobby)
    assert client.is_open


@pytest.mark.parametrize("token", ["\u0661\u0662\u0663.abc", "abcdef.\u0661\u0662", "\u00e9t\u00e9.x"])
async def test_a_non_ascii_resume_token_is_an_invalid_token(server: RunningServer, token: str) -> None:
    client = await server.raw()
    reply = await client.request(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION, name="Ann", resume=token))
    assert isinstance(reply, Error)
    assert reply.code == "invalid-token"
    await client.hello("Ann")  # the connection goes on
    await eventually(lambda: client.is_open, what="the connection open")
