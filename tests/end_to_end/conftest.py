"""End-to-end fixtures: a real race server, real websocket clients, the session's real Redis.

``start_server`` (function scope, async)
    A factory: ``async with start_server(grace=1.0, deal_picker=...) as srv:`` runs a
    :class:`server.app.RaceServer` (with a countdown of :data:`tests.polling.COUNTDOWN`
    unless ``countdown=`` says otherwise) in this process on a free port, against the session
    Redis (``redis_url``) with a key prefix of its own, so tests never see each other's
    rooms. ``srv.url`` is its ``ws://`` address; ``srv.connect(name)`` opens a
    :class:`RaceClient` and ``srv.raw()`` a :class:`RawClient`, both closed before the
    server stops.

``server`` (function scope, async)
    One such server with the default settings.

``slow_countdown_server`` (function scope, async)
    One such server counting down :data:`tests.polling.LONG_COUNTDOWN`, for tests that look
    at a room while it counts down.

Helpers for the tests of this package live here too: :class:`RawClient` (a bare client
that keeps every frame it receives, and can send anything), :func:`eventually`, and
:func:`start_race` (two racers from a new room to the first move).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
import uuid
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec
import pytest_asyncio
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
    JoinRoom,
    Ready,
    RoomOptions,
    RoomView,
    ServerMessage,
    Update,
    Variant,
    Welcome,
)
from protocol.mirror import RoomMirror
from server.app import RaceServer, stop_leftovers
from server.clock import now_ms
from server.competition.daily import day_start_ms, utc_date
from server.config import Config
from server.features.context import Context
from server.rooms.room import DealPicker, random_deal
from server.storage.connection import Storage
from server.storage.held import HeldEntries, Released
from server.storage.keys import Keys
from tests.polling import COUNTDOWN as COUNTDOWN
from tests.polling import LONG_COUNTDOWN as LONG_COUNTDOWN
from tests.polling import PATIENCE as PATIENCE
from tests.polling import eventually as eventually
from tests.polling import eventually_async


def board_lists(piles: Any) -> list[list[int | None]]:
    """A board (engine public piles or a wire board) as lists, for comparison."""
    return [list(pile) for pile in piles]


def without_clock(view: RoomView) -> RoomView:
    """A view without its clock (``clock.now`` is the time the view was made)."""
    return msgspec.structs.replace(view, clock=msgspec.structs.replace(view.clock, now=0))


class RawClient:
    """A bare protocol client over a real websocket. Every frame received is kept in
    :attr:`frames` (raw bytes) and :attr:`messages` (decoded, ``None`` for a frame that is
    not a server message) by a background reader, so nothing the server sends is missed."""

    def __init__(self, socket: ClientConnection, storage: Storage | None = None) -> None:
        self.socket = socket
        #: The server's storage, when the test has it: see :func:`registered_before_today`.
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
    url: str
    _clients: list[RaceClient | RawClient] = field(default_factory=list)

    @property
    def hub(self) -> Context:
        assert self.server.ctx is not None
        return self.server.ctx

    async def connect(self, name: str, resume: str | None = None) -> RaceClient:
        """A :class:`RaceClient` that says hello as ``name`` (no automatic reconnection)."""
        client = await RaceClient.connect(self.url, name, resume=resume, reconnect=False)
        self._clients.append(client)
        return client

    async def raw(self, name: str | None = None) -> RawClient:
        """A :class:`RawClient`, already past hello if ``name`` is given."""
        client = await RawClient.open(self.url, self.server.storage)
        self._clients.append(client)
        if name is not None:
            await client.hello(name)
        return client

    async def close_clients(self) -> None:
        for client in self._clients:
            with contextlib.suppress(Exception):
                await client.close()


async def registered_before_today(storage: Storage, player: str) -> None:
    """Date ``player``'s account back to yesterday: today's daily deal is played by accounts
    registered before the day began (server/features/daily.py), and tests register on the day."""
    key = Keys(storage.prefix).account(player)
    assert await storage.redis.exists(key), f"{player} is no account"
    await storage.redis.hset(key, "created", day_start_ms(utc_date(now_ms())) - 1)


#: Seconds between a test's moves of a ranked daily attempt: above the machine speed the
#: anti-cheat check refuses outright (server/competition/move_timing.py).
PERSON_PACE = 0.16


async def cleared_by_a_moderator(storage: Storage, game: str, player: str) -> None:
    """Clear ``player``'s ranked daily entry of today once the anti-cheat check has held it:
    a test replays the day's solution, which it holds as studied, as ``admin clear-flag`` would."""
    held, date = HeldEntries(storage), utc_date(now_ms())

    async def release() -> Released:
        return await held.release(game, date, player)

    await eventually_async(release, lambda released: released is Released.RELEASED)


ServerFactory = Callable[..., contextlib.AbstractAsyncContextManager[RunningServer]]


@pytest_asyncio.fixture
async def start_server(redis_url: str) -> ServerFactory:
    @contextlib.asynccontextmanager
    async def start(
        grace: float = 60.0, deal_picker: DealPicker = random_deal, **settings: Any
    ) -> AsyncIterator[RunningServer]:
        settings.setdefault("solver_workers", 0)  # no solver processes unless a test asks
        settings.setdefault("hint_workers", 0)
        settings.setdefault("countdown", COUNTDOWN)
        config = Config(
            port=0, redis_url=redis_url, key_prefix=f"test:{uuid.uuid4().hex[:12]}:", grace=grace, **settings
        )
        async with RaceServer(config, deal_picker) as server:
            running = RunningServer(server, f"ws://127.0.0.1:{server.port}")
            try:
                yield running
            finally:
                await running.close_clients()

    return start


@pytest_asyncio.fixture
async def server(start_server: ServerFactory) -> AsyncIterator[RunningServer]:
    async with start_server() as running:
        yield running
    # As `python -m server` does at exit: pytest-asyncio cancels what is left only once, and
    # a task that swallowed it held a teardown for the whole test timeout (seen in CI).
    await stop_leftovers()


@pytest_asyncio.fixture
async def slow_countdown_server(start_server: ServerFactory) -> AsyncIterator[RunningServer]:
    async with start_server(countdown=LONG_COUNTDOWN) as running:
        yield running
    await stop_leftovers()


def fixed_deal(deal: str) -> DealPicker:
    """A deal picker that always deals ``deal``."""
    return lambda variant: deal


# -- a race between two RaceClients ------------------------------------------------------


@dataclass
class Race:
    """Two racers in room ``code``, seat 0 and seat 1, racing."""

    code: str
    racers: tuple[RaceClient, RaceClient]

    def mirror(self, seat: int) -> RoomMirror:
        return self.racers[seat].rooms[self.code]


async def open_room(srv: RunningServer, variant: Variant, options: RoomOptions | None = None) -> Race:
    """Ann creates a room and Bob joins it (nobody ready yet)."""
    ann = await srv.connect("Ann")
    created = await ann.request(lambda i: CreateRoom(id=i, variant=variant, options=options or RoomOptions()))
    assert isinstance(created, Joined)
    assert created.seat == 0
    bob = await srv.connect("Bob")
    joined = await bob.request(lambda i: JoinRoom(id=i, room=created.room))
    assert isinstance(joined, Joined)
    assert joined.seat == 1
    return Race(created.room, (ann, bob))


async def ready_and_race(race: Race) -> None:
    """Both racers say ready; return once both see their own board dealt (after the countdown)."""
    for racer in race.racers:
        await racer.request(lambda i: Ready(id=i, room=race.code))
    await eventually(
        lambda: all(
            race.code in racer.rooms
            and racer.rooms[race.code].view().state == "racing"
            and racer.rooms[race.code].board(seat) is not None
            for seat, racer in enumerate(race.racers)
        ),
        what="both seats racing",
    )


async def start_race(srv: RunningServer, variant: Variant, options: RoomOptions | None = None) -> Race:
    race = await open_room(srv, variant, options)
    await ready_and_race(race)
    return race


def updates_of(messages: list[ServerMessage | None]) -> list[Update]:
    return [m for m in messages if isinstance(m, Update)]
