"""Fixtures for the client tests: a real race server in this process, on the session's
real Redis, and helpers to race on it.

``serve`` (function scope, async)
    A factory: ``async with serve(deal="24") as srv:`` runs a :class:`RaceServer` on a free
    loopback port (or ``port=``; ``host=`` another local address) with a key prefix of its own (``prefix=`` to share one
    with an earlier server, as a restart does), counting down :data:`tests.polling.COUNTDOWN`
    (``countdown=`` for another); ``srv.url`` is its address and
    ``srv.connect(name)`` opens a :class:`RaceClient`, closed before the server stops.

``serve_daily`` (function scope, async)
    A factory like ``serve`` for a server that offers daily challenges (one solver
    worker, a 2 s budget): ``async with serve_daily() as (srv, deal):`` where ``deal`` is
    today's Antares :class:`~server.competition.daily.DailyDeal`, picked and stored before the server
    starts, so that it is ready at once (the server's worker picks the Scorpion deal first,
    which can take a while).
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import msgspec
import pytest_asyncio
from textual.widgets import DataTable

from client.lib.connection import RaceClient
from protocol.messages import Clock, CreateRoom, Joined, PlayMove, RoomOptions, RoomView, Variant
from server.app import RaceServer
from server.competition.daily import DailyDeal, utc_date
from server.config import Config
from server.features.context import Context
from server.rooms.room import random_deal
from server.storage.connection import Storage
from server.storage.deals import DealStore
from server.storage.players import PlayerStore
from server.supply.certified import DailyDeals
from tests.polling import COUNTDOWN
from tests.polling import PATIENCE as PATIENCE
from tests.polling import eventually as eventually


def playing(code: str, text: str) -> Callable[[int], PlayMove]:
    """The request for move ``text`` in room ``code``, for ``client.request`` (built here, not
    in a loop's lambda, so each request keeps its own move)."""
    return lambda i: PlayMove(id=i, room=code, move=text)


def without_now(view: RoomView) -> RoomView:
    """A view without ``clock.now`` (the moment the view was made)."""
    return msgspec.structs.replace(view, clock=msgspec.structs.replace(view.clock, now=0))


def row_text(table: DataTable[Any], row: int = 0) -> str:
    """The cells of a table's row ``row``, spaced ("" while the table has no such row)."""
    return " ".join(str(cell) for cell in table.get_row_at(row)) if table.row_count > row else ""


def finished_run(now: int, challenge: str | None = None, bracket: str | None = None) -> RoomView:
    """A one-racer Antares room whose race ended at ``now``, its deal not revealed: a run of
    ``challenge`` or of a round of ``bracket``."""
    return RoomView(
        code="K7Q2M9XD",
        variant="antares",
        options=RoomOptions(max_racers=1, hints=False),
        state="finished",
        creator="p",
        piles=[],
        racers=[],
        spectators=0,
        clock=Clock(now=now, finished=now),
        commitment="be49",
        challenge=challenge,
        bracket=bracket,
    )


@dataclass
class Running:
    server: RaceServer
    url: str
    prefix: str
    clients: list[RaceClient] = field(default_factory=list)

    @property
    def hub(self) -> Context:
        assert self.server.ctx is not None
        return self.server.ctx

    def view(self, code: str, seat: int | None) -> RoomView:
        """The room as the server shows it to ``seat`` (None: a spectator), now."""
        return self.hub.rooms[code].room.view(seat, int(time.time() * 1000))

    async def connect(self, name: str, resume: str | None = None, reconnect: bool = False) -> RaceClient:
        client = await RaceClient.connect(self.url, name, resume=resume, reconnect=reconnect)
        self.clients.append(client)
        return client

    async def fifty_one_public_rooms(self) -> None:
        """51 public rooms (one more than a lobby page): 26 of Antares, 25 of Scorpion, by six
        hosts (a server started with ``max_rooms_per_player=10, public_rooms_per_address=100``)."""
        for host in range(6):
            client = await self.connect(f"Host {host}")
            for n in range(min(10, 51 - 10 * host)):
                variant: Variant = "antares" if n % 2 == 0 else "scorpion"
                created = await client.request(partial(CreateRoom, variant=variant, options=RoomOptions(public=True)))
                assert isinstance(created, Joined)


Serve = Callable[..., contextlib.AbstractAsyncContextManager[Running]]


@pytest_asyncio.fixture
async def serve(redis_url: str) -> AsyncIterator[Serve]:
    opened: list[Running] = []

    @contextlib.asynccontextmanager
    async def start(
        deal: str | None = None,
        port: int = 0,
        prefix: str | None = None,
        close_clients: bool = True,
        host: str = "127.0.0.1",
        **settings: Any,
    ) -> AsyncIterator[Running]:
        prefix = prefix or f"test:{uuid.uuid4().hex[:12]}:"
        settings.setdefault("solver_workers", 0)
        settings.setdefault("hint_workers", 0)  # no solver processes unless a test asks
        settings.setdefault("countdown", COUNTDOWN)
        config = Config(host=host, port=port, redis_url=redis_url, key_prefix=prefix, **settings)
        picker = random_deal if deal is None else (lambda variant: deal)
        async with RaceServer(config, picker) as server:
            running = Running(server, f"ws://{host}:{server.port}", prefix)
            opened.append(running)
            try:
                yield running
            finally:
                if close_clients:
                    for client in running.clients:
                        with contextlib.suppress(Exception):
                            await client.close()

    yield start
    for running in opened:
        for client in running.clients:
            with contextlib.suppress(Exception):
                await client.close()


ServeDaily = Callable[..., contextlib.AbstractAsyncContextManager[tuple[Running, DailyDeal]]]

#: The solver's budget per deal for servers with daily challenges (the Antares deal takes well under it).
DAILY_BUDGET = 2.0


@pytest_asyncio.fixture
async def serve_daily(serve: Serve, redis_url: str) -> ServeDaily:
    @contextlib.asynccontextmanager
    async def start(**settings: Any) -> AsyncIterator[tuple[Running, DailyDeal]]:
        prefix = f"test:{uuid.uuid4().hex[:12]}:"
        store = await Storage.connect(redis_url, prefix=prefix)
        try:
            # Picked the server's way, under the server's secret and keys, in a thread of ours.
            with ThreadPoolExecutor(1) as pool:
                supply = DailyDeals(DealStore(store), await PlayerStore(store).server_secret(), DAILY_BUDGET, pool)
                await supply.get("antares", utc_date(int(time.time() * 1000)))
                await supply.close()
        finally:
            await store.close()
        settings = {"solver_workers": 1, "solver_budget": DAILY_BUDGET, "pool_size": 1, **settings}
        async with serve(prefix=prefix, **settings) as srv:
            assert srv.hub.daily is not None
            # The deal the running server serves today (it reads the one stored above).
            deal = await srv.hub.daily.get("antares", utc_date(int(time.time() * 1000)))
            yield srv, deal

    return start
