"""Solver worker pools stop at once, even in the middle of a long solve."""

from __future__ import annotations

import time

from server.supply.workers import solver_pool, stop_pool


def test_stopping_a_pool_ends_a_worker_busy_with_a_long_solve() -> None:
    pool = solver_pool(1)
    pool.submit(time.sleep, 30)
    # stop_pool reaches for the executor's private process table: this fails if it changes.
    deadline = time.monotonic() + 30
    while not pool._processes and time.monotonic() < deadline:
        time.sleep(0.01)
    workers = list((pool._processes or {}).values())
    assert workers, "ProcessPoolExecutor no longer keeps its worker processes in _processes"
    started = time.monotonic()
    stop_pool(pool)
    for worker in workers:
        # is_alive polls again: a join can lose the reaping to the executor's own thread.
        while worker.is_alive() and time.monotonic() - started < 10:
            worker.join(0.05)
        assert not worker.is_alive()
    assert time.monotonic() - started < 10  # not the 30 s the solve would have taken
