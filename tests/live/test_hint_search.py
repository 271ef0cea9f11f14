"""Hint searches in a real worker process: a winning line comes back, one search at a time
per racer, within the racer's allowance, and the event loop stays free meanwhile."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
from concurrent.futures import Executor, Future, ProcessPoolExecutor
from typing import Any, TypeVar

import pytest

from server.games import Antares, Autoplay, Game, Options
from server.live.hint_search import ALLOWANCE, MIN_CHARGE, HintSearch
from server.solver import Budget, Solved, solve_position
from server.solver.hint_line import longest_stretch_without_home
from server.supply.workers import solver_pool, stop_pool

pytestmark = pytest.mark.asyncio

T = TypeVar("T")


@pytest.fixture(scope="module")
def workers() -> Iterator[ProcessPoolExecutor]:
    pool = solver_pool(1)
    try:
        yield pool
    finally:
        stop_pool(pool)


def visible_game() -> Game:
    return Antares.new(24, Options(autoplay=Autoplay.SAFE))


async def test_a_search_brings_back_a_winning_line_while_the_loop_goes_on(workers: ProcessPoolExecutor) -> None:
    search = HintSearch(workers)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    ticking = asyncio.create_task(tick())
    try:
        line = await search.line("ROOM", "ann", visible_game())
    finally:
        ticking.cancel()
    assert line is not None
    game = visible_game()
    for move in line:
        game.push(move)
    assert game.is_won()
    assert ticks > 0  # the loop ran while the worker searched


async def test_the_line_brought_back_is_the_first_found_line_shortened(workers: ProcessPoolExecutor) -> None:
    """On this deal the solver's first line goes 78 moves in a row without a card going home
    (issue 31): hints that followed it looked like a loop."""
    game = Antares.new("ms8589934591", Options(autoplay=Autoplay.SAFE))
    first = solve_position(game, Budget(seconds=10), par_seconds=0.0)
    assert isinstance(first, Solved)
    line = await HintSearch(workers).line("ROOM", "ann", game)
    assert line is not None
    assert len(line) < len(first.moves)
    assert longest_stretch_without_home(game, line) < longest_stretch_without_home(game, first.moves)
    replay = game.copy()
    for move in line:
        replay.apply(move)
    assert replay.is_won()


async def test_one_search_at_a_time_per_racer_and_others_are_not_held(workers: ProcessPoolExecutor) -> None:
    search = HintSearch(workers)
    first = asyncio.create_task(search.line("ROOM", "ann", visible_game()))
    await asyncio.sleep(0)
    assert await search.line("ROOM", "ann", visible_game()) is None  # Ann's first is running
    assert await first is not None
    assert await search.line("ROOM", "bob", visible_game()) is not None


class Counting(Executor):
    """The workers, counting the searches handed to them."""

    def __init__(self, workers: Executor) -> None:
        self.workers = workers
        self.submitted = 0

    def submit(self, fn: Callable[..., T], /, *args: Any, **kwargs: Any) -> Future[T]:
        self.submitted += 1
        return self.workers.submit(fn, *args, **kwargs)


async def test_a_racer_out_of_allowance_gets_no_search_until_it_refills(workers: ProcessPoolExecutor) -> None:
    counting = Counting(workers)
    search = HintSearch(counting, seconds=0.05)
    answered = 0
    for _ in range(int(ALLOWANCE / MIN_CHARGE) + 1):
        if await search.line("ROOM", "ann", visible_game()) is None:
            break
        answered += 1
    else:
        pytest.fail("the allowance never ran out")
    assert answered >= 1
    asked = counting.submitted
    assert await search.line("ROOM", "ann", visible_game()) is None
    assert counting.submitted == asked  # refused at once, no worker asked
    assert await search.line("ROOM", "bob", visible_game()) is not None  # Bob's is his own
