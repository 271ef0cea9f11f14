"""The client library: one connection to a race server, with rooms mirrored locally.

It knows no rules. It sends requests (each with a fresh id) and returns the reply
that names that id; it keeps a :class:`RoomMirror` of every room it follows,
applying updates in order and asking for a snapshot when it sees a gap; and it
reconnects by itself (with backoff, presenting its resume token) when the
connection drops. The terminal UI, the load-generating bots and the tests all
build on it.

    async with await RaceClient.connect("ws://127.0.0.1:8765", "Ann") as client:
        joined = await client.request(lambda i: CreateRoom(id=i, variant="scorpion"))
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import random
from collections.abc import Callable
from typing import Any, Self

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from protocol.codec import MalformedFrame, decode_server, encode
from protocol.messages import (
    PROTOCOL_VERSION,
    AskSnapshot,
    ClientMessage,
    Error,
    Goodbye,
    Hello,
    Joined,
    ServerMessage,
    Snapshot,
    Update,
    Welcome,
)
from protocol.mirror import RoomMirror

logger = logging.getLogger("client")

Listener = Callable[[str, ServerMessage], None]


class ServerError(Exception):
    """The server answered a request with an error: ``code`` and, for illegal moves, ``rule``."""

    def __init__(self, error: Error) -> None:
        super().__init__(error.message)
        self.code = error.code
        self.rule = error.rule


class RaceClient:
    """A live connection to a race server. Build with :meth:`connect`."""

    def __init__(self, url: str, name: str, resume: str | None, reconnect: bool) -> None:
        self.url = url
        self.name = name
        self.resume = resume
        self.player: str | None = None
        self.reconnect = reconnect
        self.rooms: dict[str, RoomMirror] = {}
        self.roles: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[ServerMessage]] = {}
        self._listeners: list[Listener] = []
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._closing = False
        self.connected = asyncio.Event()

    @classmethod
    async def connect(cls, url: str, name: str, resume: str | None = None, reconnect: bool = True) -> Self:
        """Connect, say hello (resuming if a token is given) and start reading."""
        client = cls(url, name, resume, reconnect)
        await client._open()
        return client

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def listen(self, listener: Listener) -> None:
        """Call ``listener(room, message)`` for every snapshot and update applied, after the
        local copy changed (room is ``""`` for messages that belong to no room)."""
        self._listeners.append(listener)

    async def _open(self) -> None:
        socket = await connect(self.url, compression=None, max_size=2**22)
        self._socket = socket
        hello_id = next(self._ids)
        await socket.send(encode(Hello(id=hello_id, protocol=PROTOCOL_VERSION, name=self.name, resume=self.resume)))
        while True:
            reply = decode_server(await socket.recv(decode=False))
            if isinstance(reply, Error) and reply.id == hello_id:
                await socket.close()
                raise ServerError(reply)
            if isinstance(reply, Welcome):
                break
        self.player, self.resume, self.name = reply.player, reply.resume, reply.name
        self._reader = asyncio.create_task(self._read(socket))
        self.connected.set()

    async def close(self) -> None:
        self._closing = True
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the client was closed"))

    async def send(self, build: Callable[[int], ClientMessage]) -> int:
        """Send ``build(id)`` without waiting for the reply; return the id."""
        await self.connected.wait()
        request_id = next(self._ids)
        assert self._socket is not None
        await self._socket.send(encode(build(request_id)))
        return request_id

    async def request(self, build: Callable[[int], ClientMessage], timeout: float = 10.0) -> ServerMessage:
        """Send ``build(id)`` and return the server's reply naming that id (Ack, Joined, Hints,
        ...); raise :class:`ServerError` if it is an error."""
        await self.connected.wait()
        request_id = next(self._ids)
        future: asyncio.Future[ServerMessage] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            assert self._socket is not None
            await self._socket.send(encode(build(request_id)))
            reply = await asyncio.wait_for(future, timeout)
        finally:
            self._pending.pop(request_id, None)
        if isinstance(reply, Error):
            raise ServerError(reply)
        return reply

    async def _read(self, socket: ClientConnection) -> None:
        try:
            async for frame in socket:
                if isinstance(frame, str):
                    continue
                try:
                    message = decode_server(frame)
                except MalformedFrame as error:
                    logger.warning("ignored a frame the client cannot read: %s", error)
                    continue
                await self._dispatch(message)
        except ConnectionClosed:
            pass
        self.connected.clear()
        # Replies to requests in flight will never come: say so now rather than at the timeout.
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the connection dropped before the reply"))
        if not self._closing and self.reconnect:
            self._reconnecting = asyncio.create_task(self._reconnect())

    async def _reconnect(self) -> None:
        delay = 0.2
        while not self._closing:
            try:
                await self._open()
                logger.info("reconnected to %s", self.url)
                return
            except (TimeoutError, OSError, InvalidHandshake, ConnectionClosed):
                await asyncio.sleep(delay * (1 + random.random()))
                delay = min(delay * 2, 10.0)

    async def _dispatch(self, message: ServerMessage) -> None:
        room = ""
        if isinstance(message, Snapshot):
            room = message.room
            mirror = self.rooms.get(room)
            if mirror is None:
                self.rooms[room] = RoomMirror(message)
            else:
                mirror.reset(message)
        elif isinstance(message, Update):
            room = message.room
            mirror = self.rooms.get(room)
            if mirror is None:
                return
            if not mirror.apply(message):
                # A gap: something was missed. The snapshot replaces the copy.
                await self.send(lambda i: AskSnapshot(id=i, room=room))
                return
        elif isinstance(message, Joined):
            self.roles[message.room] = message.role
        elif isinstance(message, Goodbye):
            logger.info("server going away: %s", message.reason)
        request_id: Any = getattr(message, "id", None)
        future = self._pending.get(request_id) if isinstance(request_id, int) else None
        # A snapshot carries an id only when it answers AskSnapshot: then it is the reply.
        if future is not None and not future.done():
            future.set_result(message)
        for listener in self._listeners:
            listener(room, message)
