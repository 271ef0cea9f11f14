"""The time a live room runs on: the wall clock its records hold, the steady clock its delays
are measured by, and its timers. A room takes it as a parameter, so tests drive a room's
time without waiting; the server's is :data:`SYSTEM_CLOCK`."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Final, Protocol

from server.clock import now_ms


class Timer(Protocol):
    def cancel(self) -> None:
        """The callback will not run (if it has not yet)."""


class RoomClock(Protocol):
    def now_ms(self) -> int:
        """The wall clock, in Unix milliseconds (deadlines in room records are in it)."""

    def time(self) -> float:
        """A steady clock, in seconds (delays are measured by it; only differences count)."""

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` on the running event loop ``delay`` seconds of :meth:`time` from now."""


class SystemClock:
    """The system's wall clock, and the running event loop's clock and timers."""

    __slots__ = ()

    def now_ms(self) -> int:
        return now_ms()

    def time(self) -> float:
        return asyncio.get_running_loop().time()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(delay, callback)


SYSTEM_CLOCK: Final = SystemClock()
