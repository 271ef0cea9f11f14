"""Fixtures for the client tests: a real race server in this process, on the session's
real Redis, and helpers to race on it.

``serve`` (function scope)
    The ``start_server`` factory of tests/conftest.py: ``async with serve(deal="24") as srv:``
    runs a server on a free loopback port (or ``port=``; ``host=`` another local address)
    with a key prefix of its own (``prefix=`` to share one with an earlier server, as a
    restart does); ``srv.connect(name)`` opens a :class:`RaceClient`, closed before the
    server stops (at the test's end with ``close_clients=False``).

``serve_daily`` (function scope, async)
    A factory on ``start_server`` for a server that offers daily challenges (one solver
    worker, a 2 s budget): ``async with serve_daily() as (srv, deal):`` where ``deal`` is
    today's Antares :class:`~server.competition.daily.DailyDeal`, picked and stored before the server
    starts, so that it is ready at once (the server's worker picks the Scorpion deal first,
    which can take a while).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import AsyncIterator, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import msgspec
import pytest
import pytest_asyncio
from textual.widgets import DataTable

from protocol.messages import Clock, PlayMove, RoomOptions, RoomView
from server.competition.daily import DailyDeal, utc_date
from server.storage.connection import Storage
from server.storage.deals import DealStore
from server.storage.players import PlayerStore
from server.supply.certified import DailyDeals
from tests.in_process_server import RunningServer, ServerFactory, fresh_prefix
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


#: The client tests' names for :class:`RunningServer` and the ``start_server`` factory.
Running = RunningServer
Serve = ServerFactory


@pytest.fixture
def serve(start_server: ServerFactory) -> ServerFactory:
    """The ``start_server`` fixture of tests/conftest.py, under the client tests' name."""
    return start_server


ServeDaily = Callable[..., contextlib.AbstractAsyncContextManager[tuple[RunningServer, DailyDeal]]]

#: The solver's budget per deal for servers with daily challenges (the Antares deal takes well under it).
DAILY_BUDGET = 2.0


@pytest_asyncio.fixture
async def serve_daily(start_server: ServerFactory, redis_url: str) -> ServeDaily:
    @contextlib.asynccontextmanager
    async def start(**settings: Any) -> AsyncIterator[tuple[RunningServer, DailyDeal]]:
        prefix = fresh_prefix()
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
        async with start_server(prefix=prefix, **settings) as srv:
            assert srv.hub.daily is not None
            # The deal the running server serves today (it reads the one stored above).
            deal = await srv.hub.daily.get("antares", utc_date(int(time.time() * 1000)))
            yield srv, deal

    return start
