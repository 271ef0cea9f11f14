"""Solver-certified deals, ready before anyone asks: the daily deals and the winnable race-deal pool.

The solver is CPU-bound (up to the budget per deal, several deals per pick), so it never
runs on the event loop: every solve goes to an executor, by default a private
one-process :class:`~concurrent.futures.ProcessPoolExecutor` (pass a shared one to spread
the work, or a thread pool in tests about plumbing). Results live in Redis, next to the
race server's keys, so every server process sharing that Redis
serves the same daily deal and draws from the same pool, and nothing is lost on restart.

The deals are stored by :class:`~server.storage.deals.DealStore`. Storage failures raise
:class:`~server.storage.connection.StoreUnavailable`; the background loops log them and try
again later.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Coroutine
from concurrent.futures import BrokenExecutor, Executor
from functools import partial
from typing import Any, Final, TypeVar

from server.clock import now_ms
from server.competition.daily import (
    DailyDeal,
    Solve,
    certified_winnable,
    check_date,
    game_name,
    next_date,
    pick_daily,
    utc_date,
)
from server.games import VARIANTS
from server.ops.log_limits import LogLimiter
from server.ops.metrics import POOL_DEPTH, SOLVER_QUEUE
from server.ops.stopping import stop_requested, stop_tasks
from server.rooms.draft import DealPicker
from server.rooms.room import random_deal
from server.solver import solve
from server.storage.deals import DealStore
from server.supply.shipped import draw_shipped
from server.supply.workers import solver_pool

logger = logging.getLogger("server.deals")

#: Seconds between two checks of :meth:`DailyDeals.run_ahead` that today's and tomorrow's deals exist.
RUN_AHEAD_INTERVAL: Final = 60.0
#: Seconds between two top-ups of :meth:`WinnablePool.run` when no deal was taken meanwhile.
POOL_INTERVAL: Final = 30.0
#: Deals one player may take from a game's pool in an hour; later races of theirs get
#: shipped deals (certified too), so that no player can drain the pool for the others.
DRAWS_PER_HOUR: Final = 30

T = TypeVar("T")


class DailyDeals:
    """The daily deal of each game and UTC day: read from Redis, or picked once and stored.

    ``secret`` seeds the picks (see :mod:`server.daily`); every server process sharing the
    Redis must use the same one (the server secret in Redis). The first process to store a
    day's deal wins: another that picked concurrently adopts the stored one.
    """

    def __init__(
        self,
        store: DealStore,
        secret: bytes,
        budget_seconds: float = 10.0,
        executor: Executor | None = None,
        solve: Solve = solve,
    ) -> None:
        """``budget_seconds`` is the solver's budget per candidate; ``solve`` is replaceable for tests
        (it must be picklable, i.e. a module-level function, when ``executor`` is a process pool)."""
        self._store = store
        self._secret = secret
        self._budget = budget_seconds
        self._solve = solve
        self._work = _Work(executor)

    async def get(self, game: str, date: str) -> DailyDeal:
        """The deal of ``game`` on ``date`` (``YYYY-MM-DD``), picking and storing it if nobody has yet.

        Concurrent callers for the same game and date share one pick. Raises
        :class:`~server.store.StoreUnavailable`, or :class:`~server.daily.NoWinnableDeal`.
        """
        return await self._work.shared(_daily_job(game, date), lambda: self._load_or_pick(game_name(game), date))

    async def stored(self, game: str, date: str) -> DailyDeal | None:
        """The deal of ``game`` on ``date`` if it was picked already; never picks one."""
        return await self._store.daily(game_name(game), check_date(date))

    async def prepare(self, game: str, date: str) -> None:
        """Start :meth:`get` in the background and return at once; failures are logged."""
        self._work.background(_daily_job(game, date), lambda: self._load_or_pick(game_name(game), date))

    async def run_ahead(self, clock: Callable[[], int] = now_ms, interval_seconds: float = RUN_AHEAD_INTERVAL) -> None:
        """Forever: every ``interval_seconds``, make sure today's and tomorrow's deals exist for every game.

        ``clock`` gives the time in epoch milliseconds. Failures are logged and retried at
        the next round; cancel the task to stop.
        """
        while True:
            stop_requested()  # _logged catches what a swallowed cancellation turns into
            today = utc_date(clock())
            for date in (today, next_date(today)):
                for game in VARIANTS:
                    await _logged(partial(self.get, game, date), f"preparing the {game} deal of {date}")
            await asyncio.sleep(interval_seconds)

    async def close(self) -> None:
        """Cancel the picks in progress and shut down the executor if it is this object's own."""
        await self._work.close()

    async def _load_or_pick(self, game: str, date: str) -> DailyDeal:
        stored = await self._store.daily(game, check_date(date))
        if stored is not None:
            return stored
        logger.info("picking the %s deal of %s", game, date)
        picked = await self._work.run(partial(pick_daily, self._secret, date, game, self._budget, self._solve))
        stored = await self._store.store_daily(picked)
        logger.info("the %s deal of %s is ready", game, date)
        return stored


class WinnablePool:
    """For each game, a pool in Redis of random race deals the solver certified winnable.

    A race with "winnable deals only" takes its deal with :meth:`take`; :meth:`run` keeps
    every pool at ``target`` deals in the background, refilling as soon as a deal is taken.
    Deals are drawn like any race deal (:func:`server.rooms.room.random_deal`) and certified
    with the room's default options (Antares autoplay "safe").
    """

    def __init__(
        self,
        store: DealStore,
        budget_seconds: float = 10.0,
        target: int = 20,
        executor: Executor | None = None,
        solve: Solve = solve,
        draw: DealPicker = random_deal,
    ) -> None:
        """``budget_seconds`` is the solver's budget per deal; a deal it cannot decide in time is dropped."""
        if target < 1:
            raise ValueError(f"the pool target is at least 1, not {target}")
        self._store = store
        self._budget = budget_seconds
        self._target = target
        self._solve = solve
        self._draw = draw
        self._work = _Work(executor)
        self._taken = asyncio.Event()
        # A burst of races can find the pool empty many times a second: one line says so.
        self._limited = LogLimiter(logger)

    @property
    def target(self) -> int:
        return self._target

    async def take(self, game: str, player: str) -> str:
        """A certified-winnable deal of ``game`` for a race of ``player``'s: one from the pool
        (removed from it) while ``player`` has drawn fewer than :data:`DRAWS_PER_HOUR` this
        hour, else, or when the pool is empty, a shipped one (:mod:`server.supply.shipped`).
        Never waits for the solver, and nobody can empty the pool for others."""
        name = game_name(game)
        if await self._store.count_draw(name, player) > DRAWS_PER_HOUR:
            return draw_shipped(name)
        deal = await self._store.take_winnable(name)
        self._taken.set()
        if deal is None:
            self._limited.log(logging.WARNING, f"empty:{name}", "the %s pool is empty: races get shipped deals", name)
            return draw_shipped(name)
        return deal

    async def size(self, game: str) -> int:
        """How many deals of ``game`` the pool holds now (Redis keeps the count: LLEN)."""
        size = await self._store.pool_size(game_name(game))
        POOL_DEPTH.labels(game_name(game)).set(size)
        return size

    async def fill(self, game: str) -> None:
        """Solve random deals until ``game``'s pool holds ``target``; return when it does.

        Concurrent calls for the same game share one filling, so the pool is not overfilled
        (another server process filling the same pool may still add a deal or two more).
        """
        name = game_name(game)
        await self._work.shared(name, lambda: self._fill(name))

    async def run(self, interval_seconds: float = POOL_INTERVAL) -> None:
        """Forever: keep every game's pool at ``target``, checking after each :meth:`take` and
        every ``interval_seconds``. Failures are logged and retried; cancel the task to stop."""
        while True:
            # asyncio.wait_for (3.11) can swallow a cancellation that meets its timeout.
            stop_requested()
            self._taken.clear()
            await asyncio.gather(*(_logged(partial(self.fill, game), f"filling the {game} pool") for game in VARIANTS))
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._taken.wait(), interval_seconds)

    async def close(self) -> None:
        """Cancel the fillings in progress and shut down the executor if it is this object's own."""
        await self._work.close()

    async def _fill(self, game: str) -> None:
        while (size := await self.size(game)) < self._target:
            deal = self._draw(game)
            if not await self._work.run(partial(certified_winnable, game, deal, self._budget, self._solve)):
                continue
            await self._store.add_winnable(game, deal)
            logger.debug("%s pool: %d of %d deals", game, size + 1, self._target)


class _Work:
    """Solves in an executor, shared between concurrent callers of the same key.

    Without an executor, one worker process of its own is started on first use (with
    "spawn": forking a process that runs threads, like the server, can copy a held lock).
    """

    def __init__(self, executor: Executor | None) -> None:
        self._executor = executor
        self._owned: Executor | None = None
        self._tasks: dict[str, asyncio.Task[Any]] = {}

    async def run(self, job: Callable[[], T]) -> T:
        """``job()`` in the executor: the event loop keeps serving meanwhile."""
        pool = self._pool()
        SOLVER_QUEUE.inc()
        try:
            return await asyncio.get_running_loop().run_in_executor(pool, job)
        except BrokenExecutor:
            # A worker died (killed, out of memory): our own pool is replaced on the next job.
            if pool is self._owned:
                self._owned = None
                pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            SOLVER_QUEUE.dec()

    async def shared(self, key: str, start: Callable[[], Coroutine[Any, Any, T]]) -> T:
        """The result of the task running for ``key``, started with ``start()`` if none is.

        A caller that is cancelled stops waiting; the task goes on for the others.
        """
        task: asyncio.Task[T] = self._task(key, start)
        return await asyncio.shield(task)

    def background(self, key: str, start: Callable[[], Coroutine[Any, Any, object]]) -> None:
        """Like :meth:`shared` without waiting; a failure is logged."""
        self._task(key, start).add_done_callback(partial(_log_failure, key))

    async def close(self) -> None:
        await stop_tasks(self._tasks.values())
        if self._owned is not None:
            self._owned.shutdown(wait=False, cancel_futures=True)
            self._owned = None

    def _task(self, key: str, start: Callable[[], Coroutine[Any, Any, T]]) -> asyncio.Task[T]:
        task = self._tasks.get(key)
        if task is None:
            task = asyncio.create_task(start())
            self._tasks[key] = task
            task.add_done_callback(partial(self._forget, key))
        return task

    def _forget(self, key: str, task: asyncio.Task[Any]) -> None:
        # Done (even failed): the next caller starts afresh, e.g. once Redis is back.
        if self._tasks.get(key) is task:
            del self._tasks[key]

    def _pool(self) -> Executor:
        if self._executor is not None:
            return self._executor
        if self._owned is None:
            self._owned = solver_pool(1)
        return self._owned


async def _logged(work: Callable[[], Awaitable[object]], action: str) -> None:
    """Await ``work()``; log (not raise) its failure: a background loop must outlive any one failure."""
    try:
        await work()
    except Exception:
        logger.exception("failed %s; trying again later", action)


def _log_failure(key: str, task: asyncio.Task[Any]) -> None:
    if not task.cancelled() and task.exception() is not None:
        logger.error("background job %s failed", key, exc_info=task.exception())


def _daily_job(game: str, date: str) -> str:
    return f"daily:{game_name(game)}:{check_date(date)}"
