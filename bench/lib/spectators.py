"""Lightweight clients for the abuse and fan-out benches: cheaper than a full RaceClient.

- :func:`say_hello`: a websocket connection that has said hello (a player the server knows).
- :class:`Spectator`: a connection watching a room, counting the frames it reads (and,
  if asked, keeping them with their arrival times).
- :class:`StalledSpectator`: a spectator that stops reading its socket once it is in the
  room: a tiny receive buffer, and no recv() ever again, so the server's send buffers are
  all that can grow. Built on websockets' sans-I/O protocol, so no library task reads for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import time
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect
from websockets.client import ClientProtocol
from websockets.exceptions import ConnectionClosed
from websockets.frames import Frame, Opcode
from websockets.http11 import Response
from websockets.uri import parse_uri

from protocol.codec import decode_server, encode
from protocol.messages import PROTOCOL_VERSION, Error, Hello, Joined, Spectate, Welcome

HELLO_ID = 1
SPECTATE_ID = 2


async def say_hello(url: str, name: str, timeout: float = 30.0, source: str | None = None) -> ClientConnection:
    """Open a connection (from loopback address ``source``, if given) and say hello; return it
    once the welcome came."""
    local = None if source is None else (source, 0)
    ws = await connect(url, compression=None, max_size=2**24, open_timeout=timeout, local_addr=local)
    try:
        async with asyncio.timeout(timeout):
            await ws.send(encode(Hello(id=HELLO_ID, protocol=PROTOCOL_VERSION, name=name)))
            while not isinstance(decode_server(await ws.recv(decode=False)), Welcome):
                pass
    except BaseException:
        await ws.close()
        raise
    return ws


@dataclass
class Spectator:
    """One connection that spectates one room, reading every frame; see :meth:`open` and :meth:`join`."""

    ws: ClientConnection
    room: str = ""
    frames: int = 0
    received_bytes: int = 0
    last: float = 0.0  # when the last frame came (monotonic)
    kept: list[tuple[float, bytes]] | None = None  # (arrival, frame) when keeping them
    joined: asyncio.Event = field(default_factory=asyncio.Event)
    refused: str | None = None  # the error that answered the spectate request
    reader: asyncio.Task[None] | None = field(default=None, repr=False)

    @classmethod
    async def open(cls, url: str, name: str, keep: bool = False) -> Spectator:
        """Hello, then read (count, and with ``keep`` keep) every frame; :meth:`spectate` next."""
        spectator = cls(await say_hello(url, name), kept=[] if keep else None)
        spectator.reader = asyncio.create_task(spectator._read())
        return spectator

    @classmethod
    async def listen(cls, url: str) -> Spectator:
        """A bare connection (no hello) that counts what it is sent: for servers that just broadcast."""
        spectator = cls(await connect(url, compression=None, max_size=2**24, open_timeout=30))
        spectator.joined.set()
        spectator.reader = asyncio.create_task(spectator._read())
        return spectator

    @classmethod
    async def join(cls, url: str, name: str, room: str, keep: bool = False) -> Spectator:
        spectator = await cls.open(url, name, keep)
        await spectator.spectate(room)
        return spectator

    async def spectate(self, room: str, timeout: float = 30.0) -> None:
        """Ask to spectate ``room``; return once the server said joined (ConnectionError if refused)."""
        self.room = room
        await self.ws.send(encode(Spectate(id=SPECTATE_ID, room=room)))
        async with asyncio.timeout(timeout):
            await self.joined.wait()
        if self.refused is not None:
            raise ConnectionError(f"spectate refused: {self.refused}")

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for frame in self.ws:
                now = time.monotonic()
                self.frames += 1
                self.received_bytes += len(frame)
                self.last = now
                if self.kept is not None and isinstance(frame, bytes):
                    self.kept.append((now, frame))
                if not self.joined.is_set() and isinstance(frame, bytes):
                    message = decode_server(frame)
                    if isinstance(message, Error) and message.id == SPECTATE_ID:
                        self.refused = f"{message.code}: {message.message}"
                        self.joined.set()
                    elif isinstance(message, Joined):
                        self.joined.set()
        self.joined.set()  # closed: nobody waits for a joined that will not come

    async def close(self) -> None:
        await self.ws.close()
        if self.reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self.reader


async def watch_all(url: str, rooms: list[str], count: int, prefix: str, concurrency: int = 50) -> list[Spectator]:
    """``count`` spectators, spread over ``rooms`` round robin, ``concurrency`` joining at a time."""
    gate = asyncio.Semaphore(concurrency)

    async def one(n: int) -> Spectator:
        async with gate:
            return await Spectator.join(url, f"{prefix}{n}", rooms[n % len(rooms)])

    return list(await asyncio.gather(*(one(n) for n in range(count))))


class StalledSpectator:
    """A spectator that never reads its socket after joining. See :meth:`join` and :meth:`outcome`."""

    def __init__(self, sock: socket.socket, protocol: ClientProtocol) -> None:
        self.sock = sock
        self.protocol = protocol
        #: Bytes :meth:`outcome` read: what the server had sent that was still in the kernel's buffers.
        self.drained = 0

    @classmethod
    async def join(cls, url: str, name: str, rooms: list[str], receive_buffer: int = 4096) -> StalledSpectator:
        """Connect with a ``receive_buffer``-byte socket buffer, hello, spectate each of ``rooms`` (one
        connection may follow several, which multiplies what it is sent); return once all said joined."""
        loop = asyncio.get_running_loop()
        parts = urlsplit(url)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        # Set before connecting, so the window the server sees is small from the start.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, receive_buffer)
        sock.setblocking(False)
        await loop.sock_connect(sock, (parts.hostname or "127.0.0.1", parts.port or 80))
        protocol = ClientProtocol(parse_uri(url), max_size=None)
        protocol.send_request(protocol.connect())
        stalled = cls(sock, protocol)
        joined = 0
        async with asyncio.timeout(30):
            await stalled._flush()
            while True:
                for event in await stalled._receive():
                    if isinstance(event, Response):
                        if protocol.handshake_exc is not None:
                            raise ConnectionError(f"handshake refused: {protocol.handshake_exc}")
                        protocol.send_binary(encode(Hello(id=HELLO_ID, protocol=PROTOCOL_VERSION, name=name)))
                        for k, room in enumerate(rooms):
                            protocol.send_binary(encode(Spectate(id=SPECTATE_ID + k, room=room)))
                        await stalled._flush()
                    elif isinstance(event, Frame) and event.opcode is Opcode.BINARY:
                        message = decode_server(bytes(event.data))
                        if isinstance(message, Error) and message.id is not None:
                            raise ConnectionError(f"refused: {message.code} {message.message}")
                        if isinstance(message, Joined):
                            joined += 1
                            if joined == len(rooms):
                                return stalled  # from here on, nothing is read

    async def _receive(self) -> list[object]:
        data = await asyncio.get_running_loop().sock_recv(self.sock, 65536)
        if not data:
            raise ConnectionError("the server closed the connection while joining")
        self.protocol.receive_data(data)
        return list(self.protocol.events_received())

    async def _flush(self) -> None:
        data = b"".join(self.protocol.data_to_send())
        if data:
            await asyncio.get_running_loop().sock_sendall(self.sock, data)

    async def outcome(self, seconds: float = 5.0) -> str:
        """Read what the server left for us (for up to ``seconds``) and say how the connection ended:
        ``closed <code>`` (a close frame), ``reset``, ``eof`` or ``open`` (still sending or silent)."""
        loop = asyncio.get_running_loop()
        deadline = time.monotonic() + seconds
        try:
            while time.monotonic() < deadline:
                try:
                    async with asyncio.timeout(max(0.01, deadline - time.monotonic())):
                        data = await loop.sock_recv(self.sock, 1 << 20)
                except TimeoutError:
                    return "open"
                if not data:
                    self.protocol.receive_eof()
                    break
                self.drained += len(data)
                self.protocol.receive_data(data)
                self.protocol.events_received()
                self.protocol.data_to_send()  # pongs and close replies: not needed any more
                if self.protocol.close_rcvd is not None:
                    return f"closed {self.protocol.close_rcvd.code}"
        except ConnectionResetError:
            return "reset"
        if self.protocol.close_rcvd is not None:
            return f"closed {self.protocol.close_rcvd.code}"
        return "eof" if time.monotonic() < deadline else "open"

    def close(self) -> None:
        self.sock.close()
