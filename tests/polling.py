"""Waiting in end-to-end tests for something a real server does asynchronously."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")

#: Seconds to wait for something the server does at once (the countdown takes 3 s).
PATIENCE = 10.0


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
