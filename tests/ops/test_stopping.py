"""Stopping background tasks for certain (server/ops/stopping.py), when a call inside them
swallowed the cancellation (as Python 3.11's ``asyncio.wait_for`` can when its inner call
finishes in the same turn): the server's loops end anyway, so a shutdown always ends."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from server.ops.stopping import stop_requested, stop_tasks

pytestmark = pytest.mark.asyncio


async def _swallowing_call() -> None:
    """A call that ends normally even when cancelled, like the ``wait_for`` race."""
    with contextlib.suppress(asyncio.CancelledError):
        await asyncio.sleep(10)


async def test_a_loop_that_checks_stop_requested_ends_after_one_swallowed_cancellation() -> None:
    turns = 0

    async def loop() -> None:
        nonlocal turns
        while True:
            stop_requested()
            turns += 1
            await _swallowing_call()

    task = asyncio.ensure_future(loop())
    await asyncio.sleep(0.01)
    task.cancel()  # once, as asyncio's runner does at exit
    await asyncio.wait([task], timeout=1.0)
    assert task.cancelled()
    assert turns == 1


async def test_stop_tasks_cancels_again_until_a_task_ends() -> None:
    async def swallows_twice() -> None:
        await _swallowing_call()
        await _swallowing_call()
        await asyncio.sleep(10)

    task = asyncio.ensure_future(swallows_twice())
    await asyncio.sleep(0.01)
    await asyncio.wait_for(stop_tasks([task]), timeout=5.0)
    assert task.cancelled()
