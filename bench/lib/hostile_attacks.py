"""The attacks of :mod:`bench.hostile`, each a set of loops run from :data:`HOSTILE` in a
process of its own (so that its loops do not delay the legitimate client's), with the tally
of what it did and was answered.

- ``slow-heads``: ``connections``/2 connections (plain and TLS) each sending a request head one
  byte a second, never finishing it; each reopened once closed.
- ``idle``: up to ``connections`` bare TCP connections (plain and TLS ports) sending nothing, and
  64 websockets that never say hello; each reopened (at most once a second) once closed.
- ``duplicate-headers``: 8 loops of fresh connections sending a websocket upgrade with two
  ``Origin`` headers, one with two ``Upgrade`` headers, or three pipelined ``GET /healthz``.
- ``lobby``: 4 guests that create public rooms until refused, then ask for the lobby 50 times
  a second each (the server's default request rate).
- ``peer-port``: 32 loops per node straight to its peer port (not through the balancer): random
  bytes, a frame claiming 4 GB, a bad hello frame; 0.1 s between one loop's connections.
- ``together``: all of them at once.

Also the websocket opening and the request/reply exchange the legitimate client uses too.
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import itertools
import multiprocessing
import os
import re
import ssl
import time
from collections.abc import Coroutine, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from bench.lib.balancer import FRONT
from bench.lib.deployment import client_context
from bench.lib.spawn import raise_nofile_limit
from protocol.codec import decode_server, encode
from protocol.messages import (
    PROTOCOL_VERSION,
    ClientMessage,
    CreateRoom,
    Error,
    Hello,
    Joined,
    ListRooms,
    Lobby,
    RoomOptions,
    ServerMessage,
    Welcome,
)

#: The attacker's address (Linux routes all of 127/8 to loopback).
HOSTILE = "127.0.9.1"
ATTACKS = ("slow-heads", "idle", "duplicate-headers", "lobby", "peer-port")
#: The longest wait for a websocket's opening or a reply (the legitimate client's too).
OPENING_TIMEOUT = 10.0
#: Websockets that never say hello (idle), duplicate-header loops, lobby guests, loops per peer port.
SILENT_WEBSOCKETS, HEADER_LOOPS, LOBBY_GUESTS, PEER_LOOPS = 64, 8, 4, 32
#: Lobby requests a second per guest: the server's default ``--rate``.
LOBBY_RATE = 50.0
#: A request head that never ends (no blank line), sent a byte a second.
SLOW_HEAD = b"GET / HTTP/1.1\r\nHost: localhost\r\nUser-Agent: " + b"s" * 4000
_UPGRADE = (
    b"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
    b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)
BAD_REQUESTS = {
    "two Origin": _UPGRADE + b"Origin: https://localhost\r\nOrigin: https://elsewhere.example\r\n\r\n",
    "two Upgrade": _UPGRADE + b"Upgrade: websocket\r\n\r\n",
    "pipelined": b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n" * 3,
}
PEER_PAYLOADS = {
    "garbage": os.urandom(4096),
    "4 GB frame": b"\xff\xff\xff\xff" + os.urandom(65536),
    "bad hello": b"\x00\x00\x01\x00" + os.urandom(256),
}
_STATUS = re.compile(rb"HTTP/1\.[01] (\d{3})")
Loop = Coroutine[Any, Any, None]


@dataclass(frozen=True)
class Front:
    """Where the attacks and the legitimate client go: the balancer's ports, its certificate,
    and the nodes' peer ports with their addresses (reached directly). Plain data: it is sent
    to the attacker's process."""

    plain: int
    tls: int
    certificate: Path
    peers: tuple[tuple[str, int], ...]

    def context(self) -> ssl.SSLContext:
        return client_context(self.certificate)


@dataclass
class Tally:
    """What an attack did and was answered, and how many connections it held at most at once."""

    #: When the attack ends (monotonic): every loop stops starting anything then, even one whose
    #: cancellation was lost.
    until: float
    counts: collections.Counter[str] = field(default_factory=collections.Counter)
    held: int = 0
    peak: int = 0

    def running(self) -> bool:
        return time.monotonic() < self.until

    def add(self, what: str, n: int = 1) -> None:
        self.counts[what] += n

    @contextlib.contextmanager
    def holding(self) -> Iterator[None]:
        self.held += 1
        self.peak = max(self.peak, self.held)
        try:
            yield
        finally:
            self.held -= 1


def status_of(answer: bytes) -> str:
    """The HTTP statuses in ``answer`` (``"400"``, ``"200 200 200"``), or what came instead."""
    statuses = [code.decode() for code in _STATUS.findall(answer)]
    if statuses:
        return " ".join(statuses)
    return "closed, no answer" if not answer else "not HTTP"


async def open_raw(
    port: int, tls: ssl.SSLContext | None, host: str = FRONT
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    # asyncio.timeout, not wait_for: Python 3.11's wait_for loses a cancellation that comes as
    # the connection opens (and this loop would then outlive its attack).
    async with asyncio.timeout(5.0):
        return await asyncio.open_connection(host, port, ssl=tls, local_addr=(HOSTILE, 0))


def shut(writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(OSError, RuntimeError):
        writer.close()


async def read_to_end(reader: asyncio.StreamReader, seconds: float, statuses: int = 0) -> bytes:
    """What comes until the peer closes, ``seconds`` pass or (if given) ``statuses`` HTTP
    status lines have come."""
    data = bytearray()
    with contextlib.suppress(TimeoutError, OSError):
        async with asyncio.timeout(seconds):
            while chunk := await reader.read(65536):
                data += chunk
                if statuses and len(_STATUS.findall(data)) >= statuses:
                    break
    return bytes(data)


def failed(error: Exception) -> str:
    return f"connect failed ({type(error).__name__})"


async def slow_head(front: Front, tls: bool, tally: Tally) -> None:
    context = front.context() if tls else None
    while tally.running():
        try:
            reader, writer = await open_raw(front.tls if tls else front.plain, context)
        except (OSError, TimeoutError) as error:
            tally.add(failed(error))
            await asyncio.sleep(1.0)
            continue
        tally.add("connections")
        opened = time.monotonic()
        answer = asyncio.ensure_future(reader.read(4096))
        try:
            with tally.holding():
                for i in range(len(SLOW_HEAD)):
                    writer.write(SLOW_HEAD[i : i + 1])
                    await asyncio.wait([answer], timeout=1.0)
                    if answer.done():
                        break
            data = b"" if answer.exception() is not None else answer.result()
            held = time.monotonic() - opened
            tally.add(f"answer {status_of(data)} after {'<1' if held < 1 else f'{held:.0f}'} s")
        finally:
            answer.cancel()
            shut(writer)
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - opened)))


async def idle_socket(front: Front, port: int, tally: Tally) -> None:
    """A bare TCP connection (no TLS handshake even on the TLS port) that sends nothing."""
    while tally.running():
        opened = time.monotonic()
        try:
            reader, writer = await open_raw(port, None)
        except (OSError, TimeoutError) as error:
            tally.add(f"bare: {failed(error)}")
            await asyncio.sleep(1.0)
            continue
        tally.add("bare: connections")
        try:
            with tally.holding():
                data = await read_to_end(reader, 3600)
            held = time.monotonic() - opened
            tally.add(f"bare: closed ({status_of(data)}) after {'<1' if held < 1 else f'{held:.0f}'} s")
        finally:
            shut(writer)
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - opened)))


async def open_websocket(front: Front, tls: bool, address: str) -> ClientConnection:
    if tls:
        return await connect(
            f"wss://{FRONT}:{front.tls}", ssl=front.context(), local_addr=(address, 0), compression=None,
            open_timeout=OPENING_TIMEOUT, close_timeout=1, max_size=2**22,
        )  # fmt: skip
    return await connect(
        f"ws://{FRONT}:{front.plain}", local_addr=(address, 0), compression=None, open_timeout=OPENING_TIMEOUT,
        close_timeout=1, max_size=2**22,
    )  # fmt: skip


def refusal(error: Exception) -> str:
    if isinstance(error, InvalidStatus):
        return f"refused {error.response.status_code}"
    return f"refused ({type(error).__name__})"


async def silent_websocket(front: Front, tls: bool, tally: Tally) -> None:
    """A websocket that never says hello."""
    while tally.running():
        opened = time.monotonic()
        try:
            websocket = await open_websocket(front, tls, HOSTILE)
        except (OSError, TimeoutError, InvalidHandshake) as error:
            tally.add(f"no hello: {refusal(error)}")
            await asyncio.sleep(1.0)
            continue
        tally.add("no hello: opened")
        try:
            with tally.holding():
                await websocket.wait_closed()
            held = time.monotonic() - opened
            tally.add(f"no hello: closed {websocket.close_code} after {held:.0f} s")
        finally:
            await websocket.close()
        await asyncio.sleep(max(0.0, 1.0 - (time.monotonic() - opened)))


async def bad_headers(front: Front, loop: int, tally: Tally) -> None:
    context = front.context()
    for turn in itertools.takewhile(lambda _: tally.running(), itertools.count(loop)):
        name, request = list(BAD_REQUESTS.items())[turn % len(BAD_REQUESTS)]
        tls = turn // len(BAD_REQUESTS) % 2 == 1
        try:
            reader, writer = await open_raw(front.tls if tls else front.plain, context if tls else None)
        except (OSError, TimeoutError) as error:
            tally.add(failed(error))
            await asyncio.sleep(0.2)
            continue
        started = time.monotonic()
        try:
            writer.write(request)
            answer = await read_to_end(reader, 3.0, statuses=request.count(b" HTTP/1.1\r\n"))
        finally:
            shut(writer)
        tally.add(f"{name}: {status_of(answer)}")
        if not answer:
            await asyncio.sleep(max(0.0, 0.2 - (time.monotonic() - started)))


async def exchange(websocket: ClientConnection, message: ClientMessage) -> ServerMessage:
    """Send ``message`` and return the reply naming its id (events in between are skipped)."""
    await websocket.send(encode(message))
    async with asyncio.timeout(OPENING_TIMEOUT):
        while True:
            frame = await websocket.recv()
            reply = decode_server(frame) if isinstance(frame, bytes) else None
            if reply is not None and getattr(reply, "id", None) == message.id:
                return reply


async def count_lobby_replies(websocket: ClientConnection, tally: Tally) -> None:
    with contextlib.suppress(ConnectionClosed):
        async for frame in websocket:
            reply = decode_server(frame) if isinstance(frame, bytes) else None
            if isinstance(reply, Lobby):
                tally.add("lobby pages")
            elif isinstance(reply, Error):
                tally.add(f"lobby refused: {reply.code}")


async def lobby_guest(front: Front, guest: int, tally: Tally) -> None:
    """Create public rooms until refused, then ask for the lobby as fast as the rate limit allows."""
    for attempt in itertools.takewhile(lambda _: tally.running(), itertools.count()):
        try:
            websocket = await open_websocket(front, True, HOSTILE)
        except (OSError, TimeoutError, InvalidHandshake) as error:
            tally.add(refusal(error))
            await asyncio.sleep(1.0)
            continue
        counting: asyncio.Task[None] | None = None
        try:
            hello = await exchange(websocket, Hello(id=1, protocol=PROTOCOL_VERSION, name=f"lobby{guest}x{attempt}"))
            if not isinstance(hello, Welcome):
                tally.add(f"hello: {hello.code if isinstance(hello, Error) else type(hello).__name__}")
                await asyncio.sleep(1.0)
                continue
            request = 2
            while tally.running():
                options = RoomOptions(public=True)
                made = await exchange(websocket, CreateRoom(id=request, variant="antares", options=options))
                request += 1
                if not isinstance(made, Joined):
                    tally.add(f"create refused: {made.code if isinstance(made, Error) else type(made).__name__}")
                    break
                tally.add("public rooms created")
            counting = asyncio.create_task(count_lobby_replies(websocket, tally))
            next_at = time.monotonic()
            while not counting.done() and tally.running():
                await websocket.send(encode(ListRooms(id=request)))
                request += 1
                tally.add("lobby asks")
                next_at += 1.0 / LOBBY_RATE
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            if counting.done():
                tally.add(f"closed {websocket.close_code}")
        except (ConnectionClosed, OSError, TimeoutError) as error:
            tally.add(f"closed {websocket.close_code} ({type(error).__name__})")
        finally:
            if counting is not None:
                counting.cancel()
            await websocket.close()
        await asyncio.sleep(1.0)


async def peer_garbage(front: Front, host: str, port: int, loop: int, tally: Tally) -> None:
    for turn in itertools.takewhile(lambda _: tally.running(), itertools.count(loop)):
        name, payload = list(PEER_PAYLOADS.items())[turn % len(PEER_PAYLOADS)]
        try:
            reader, writer = await open_raw(port, None, host=host)
        except (OSError, TimeoutError) as error:
            tally.add(failed(error))
            await asyncio.sleep(0.1)
            continue
        opened = time.monotonic()
        try:
            with tally.holding():
                writer.write(payload)
                with contextlib.suppress(OSError):
                    await writer.drain()
                answer = await read_to_end(reader, 10.0)
            held = time.monotonic() - opened
            tally.add(f"{name}: closed after {'<1' if held < 1 else f'{held:.0f}'} s ({len(answer)} bytes read)")
        finally:
            shut(writer)
        await asyncio.sleep(0.1)


def attack_loops(attack: str, front: Front, connections: int, tally: Tally) -> list[Loop]:
    """The coroutines of one attack (``together``: of every attack)."""
    if attack == "together":
        # The loops that hold a connection long first: HAProxy refuses an address past 300 new
        # connections in 10 s, and the churning loops would otherwise leave them none.
        first = ("lobby", "idle", "slow-heads", "duplicate-headers", "peer-port")
        return [loop for each in first for loop in attack_loops(each, front, connections, tally)]
    if attack == "slow-heads":
        return [slow_head(front, k % 2 == 1, tally) for k in range(max(2, connections // 2))]
    if attack == "idle":
        # The websockets first, for the same reason.
        return [silent_websocket(front, k % 2 == 1, tally) for k in range(SILENT_WEBSOCKETS)] + [
            idle_socket(front, front.tls if k % 2 else front.plain, tally) for k in range(connections)
        ]
    if attack == "duplicate-headers":
        return [bad_headers(front, k, tally) for k in range(HEADER_LOOPS)]
    if attack == "lobby":
        return [lobby_guest(front, k, tally) for k in range(LOBBY_GUESTS)]
    if attack == "peer-port":
        return [peer_garbage(front, host, port, k, tally) for host, port in front.peers for k in range(PEER_LOOPS)]
    raise ValueError(f"no attack {attack!r}")


async def guarded(loop: Loop, tally: Tally) -> None:
    """Run one loop of an attack; a loop that breaks is counted, not raised (the others go on)."""
    try:
        await loop
    except Exception as error:  # an attack's bug must not end the others
        tally.add(f"loop crashed: {type(error).__name__}: {error}")


async def attack_for(attack: str, front: Front, seconds: float, connections: int) -> Tally:
    tally = Tally(time.monotonic() + seconds)
    tasks = [asyncio.ensure_future(guarded(loop, tally)) for loop in attack_loops(attack, front, connections, tally)]
    await asyncio.sleep(seconds)
    if tally.peak:
        tally.add("held at most at once", tally.peak)
    for task in tasks:
        task.cancel()
    _, left = await asyncio.wait(tasks, timeout=15.0)
    if left:
        tally.add("loops still running 15 s after the end", len(left))
    return tally


def attacker(attack: str, front: Front, seconds: float, connections: int, results: Connection) -> None:
    """The attacker process: runs ``attack`` for ``seconds``, sends back its tally and CPU seconds."""
    raise_nofile_limit()
    tally = asyncio.run(attack_for(attack, front, seconds, connections))
    results.send((dict(tally.counts), time.process_time()))
    results.close()


async def run_attacker(attack: str, front: Front, seconds: float, connections: int) -> tuple[dict[str, int], float]:
    """``attack`` in a process of its own for ``seconds``; its tally and CPU seconds."""
    context = multiprocessing.get_context("spawn")
    receiving, sending = context.Pipe(duplex=False)
    process = context.Process(target=attacker, args=(attack, front, seconds, connections, sending), daemon=True)
    process.start()
    sending.close()
    try:
        await asyncio.to_thread(process.join, seconds + 60)
        if receiving.poll():
            counts, cpu = receiving.recv()
            return dict(counts), float(cpu)
        return {f"attacker ended without a tally (exit code {process.exitcode})": 1}, float("nan")
    finally:
        if process.is_alive():
            process.kill()
            process.join()
        receiving.close()
