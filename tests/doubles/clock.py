"""Room clocks (:class:`server.live.clock.RoomClock`) for tests: one that moves only when the
test says, and the system's put ahead by hand."""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections.abc import Callable
from typing import Final

from server.live.clock import SystemClock, Timer

#: Event-loop turns given to the work a timer started (in-memory storage answers in a few).
SETTLE_TURNS: Final = 100


class ManualTimer:
    __slots__ = ("callback", "cancelled")

    def __init__(self, callback: Callable[[], None]) -> None:
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        self.cancelled = True


class ManualClock:
    """Starts at the system's wall time and stands still; :meth:`advance` moves it, running
    each timer at its due time, in order, and letting what it starts run before the next."""

    def __init__(self, start: float | None = None) -> None:
        self._now = time.time() if start is None else start
        self._due: list[tuple[float, int, ManualTimer]] = []
        self._order = itertools.count()
        #: Timers armed for later so far (cancelled ones included).
        self.armed = 0

    def now_ms(self) -> int:
        return int(self._now * 1000)

    def time(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """A timer due now runs on the event loop's next turn, as the system clock's would;
        a later one when :meth:`advance` reaches it."""
        if delay <= 0:
            return asyncio.get_running_loop().call_soon(callback)
        timer = ManualTimer(callback)
        self.armed += 1
        heapq.heappush(self._due, (self._now + delay, next(self._order), timer))
        return timer

    async def advance(self, seconds: float) -> None:
        """Move ``seconds`` on, firing the timers due meanwhile (and those they arm)."""
        end = self._now + seconds
        await settle()
        while self._due and self._due[0][0] <= end:
            due, _, timer = heapq.heappop(self._due)
            self._now = max(self._now, due)
            if not timer.cancelled:
                timer.callback()
                await settle()
        self._now = end
        await settle()

    def pending(self) -> list[float]:
        """Seconds from now to each armed timer, soonest first."""
        return sorted(due - self._now for due, _, timer in self._due if not timer.cancelled)


class AheadClock(SystemClock):
    """The system clock, with its wall time put ahead by :meth:`skip`: a room's records then
    show moves a person's pace apart without the test waiting for it. Delays and timers run
    on the system's time (a countdown still takes its real length)."""

    __slots__ = ("_ahead_ms",)

    def __init__(self) -> None:
        self._ahead_ms = 0

    def now_ms(self) -> int:
        return super().now_ms() + self._ahead_ms

    @property
    def ahead(self) -> float:
        """Seconds the wall time is ahead of the system's."""
        return self._ahead_ms / 1000

    def skip(self, seconds: float) -> None:
        """Put the wall time ``seconds`` further ahead (it never goes back)."""
        self._ahead_ms += max(0, round(seconds * 1000))


async def settle() -> None:
    """Let the tasks ready to run (and those they wake) run."""
    for _ in range(SETTLE_TURNS):
        await asyncio.sleep(0)
