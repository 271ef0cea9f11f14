"""The system clock rooms run on: the wall clock in Unix ms, and the event loop's timers."""

from __future__ import annotations

import asyncio
import time

import pytest

from server.live.clock import SYSTEM_CLOCK

pytestmark = pytest.mark.asyncio


async def test_the_wall_clock_is_in_unix_milliseconds() -> None:
    assert abs(SYSTEM_CLOCK.now_ms() - time.time() * 1000) < 60_000


async def test_a_timer_runs_once_due_and_a_cancelled_one_never() -> None:
    ran: list[str] = []
    SYSTEM_CLOCK.call_later(0.01, lambda: ran.append("kept"))
    SYSTEM_CLOCK.call_later(0.0, lambda: ran.append("cancelled")).cancel()
    done = asyncio.get_running_loop().create_future()
    SYSTEM_CLOCK.call_later(0.02, lambda: done.set_result(None))
    await done
    assert ran == ["kept"]
