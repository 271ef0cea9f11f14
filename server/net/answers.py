"""Forwarded requests waiting for their owner's answer (a :class:`Done`), by sequence number.

An answer in time costs one timer and no task. One that is late is checked every half second:
it fails at once when its owner is seen to stop beating (or Redis cannot say), and after the
timeout in any case, so a client never waits on a dead node.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, Final

from server.cluster.cluster import Cluster
from server.cluster.inbox import Done
from server.storage.connection import StoreUnavailable

#: Seconds an answer may be late before its owner's heartbeat is checked.
LATE: Final = 0.5


class Answers:
    """The answers this node waits for from other nodes."""

    def __init__(self, cluster: Cluster, timeout: float) -> None:
        """``timeout``: seconds an answer may take at most."""
        self._cluster = cluster
        self._timeout = timeout
        self._pending: dict[int, asyncio.Future[Done]] = {}
        self._checks: set[asyncio.Task[None]] = set()

    def arrived(self, done: Done) -> None:
        future = self._pending.get(done.seq)
        if future is not None and not future.done():
            future.set_result(done)

    def fail_all(self, error: Exception) -> None:
        """Fail every answer still awaited with ``error`` (the server is stopping)."""
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)

    def expect(self, seq: int) -> asyncio.Future[Done]:
        """Wait for answer ``seq`` (before its request leaves: an answer may come at once)."""
        future: asyncio.Future[Done] = asyncio.get_running_loop().create_future()
        self._pending[seq] = future
        return future

    async def wait(self, seq: int, future: asyncio.Future[Done], owner: str) -> Done:
        """The answer ``seq`` (:meth:`expect` gave ``future``) from ``owner``; TimeoutError
        after the timeout or once ``owner`` stops beating, :class:`StoreUnavailable` if
        Redis cannot say whether it beats."""
        deadline = time.monotonic() + self._timeout
        timer = asyncio.get_running_loop().call_later(LATE, self._late, owner, future, deadline)
        try:
            return await future
        finally:
            timer.cancel()
            self._pending.pop(seq, None)

    def _late(self, owner: str, future: asyncio.Future[Done], deadline: float) -> None:
        if not future.done():
            self._background(self._check_late(owner, future, deadline))

    async def _check_late(self, owner: str, future: asyncio.Future[Done], deadline: float) -> None:
        try:
            gone = owner not in await self._cluster.alive({owner}, fresh=0.0)
        except StoreUnavailable as error:
            # Redis is out of reach: the request (or its answer) is lost with it; say so now.
            if not future.done():
                future.set_exception(error)
            return
        if future.done():
            return
        left = deadline - time.monotonic()
        if gone or left <= 0:
            future.set_exception(TimeoutError())
        else:
            asyncio.get_running_loop().call_later(min(left, LATE), self._late, owner, future, deadline)

    def _background(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._checks.add(task)
        task.add_done_callback(self._checks.discard)

    def checks(self) -> list[asyncio.Task[None]]:
        """The late-answer checks running (to stop with the router)."""
        return list(self._checks)
