"""Deal supply against a real Redis: daily deals picked once and kept, the winnable pool kept full.

Most tests run the real solver in a one-thread pool: they are about the plumbing (storage,
sharing, background loops), and a thread lets a test count or hold the solver's calls.
Two tests run it in worker processes, as the server does.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import threading
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import msgspec
import pytest
import pytest_asyncio

from server.competition.daily import DAILY_OPTIONS, DailyDeal, Solve, candidates, certified_winnable, pick_daily
from server.games import Deal, Game, InvalidNotation, Options, variant_class
from server.rooms.room import random_deal
from server.solver import Budget, Result, Stats, Unknown, solve
from server.storage.connection import Storage as Store
from server.storage.deals import DealStore
from server.supply.certified import DRAWS_PER_HOUR, DailyDeals, WinnablePool
from server.supply.shipped import shipped

pytestmark = pytest.mark.asyncio

SECRET = b"test secret: daily deals"
BUDGET_SECONDS = 2.0
RECHECK_SECONDS = 60.0
#: Scorpion deals the solver decides in milliseconds: the winnable ones, and ones it proves unwinnable.
SCORPION_WINNABLE = ["33", "37", "49", "56", "57", "58"]
SCORPION_UNWINNABLE = ["1", "4", "8", "9", "11", "12"]
WAIT = 30.0


class CountingSolve:
    """The real solver, counting its calls; ``hold`` (if given) keeps each call waiting until it is set.

    With ``give_up`` the solver does not decide the first deal it is asked about (a slower
    machine, say), so its pick is the next winnable candidate.
    """

    def __init__(self, hold: threading.Event | None = None, give_up: bool = False) -> None:
        self.calls = 0
        self.started = threading.Event()
        self._hold = hold
        self._give_up = give_up
        self._lock = threading.Lock()

    def __call__(self, variant: type[Game], deal: Deal, options: Options, budget: Budget) -> Result:
        with self._lock:
            self.calls += 1
            first = self.calls == 1
        self.started.set()
        if self._hold is not None:
            assert self._hold.wait(WAIT)
        if first and self._give_up:
            return Unknown("seconds", Stats(0, budget.seconds))
        return solve(variant, deal, options, budget)


def refuse(variant: type[Game], deal: Deal, options: Options, budget: Budget) -> Result:
    raise AssertionError("the solver was asked again: the stored deal should have been used")


@pytest.fixture
def threads() -> Iterator[ThreadPoolExecutor]:
    with ThreadPoolExecutor(max_workers=1) as pool:
        yield pool


@pytest_asyncio.fixture
async def dailies(store: Store) -> AsyncIterator[Callable[..., DailyDeals]]:
    """A factory of DailyDeals on ``store``, each with a worker thread of its own (like another
    server process), closed after the test."""
    made: list[tuple[DailyDeals, ThreadPoolExecutor]] = []

    def make(solve: Solve = solve) -> DailyDeals:
        executor = ThreadPoolExecutor(max_workers=1)
        daily = DailyDeals(DealStore(store), SECRET, BUDGET_SECONDS, executor=executor, solve=solve)
        made.append((daily, executor))
        return daily

    yield make
    for daily, executor in made:
        await daily.close()
        executor.shutdown()


async def eventually(check: Callable[[], Awaitable[object]], timeout: float = WAIT) -> None:
    """Wait until ``await check()`` is true."""
    async with asyncio.timeout(timeout):
        while not await check():
            await asyncio.sleep(0.02)


async def stop(task: asyncio.Task[None]) -> None:
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task


def assert_solution_wins(daily: DailyDeal) -> None:
    replayed = variant_class(daily.game).replay(daily.deal, DAILY_OPTIONS, daily.solution)
    assert replayed.is_won()


# -- daily deals -------------------------------------------------------------------------


async def test_daily_deal_is_stored_and_reused(store: Store, dailies: Callable[..., DailyDeals]) -> None:
    counting = CountingSolve()
    daily = dailies(counting)
    first = await daily.get("antares", "2024-05-17")
    assert first == pick_daily(SECRET, "2024-05-17", "antares", BUDGET_SECONDS)
    assert_solution_wins(first)
    calls = counting.calls
    assert calls >= 1

    assert await daily.get("Antares", "2024-05-17") == first
    assert counting.calls == calls
    # A restarted server (a new DailyDeals on the same Redis) serves the stored deal without solving.
    assert await dailies(refuse).get("antares", "2024-05-17") == first

    raw = await store.redis.get(f"{store.prefix}daily:antares:2024-05-17")
    assert raw is not None
    assert msgspec.json.decode(raw, type=DailyDeal) == first


async def test_each_game_and_day_has_its_own_deal(dailies: Callable[..., DailyDeals]) -> None:
    daily = dailies()
    antares = await daily.get("antares", "2024-05-17")
    scorpion = await daily.get("scorpion", "2024-05-17")
    tomorrow = await daily.get("antares", "2024-05-18")
    assert len({antares.deal, scorpion.deal, tomorrow.deal}) == 3
    assert (scorpion.game, scorpion.date, tomorrow.date) == ("scorpion", "2024-05-17", "2024-05-18")
    for deal in (antares, scorpion, tomorrow):
        assert_solution_wins(deal)


async def test_concurrent_gets_share_one_pick(dailies: Callable[..., DailyDeals]) -> None:
    counting = CountingSolve()
    daily = dailies(counting)
    results = await asyncio.gather(*(daily.get("antares", "2024-05-17") for _ in range(8)))
    # The day's first candidate is winnable: one pick is one solve.
    assert counting.calls == 1
    assert all(result == results[0] for result in results)


async def test_first_stored_pick_wins_between_server_processes(dailies: Callable[..., DailyDeals]) -> None:
    hold = threading.Event()
    slow = CountingSolve(hold, give_up=True)
    # This "process" looked in Redis, found nothing, and is solving (on a slow machine)...
    late = asyncio.create_task(dailies(slow).get("antares", "2024-05-17"))
    assert await asyncio.to_thread(slow.started.wait, WAIT)
    # ...when another one picks and stores the deal first.
    early = await dailies().get("antares", "2024-05-17")
    hold.set()
    # The slow one picked another candidate, but serves the stored deal: one deal for everyone.
    assert await late == early
    assert slow.calls == 2
    assert early.deal == str(next(candidates(SECRET, "2024-05-17", "antares")))


async def test_a_cancelled_caller_does_not_cancel_the_pick_for_others(dailies: Callable[..., DailyDeals]) -> None:
    hold = threading.Event()
    slow = CountingSolve(hold)
    daily = dailies(slow)
    impatient = asyncio.create_task(daily.get("antares", "2024-05-17"))
    patient = asyncio.create_task(daily.get("antares", "2024-05-17"))
    assert await asyncio.to_thread(slow.started.wait, WAIT)
    impatient.cancel()
    hold.set()
    assert_solution_wins(await patient)
    assert slow.calls == 1


async def test_prepare_picks_in_the_background(store: Store, dailies: Callable[..., DailyDeals]) -> None:
    hold = threading.Event()
    slow = CountingSolve(hold)
    daily = dailies(slow)
    key = f"{store.prefix}daily:scorpion:2024-05-17"
    await daily.prepare("scorpion", "2024-05-17")  # returns while the solver is held
    assert await asyncio.to_thread(slow.started.wait, WAIT)
    assert await store.redis.get(key) is None
    hold.set()
    await eventually(lambda: all_exist(store, [key]))
    calls = slow.calls
    assert_solution_wins(await daily.get("scorpion", "2024-05-17"))
    assert slow.calls == calls


async def test_run_ahead_keeps_today_and_tomorrow_ready_for_every_game(
    store: Store, dailies: Callable[..., DailyDeals]
) -> None:
    def keys(*dates: str) -> list[str]:
        return [f"{store.prefix}daily:{game}:{date}" for game in ("scorpion", "antares") for date in dates]

    now = [1_735_775_999_000]  # 2025-01-01 23:59:59 UTC
    daily = dailies()
    task = asyncio.create_task(daily.run_ahead(clock=lambda: now[0], interval_seconds=0.05))
    try:
        await eventually(lambda: all_exist(store, keys("2025-01-01", "2025-01-02")))
        assert not await store.redis.exists(*keys("2025-01-03"))
        now[0] += 1000  # midnight: the day after tomorrow becomes tomorrow
        await eventually(lambda: all_exist(store, keys("2025-01-03")))
    finally:
        await stop(task)
    for game in ("scorpion", "antares"):
        for date in ("2025-01-01", "2025-01-02", "2025-01-03"):
            assert_solution_wins(await dailies(refuse).get(game, date))


def crash_on_scorpion(variant: type[Game], deal: Deal, options: Options, budget: Budget) -> Result:
    if variant.VARIANT == "scorpion":
        raise RuntimeError("solver crashed")
    return solve(variant, deal, options, budget)


async def test_run_ahead_survives_a_failing_pick(store: Store, dailies: Callable[..., DailyDeals]) -> None:
    task = asyncio.create_task(dailies(crash_on_scorpion).run_ahead(clock=lambda: 1_735_775_999_000))
    try:
        keys = [f"{store.prefix}daily:antares:{date}" for date in ("2025-01-01", "2025-01-02")]
        await eventually(lambda: all_exist(store, keys))
        assert not task.done()
        assert not await store.redis.exists(f"{store.prefix}daily:scorpion:2025-01-01")
    finally:
        await stop(task)


async def all_exist(store: Store, keys: list[str]) -> bool:
    return await store.redis.exists(*keys) == len(keys)


async def test_daily_deal_is_picked_in_a_worker_process(store: Store) -> None:
    # No executor given: the server's own worker process does the solving.
    daily = DailyDeals(DealStore(store), SECRET, BUDGET_SECONDS)
    try:
        picked = await daily.get("scorpion", "2024-05-17")
    finally:
        await daily.close()
    assert picked == pick_daily(SECRET, "2024-05-17", "scorpion", BUDGET_SECONDS)
    assert_solution_wins(picked)


async def test_bad_game_or_date_is_refused(dailies: Callable[..., DailyDeals]) -> None:
    daily = dailies(refuse)
    with pytest.raises(InvalidNotation):
        await daily.get("klondike", "2024-05-17")
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        await daily.get("antares", "17/05/2024")


# -- the winnable pool -------------------------------------------------------------------


class Draws:
    """Deal numbers to draw, per game, in order (Antares: random, like race deals)."""

    def __init__(self, scorpion: list[str]) -> None:
        self._scorpion = iter(scorpion)

    def __call__(self, game: str) -> str:
        return next(self._scorpion) if game == "scorpion" else random_deal(game)


def interleaved(count: int) -> list[str]:
    return [deal for pair in zip(SCORPION_UNWINNABLE, SCORPION_WINNABLE, strict=True) for deal in pair][: 2 * count]


async def test_pool_fills_to_target_with_certified_deals_only(store: Store, threads: ThreadPoolExecutor) -> None:
    pool = WinnablePool(DealStore(store), BUDGET_SECONDS, target=3, executor=threads, draw=Draws(interleaved(4)))
    try:
        await pool.fill("scorpion")
        assert await pool.size("scorpion") == 3
        # The unwinnable deals drawn in between were dropped; the winnable ones come out in order.
        assert [await pool.take("scorpion", "ann") for _ in range(3)] == SCORPION_WINNABLE[:3]
        assert await pool.size("scorpion") == 0
        assert int(await pool.take("scorpion", "ann")) in shipped("scorpion")
    finally:
        await pool.close()


async def test_an_empty_pool_gives_shipped_certified_deals_and_warns_once(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    """A fresh start: the pool is empty, and races still get certified deals at once; the
    warning is not repeated for every race."""
    pool = WinnablePool(DealStore(store), BUDGET_SECONDS, target=3)
    caplog.set_level(logging.WARNING, logger="server.deals")
    for _ in range(20):
        assert int(await pool.take("scorpion", "ann")) in shipped("scorpion")
    assert int(await pool.take("antares", "ann")) in shipped("antares")
    assert sum("scorpion pool is empty" in r.getMessage() for r in caplog.records) == 1
    with pytest.raises(InvalidNotation):
        await pool.take("klondike", "ann")
    await pool.close()


async def test_one_player_cannot_drain_the_pool_for_the_others(store: Store) -> None:
    deals = DealStore(store)
    pool = WinnablePool(deals, BUDGET_SECONDS, target=3)
    surveyed = set(shipped("scorpion"))
    fresh = [str(10**17 + n) for n in range(DRAWS_PER_HOUR + 5)]  # certified by the pool's solver
    for deal in fresh:
        await deals.add_winnable("scorpion", deal)
    taken = [await pool.take("scorpion", "drainer") for _ in range(DRAWS_PER_HOUR + 3)]
    assert taken[:DRAWS_PER_HOUR] == fresh[:DRAWS_PER_HOUR]
    assert all(int(deal) in surveyed for deal in taken[DRAWS_PER_HOUR:])  # still certified
    assert await pool.take("scorpion", "bob") == fresh[DRAWS_PER_HOUR]  # Bob's share is his own
    await pool.close()


async def test_pool_fills_in_a_worker_process_with_winnable_race_deals(store: Store) -> None:
    with ProcessPoolExecutor(max_workers=1, mp_context=multiprocessing.get_context("spawn")) as processes:
        pool = WinnablePool(DealStore(store), BUDGET_SECONDS, target=3, executor=processes)
        # Concurrent fills share one filling: the pool is not overfilled.
        await asyncio.gather(pool.fill("antares"), pool.fill("antares"))
        await pool.close()
    assert await pool.size("antares") == 3
    taken = [await pool.take("antares", "ann") for _ in range(3)]
    assert await pool.size("antares") == 0
    assert len(set(taken)) == 3
    for deal in taken:
        assert deal is not None
        assert 10**16 <= int(deal) < 10**20  # drawn like any race deal
        # Re-solved with room to spare: the search is deterministic, but a loaded machine
        # slows it, and this asserts the verdict, not the speed.
        assert certified_winnable("antares", deal, RECHECK_SECONDS)


async def test_run_keeps_every_pool_at_target(store: Store, threads: ThreadPoolExecutor) -> None:
    pool = WinnablePool(DealStore(store), BUDGET_SECONDS, target=2, executor=threads, draw=Draws(interleaved(6)))
    # The interval is long: only a take can start the refill within this test.
    task = asyncio.create_task(pool.run(interval_seconds=600))
    try:
        await eventually(lambda: _both_full(pool))
        assert await pool.take("scorpion", "ann") == SCORPION_WINNABLE[0]
        await eventually(lambda: _both_full(pool))
        assert [await pool.take("scorpion", "ann") for _ in range(2)] == SCORPION_WINNABLE[1:3]
    finally:
        await stop(task)
        await pool.close()


async def _both_full(pool: WinnablePool) -> bool:
    return await pool.size("scorpion") == await pool.size("antares") == pool.target
