"""Waiting in end-to-end tests for something a real server does asynchronously."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds to wait for something the server does at once (on a busy machine).
PATIENCE = 10.0
#: Seconds the test servers count down before a race (``--countdown``; 3 s by default):
#: only the tests of the countdown itself wait out a real one.
COUNTDOWN = 0.05
#: The default countdown, for tests that look at a room while it counts down (and do not
#: wait for its end): a short one could end before they look.
LONG_COUNTDOWN = 3.0


async def eventually(probe: Callable[[], T | None], timeout: float = PATIENCE, what: str = "condition") -> T:
    """Poll ``probe`` until it returns something true; return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        await asyncio.sleep(0.005)


async def eventually_async(
    probe: Callable[[], Awaitable[T]], check: Callable[[T], bool], timeout: float = PATIENCE
) -> T:
    """Await ``probe()`` until ``check`` accepts what it returns (a request, say); return that."""
    deadline = time.monotonic() + timeout
    while True:
        value = await probe()
        if check(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s: last {value!r}")
        await asyncio.sleep(0.2)
