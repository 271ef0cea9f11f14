"""One hostile address against another's openings, through the shipped balancer (issue 29).

    python -m bench.hostile [--seconds 20] [--baseline 10] [--settle 11] [--connections 600]
                            [--attack all|slow-heads|idle|duplicate-headers|lobby|peer-port|together]
                            [--log-level INFO] [--logs DIR]

The deployment's shape on one machine, as tests/nodes/deployment.py runs it: a private embedded
Redis, three ``python -m server`` nodes (``--trusted-proxies`` the balancer's address, no solver
or hint workers, each on a fixed peer port, each logging at ``--log-level``, INFO by default
as in production, to a file of its own) and the shipped HAProxy config (bench/balancer.py) in
front of them, its access log in a file too.

A legitimate client at 127.0.8.1 opens a fresh websocket through the balancer's TLS port every
100 ms, says hello as a new guest and times connect start -> welcome (an opening that fails or
takes over 10 s counts as failed). The nodes get ``IDENTITIES_PER_ADDRESS`` high, as every bench
that starts many guests does. The first phase (``--baseline`` seconds) has no attack; then each
attack runs for ``--seconds`` from 127.0.9.1, in a process of its own (so its loops do not delay
the legitimate client's), ``--settle`` seconds apart (HAProxy counts an address's connections
over 10 s: an attack right after another would start already refused):

- ``slow-heads``: ``--connections``/2 connections (plain and TLS) each sending a request head one
  byte a second, never finishing it; each reopened once closed.
- ``idle``: up to ``--connections`` bare TCP connections (plain and TLS ports) sending nothing, and
  64 websockets that never say hello; each reopened (at most once a second) once closed.
- ``duplicate-headers``: 8 loops of fresh connections sending a websocket upgrade with two
  ``Origin`` headers, one with two ``Upgrade`` headers, or three pipelined ``GET /healthz``.
- ``lobby``: 4 guests that create public rooms until refused, then ask for the lobby 50 times
  a second each (the server's default request rate).
- ``peer-port``: 32 loops per node straight to its peer port (not through the balancer): random
  bytes, a frame claiming 4 GB, a bad hello frame; 0.1 s between one loop's connections.
- ``together``: all of them at once. ``all`` (the default) runs each in turn, then ``together``.

Printed, a phase a row: openings tried, succeeded, failed, p50/p99/max of the successful ones
(ms), the nodes' log lines a second (all three summed, counted in their files from the phase's
start to the end of its last opening and of the attack), HAProxy's log lines a second (an access
log: a line a request, reported apart), the CPU of the nodes with Redis, of HAProxy and of the
attacker (share of one core). Then each attack's tally (connections, answers, refusals) and
the lines the nodes logged most in each phase (digits folded to ``#``).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import itertools
import multiprocessing
import os
import re
import socket
import ssl
import subprocess
import sys
import tempfile
import time
from collections.abc import Coroutine, Iterator, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from bench.balancer import FRONT, SOURCE, Missing, certificate, environment, haproxy
from bench.nodes import Node, stop_nodes
from bench.spawn import exit_on_sigterm, precise_cpu, raise_nofile_limit
from bench.stats import percentile
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
from server.storage.embedded import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[1]
#: The attacker's address and the legitimate client's (Linux routes all of 127/8 to loopback).
HOSTILE, LEGITIMATE = "127.0.9.1", "127.0.8.1"
ATTACKS = ("slow-heads", "idle", "duplicate-headers", "lobby", "peer-port")
#: Seconds between the legitimate client's openings, and the longest one counted as succeeded.
OPENING_EVERY, OPENING_TIMEOUT = 0.1, 10.0
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
_TIMESTAMP = re.compile(r"^\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d[,.]\d+\s*")


@dataclass(frozen=True)
class Front:
    """Where the attacks and the legitimate client go: the balancer's ports, its certificate,
    and the nodes' peer ports (reached directly)."""

    plain: int
    tls: int
    certificate: Path
    peer_ports: tuple[int, ...]

    def context(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.certificate))
        context.check_hostname = False  # the certificate names localhost; we dial an address
        return context


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


async def peer_garbage(front: Front, port: int, loop: int, tally: Tally) -> None:
    for turn in itertools.takewhile(lambda _: tally.running(), itertools.count(loop)):
        name, payload = list(PEER_PAYLOADS.items())[turn % len(PEER_PAYLOADS)]
        try:
            reader, writer = await open_raw(port, None, host="127.0.0.1")
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
        return [peer_garbage(front, port, k, tally) for port in front.peer_ports for k in range(PEER_LOOPS)]
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


# -- The legitimate client ---------------------------------------------------------------------


@dataclass
class Openings:
    """The legitimate client's openings of one phase."""

    latencies: list[float] = field(default_factory=list)
    failures: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def tried(self) -> int:
        return len(self.latencies) + sum(self.failures.values())


async def open_once(front: Front, n: int, into: Openings) -> None:
    """Connect through the balancer's TLS port, say hello as a new guest, time it to the welcome."""
    started = time.perf_counter()
    websocket: ClientConnection | None = None
    try:
        async with asyncio.timeout(OPENING_TIMEOUT):
            websocket = await open_websocket(front, True, LEGITIMATE)
            reply = await exchange(websocket, Hello(id=1, protocol=PROTOCOL_VERSION, name=f"visitor{n}"))
        if isinstance(reply, Welcome):
            into.latencies.append(time.perf_counter() - started)
        else:
            into.failures[f"hello: {reply.code if isinstance(reply, Error) else type(reply).__name__}"] += 1
    except TimeoutError:
        into.failures[f"over {OPENING_TIMEOUT:g} s"] += 1
    except ConnectionClosed as closed:
        into.failures[f"closed {closed.rcvd.code if closed.rcvd else 'without a close frame'}"] += 1
    except (OSError, InvalidHandshake) as error:
        into.failures[refusal(error)] += 1
    finally:
        if websocket is not None:
            with contextlib.suppress(Exception):
                await websocket.close()


async def open_every(front: Front, seconds: float, first: int) -> Openings:
    """An opening every :data:`OPENING_EVERY` seconds for ``seconds``, each on its own (a slow one
    delays no other); returns once the last has ended."""
    openings = Openings()
    tasks = []
    started = time.monotonic()
    n = 0
    while (due := started + n * OPENING_EVERY) < started + seconds:
        await asyncio.sleep(max(0.0, due - time.monotonic()))
        tasks.append(asyncio.create_task(open_once(front, first + n, openings)))
        n += 1
    await asyncio.gather(*tasks)
    return openings


# -- The service -------------------------------------------------------------------------------


class LogWatch:
    """New lines of some log files since the last look."""

    def __init__(self, paths: Sequence[Path]) -> None:
        self.paths = list(paths)
        self.offsets = [0] * len(self.paths)

    def take(self) -> list[str]:
        lines: list[str] = []
        for k, path in enumerate(self.paths):
            with path.open("rb") as log:
                log.seek(self.offsets[k])
                data = log.read()
            whole = data.rpartition(b"\n")[0]  # a line still being written waits for the next look
            if whole:
                self.offsets[k] += len(whole) + 1
                lines += whole.decode(errors="replace").split("\n")
        return lines


async def http_status(port: int, path: str) -> int:
    """The status of ``GET path`` on a node (0: no answer)."""
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
    except OSError:
        return 0
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        answer = await read_to_end(reader, 5.0)
    finally:
        shut(writer)
    match = _STATUS.match(answer)
    return int(match.group(1)) if match else 0


async def start_nodes(count: int, redis_url: str, logs: Path, log_level: str) -> tuple[list[Node], list[int]]:
    """``count`` nodes behind a balancer at :data:`SOURCE`, each on a fixed peer port; ready."""
    nodes, peer_ports = [], []
    env = {**os.environ, "IDENTITIES_PER_ADDRESS": "1000000000"}
    ports = distinct_free_ports(2 * count)
    for port, peer_port in zip(ports[::2], ports[1::2], strict=True):
        log_path = logs / f"node-{port}.log"
        command = [
            sys.executable, "-m", "server", "--port", str(port), "--peer-port", str(peer_port),
            "--redis-url", redis_url, "--trusted-proxies", SOURCE, "--solver-workers", "0", "--hint-workers", "0",
            "--log-level", log_level,
        ]  # fmt: skip
        with log_path.open("wb") as log:
            process = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=env)
        nodes.append(Node(process, port, log_path))
        peer_ports.append(peer_port)
    for node in nodes:
        deadline = time.monotonic() + 60
        while await http_status(node.port, "/readyz") != 200:
            if node.process.poll() is not None or time.monotonic() > deadline:
                stop_nodes(nodes)
                raise SystemExit(f"node on port {node.port} did not get ready:\n{node.log.read_text()[-3000:]}")
            await asyncio.sleep(0.2)
    for node in nodes:  # one that could not listen would leave its port's answers to another
        if node.process.poll() is not None:
            stop_nodes(nodes)
            raise SystemExit(f"node on port {node.port} exited:\n{node.log.read_text()[-3000:]}")
    return nodes, peer_ports


def distinct_free_ports(count: int) -> list[int]:
    """``count`` different free ports on 127.0.0.1 (each probe held until all are chosen:
    :func:`bench.spawn.free_port` twice in a row may give the same port)."""
    with contextlib.ExitStack() as stack:
        probes = [stack.enter_context(socket.socket()) for _ in range(count)]
        for probe in probes:
            probe.bind(("127.0.0.1", 0))
        return [int(probe.getsockname()[1]) for probe in probes]


async def balancer_serves(front: Front) -> bool:
    """Whether the balancer's TLS port answers /healthz with 200 (some node is up behind it)."""
    try:
        reader, writer = await asyncio.open_connection(FRONT, front.tls, ssl=front.context())
    except OSError:
        return False
    try:
        writer.write(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
        return (await read_to_end(reader, 5.0)).startswith(b"HTTP/1.1 200")
    finally:
        shut(writer)


# -- Phases and the report ---------------------------------------------------------------------


@dataclass
class Phase:
    name: str
    openings: Openings
    seconds: float
    node_lines: list[str]
    haproxy_lines: int
    service_cpu: float
    haproxy_cpu: float
    attacker_cpu: float | None = None
    tally: dict[str, int] | None = None


def cpu_of(pids: Sequence[int]) -> float:
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            total += precise_cpu(pid)
    return total


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


async def run_phase(
    name: str,
    attack: str | None,
    seconds: float,
    args: argparse.Namespace,
    front: Front,
    watches: tuple[LogWatch, LogWatch],
    pids: tuple[Sequence[int], int],
    first: int,
) -> Phase:
    node_watch, haproxy_watch = watches
    service_pids, haproxy_pid = pids
    node_watch.take()
    haproxy_watch.take()
    service_before, haproxy_before = cpu_of(service_pids), cpu_of([haproxy_pid])
    started = time.monotonic()
    legitimate = asyncio.ensure_future(open_every(front, seconds, first))
    if attack is None:
        tally, attacker_cpu = None, None
    else:
        tally, attacker_cpu = await run_attacker(attack, front, seconds, args.connections)
    openings = await legitimate
    elapsed = time.monotonic() - started
    return Phase(
        name, openings, elapsed, node_watch.take(), len(haproxy_watch.take()),
        (cpu_of(service_pids) - service_before) / elapsed, (cpu_of([haproxy_pid]) - haproxy_before) / elapsed,
        None if attacker_cpu is None else attacker_cpu / elapsed, tally,
    )  # fmt: skip


def share(value: float | None) -> str:
    return "-" if value is None or value != value else f"{value * 100:.0f} %"


def report(phases: list[Phase]) -> str:
    header = (
        f"{'phase':<18} {'tried':>5} {'ok':>5} {'failed':>6} {'p50 ms':>8} {'p99 ms':>8} {'max ms':>8}"
        f" {'node lines/s':>12} {'haproxy lines/s':>15} {'nodes+Redis CPU':>15} {'haproxy CPU':>11}"
        f" {'attacker CPU':>12}"
    )
    lines = [header]
    for phase in phases:
        values = sorted(phase.openings.latencies)
        p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
        top = values[-1] if values else float("nan")
        lines.append(
            f"{phase.name:<18} {phase.openings.tried:>5} {len(values):>5} {sum(phase.openings.failures.values()):>6}"
            f" {p50 * 1e3:>8.1f} {p99 * 1e3:>8.1f} {top * 1e3:>8.1f}"
            f" {len(phase.node_lines) / phase.seconds:>12.2f} {phase.haproxy_lines / phase.seconds:>15.2f}"
            f" {share(phase.service_cpu):>15} {share(phase.haproxy_cpu):>11} {share(phase.attacker_cpu):>12}"
        )
    for phase in phases:
        lines.append(f"-- {phase.name} ({phase.seconds:.1f} s)")
        if phase.openings.failures:
            failures = ", ".join(f"{what} x{n}" for what, n in phase.openings.failures.most_common())
            lines.append(f"  legitimate openings failed: {failures}")
        if phase.tally is not None:
            lines.append("  attack: " + "; ".join(f"{what} {n}" for what, n in sorted(phase.tally.items())))
        if phase.node_lines:
            lines.append(f"  node log lines: {len(phase.node_lines)}, most repeated:")
            lines += [f"    {n:>5} x {line}" for line, n in most_repeated(phase.node_lines)]
    return "\n".join(lines)


def most_repeated(lines: list[str], count: int = 6) -> list[tuple[str, int]]:
    """The commonest lines with their timestamps cut and digits folded to ``#`` (an example of each)."""
    examples: dict[str, str] = {}
    counts: collections.Counter[str] = collections.Counter()
    for line in lines:
        text = _TIMESTAMP.sub("", line)
        key = re.sub(r"\d+", "#", text)
        counts[key] += 1
        examples.setdefault(key, text)
    return [(examples[key][:300], n) for key, n in counts.most_common(count)]


async def main_async(args: argparse.Namespace) -> str:
    attacks = [*ATTACKS, "together"] if args.attack == "all" else [args.attack]
    with tempfile.TemporaryDirectory(prefix="bench-hostile-") as scratch:
        logs = args.logs or Path(scratch)
        logs.mkdir(parents=True, exist_ok=True)
        redis = EmbeddedRedis(Path(scratch) / "redis")
        await redis.start()
        nodes: list[Node] = []
        try:
            nodes, peer_ports = await start_nodes(3, redis.url, logs, args.log_level)
            plain, tls = distinct_free_ports(2)
            haproxy_log = logs / "haproxy.log"
            pem = certificate(Path(scratch) / "certs")
            front = Front(plain, tls, pem, tuple(peer_ports))
            with haproxy(environment(plain, tls, pem, [node.port for node in nodes]), haproxy_log) as balancer:
                deadline = time.monotonic() + 20
                while not await balancer_serves(front):
                    if time.monotonic() > deadline:
                        raise SystemExit("the balancer did not serve:\n" + haproxy_log.read_text(errors="replace"))
                    await asyncio.sleep(0.1)
                await asyncio.sleep(2.0)  # every node's health checks passed twice (rise 2, every 0.5 s)
                watches = (LogWatch([node.log for node in nodes]), LogWatch([haproxy_log]))
                service = [node.process.pid for node in nodes] + ([redis.pid] if redis.pid is not None else [])
                pids = (service, balancer.pid)
                phases = [await run_phase("baseline", None, args.baseline, args, front, watches, pids, 0)]
                print(f"baseline: {len(phases[0].openings.latencies)} openings", file=sys.stderr)
                for k, attack in enumerate(attacks, 1):
                    await asyncio.sleep(args.settle)
                    phases.append(
                        await run_phase(attack, attack, args.seconds, args, front, watches, pids, k * 100_000)
                    )
                    print(f"{attack}: {len(phases[-1].openings.latencies)} openings", file=sys.stderr)
        finally:
            stop_nodes(nodes)
            await redis.stop()
    title = (
        f"bench.hostile: attacks from {HOSTILE}, a TLS opening every {OPENING_EVERY * 1e3:.0f} ms from {LEGITIMATE},"
        f" through HAProxy to 3 nodes (log level {args.log_level}); baseline {args.baseline:g} s, each attack"
        f" {args.seconds:g} s, {args.settle:g} s apart; {os.cpu_count()} cores"
    )
    return title + "\n" + report(phases)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="seconds of each attack (default 20)")
    parser.add_argument("--baseline", type=float, default=10.0, help="seconds with no attack first (default 10)")
    parser.add_argument(
        "--settle", type=float, default=11.0, help="seconds between phases, no attack, not measured (default 11)"
    )
    parser.add_argument(
        "--attack", choices=["all", *ATTACKS, "together"], default="all",
        help="one attack, or all in turn and then together (default)",
    )  # fmt: skip
    parser.add_argument(
        "--connections", type=int, default=600,
        help="bare connections the idle attack tries to hold (slow heads: half as many; default 600)",
    )  # fmt: skip
    parser.add_argument("--log-level", default="INFO", help="the nodes' log level (default INFO, production's)")
    parser.add_argument("--logs", type=Path, help="keep the nodes' and HAProxy's logs in this folder")
    args = parser.parse_args(argv)
    exit_on_sigterm()
    raise_nofile_limit()
    try:
        print(asyncio.run(main_async(args)))
    except Missing as missing:
        raise SystemExit(f"bench.hostile needs the balancer: {missing}") from None


if __name__ == "__main__":
    main()
