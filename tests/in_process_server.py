"""A race server running in this test process, on a real Redis, and the clients opened on it:
the one way the tests start a server of their own (the fixtures of tests/conftest.py, the
threaded server of the browser tests and the tests that bring their own Redis all use
:func:`running_server`).

:func:`running_server` runs a :class:`server.app.RaceServer` on a free loopback port with a
key prefix of its own (unless one is given, as a restart shares its predecessor's), no solver
or hint worker processes and a countdown of :data:`tests.polling.COUNTDOWN` unless the
settings say otherwise, and every race on ``deal`` when one is given. It yields a
:class:`RunningServer`, whose clients (:meth:`RunningServer.connect`, :meth:`RunningServer.raw`)
are closed before the server stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed

from client.lib.connection import RaceClient
from protocol.codec import decode_server, encode
from protocol.messages import (
    PROTOCOL_VERSION,
    ClientMessage,
    CreateRoom,
    Error,
    Hello,
    Joined,
    RoomOptions,
    RoomView,
    ServerMessage,
    Variant,
    Welcome,
)
from server.app import RaceServer
from server.config import Config
from server.features.context import Context
from server.live.clock import SYSTEM_CLOCK, RoomClock
from server.rooms.room import DealPicker, random_deal
from server.storage.connection import Storage
from tests.polling import COUNTDOWN, PATIENCE

#: Addresses that listen on every interface; clients reach such a server on loopback.
_ANY_ADDRESS = ("", "0.0.0.0")


def fresh_prefix() -> str:
    """A Redis key prefix no other test uses."""
    return f"test:{uuid.uuid4().hex[:12]}:"


def server_config(redis_url: str, prefix: str, **settings: Any) -> Config:
    """A test server's config: on a free port, under key prefix ``prefix``, with no solver or
    hint workers and the tests' countdown unless ``settings`` say otherwise."""
    settings = {"port": 0, "solver_workers": 0, "hint_workers": 0, "countdown": COUNTDOWN, **settings}
    return Config(redis_url=redis_url, key_prefix=prefix, **settings)


def deal_picker(deal: str | None) -> DealPicker:
    """Race on ``deal`` in every variant, or on a random deal when ``None``."""
    return random_deal if deal is None else (lambda variant: deal)


class RawClient:
    """A bare protocol client over a real websocket. Every frame received is kept in
    :attr:`frames` (raw bytes) and :attr:`messages` (decoded, ``None`` for a frame that is
    not a server message) by a background reader, so nothing the server sends is missed."""

    def __init__(self, socket: ClientConnection, storage: Storage | None = None) -> None:
        self.socket = socket
        #: The server's storage, when the test has it (to set up accounts behind its back).
        self.storage = storage
        self.frames: list[bytes | str] = []
        self.messages: list[ServerMessage | None] = []
        self._inbox: asyncio.Queue[ServerMessage | None] = asyncio.Queue()
        self._ids = itertools.count(1)
        self._reader = asyncio.create_task(self._read())

    @classmethod
    async def open(cls, url: str, storage: Storage | None = None) -> RawClient:
        return cls(await connect(url, compression=None, max_size=2**22), storage)

    async def _read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for frame in self.socket:
                self.frames.append(frame)
                message = decode_server(frame) if isinstance(frame, bytes) else None
                self.messages.append(message)
                self._inbox.put_nowait(message)

    async def send_raw(self, frame: bytes | str) -> None:
        await self.socket.send(frame)

    async def send(self, build: Callable[[int], ClientMessage]) -> int:
        request_id = next(self._ids)
        await self.socket.send(encode(build(request_id)))
        return request_id

    async def next(self, timeout: float = PATIENCE) -> ServerMessage | None:
        """The next message not yet taken from the inbox."""
        return await asyncio.wait_for(self._inbox.get(), timeout)

    async def wait_for(self, predicate: Callable[[ServerMessage], bool], timeout: float = PATIENCE) -> ServerMessage:
        """Take messages from the inbox until one fits ``predicate`` (the others stay in :attr:`messages`)."""
        deadline = time.monotonic() + timeout
        while True:
            message = await self.next(max(0.0, deadline - time.monotonic()))
            if message is not None and predicate(message):
                return message

    async def reply(self, request_id: int | None, timeout: float = PATIENCE) -> ServerMessage:
        """The next reply naming ``request_id`` (an error without an id counts when ``None``)."""
        return await self.wait_for(lambda m: getattr(m, "id", "none") == request_id, timeout)

    async def request(self, build: Callable[[int], ClientMessage]) -> ServerMessage:
        return await self.reply(await self.send(build))

    async def hello(self, name: str, resume: str | None = None) -> Welcome:
        reply = await self.request(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION, name=name, resume=resume))
        assert isinstance(reply, Welcome), reply
        return reply

    async def error(self, request_id: int | None) -> Error:
        reply = await self.reply(request_id)
        assert isinstance(reply, Error), reply
        return reply

    async def closed(self, timeout: float = PATIENCE) -> int | None:
        """Wait for the connection to close; its close code."""
        await asyncio.wait_for(self.socket.wait_closed(), timeout)
        return self.socket.close_code

    @property
    def is_open(self) -> bool:
        return self.socket.close_code is None

    async def close(self) -> None:
        await self.socket.close()
        await self._reader


@dataclass
class RunningServer:
    """A race server running in this process, and the clients opened on it."""

    server: RaceServer
    #: Its ``ws://`` address.
    url: str
    #: Its Redis key prefix (a server started again with it finds what this one stored).
    prefix: str
    #: The clients to close before the server stops (a test may add its own).
    clients: list[RaceClient | RawClient] = field(default_factory=list)

    @property
    def hub(self) -> Context:
        assert self.server.ctx is not None
        return self.server.ctx

    def view(self, code: str, seat: int | None) -> RoomView:
        """The room as the server shows it to ``seat`` (None: a spectator), now."""
        return self.hub.rooms[code].room.view(seat, int(time.time() * 1000))

    async def connect(self, name: str, resume: str | None = None, reconnect: bool = False) -> RaceClient:
        """A :class:`RaceClient` that says hello as ``name`` (reconnecting by itself if ``reconnect``)."""
        client = await RaceClient.connect(self.url, name, resume=resume, reconnect=reconnect)
        self.clients.append(client)
        return client

    async def raw(self, name: str | None = None) -> RawClient:
        """A :class:`RawClient` holding the server's storage, already past hello if ``name`` is given."""
        client = await RawClient.open(self.url, self.server.storage)
        self.clients.append(client)
        if name is not None:
            await client.hello(name)
        return client

    async def close_clients(self) -> None:
        for client in self.clients:
            with contextlib.suppress(Exception):
                await client.close()

    async def fifty_one_public_rooms(self) -> None:
        """51 public rooms (one more than a lobby page): 26 of Antares, 25 of Scorpion, by six
        hosts (a server started with ``max_rooms_per_player=10, public_rooms_per_address=100``)."""
        for host in range(6):
            client = await self.connect(f"Host {host}")
            for n in range(min(10, 51 - 10 * host)):
                variant: Variant = "antares" if n % 2 == 0 else "scorpion"
                created = await client.request(partial(CreateRoom, variant=variant, options=RoomOptions(public=True)))
                assert isinstance(created, Joined)


@contextlib.asynccontextmanager
async def running_server(
    redis_url: str,
    deal: str | None = None,
    prefix: str | None = None,
    host: str = "127.0.0.1",
    close_clients: bool = True,
    clock: RoomClock = SYSTEM_CLOCK,
    **settings: Any,
) -> AsyncIterator[RunningServer]:
    """A :class:`RunningServer` on ``redis_url`` (see the module's docstring), its rooms on
    ``clock``. With ``close_clients=False`` its clients outlive it (to see it stop and come
    back): close them yourself, as the ``start_server`` fixture does at the test's end."""
    prefix = prefix or fresh_prefix()
    config = server_config(redis_url, prefix, host=host, **settings)
    async with RaceServer(config, deal_picker(deal), clock) as server:
        address = "127.0.0.1" if host in _ANY_ADDRESS else host
        running = RunningServer(server, f"ws://{address}:{server.port}", prefix)
        try:
            yield running
        finally:
            if close_clients:
                await running.close_clients()


#: ``start_server`` (tests/conftest.py): :func:`running_server` on the session Redis.
ServerFactory = Callable[..., contextlib.AbstractAsyncContextManager[RunningServer]]
