"""Forwarded requests waiting for their owner's answer (a :class:`Done`), by sequence number.

An answer in time costs a dictionary entry: no timer of its own. One timer for them all goes
off when the oldest unanswered request has waited :data:`LATE` seconds; each answer late by
then is checked every half second: it fails at once when its owner is seen to stop beating
(or Redis cannot say), and after the timeout in any case, so a client never waits on a dead
node.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Coroutine
from typing import Any, Final, NamedTuple

from server.cluster.cluster import Cluster
from server.cluster.inbox import Done
from server.ops.metrics import FORWARD_SECONDS, FORWARDED_SENT
from server.storage.connection import StoreUnavailable

#: Seconds an answer may be late before its owner's heartbeat is checked.
LATE: Final = 0.5
#: The forwarded requests by outcome, bound once: ``labels()`` takes a lock and builds its key
#: on every call, and every forwarded request is counted.
_SENT: Final = {False: FORWARDED_SENT.labels("ok"), True: FORWARDED_SENT.labels("moved")}
_TIMED_OUT: Final = FORWARDED_SENT.labels("timeout")


class _Awaited(NamedTuple):
    future: asyncio.Future[Done]
    owner: str
    deadline: float  # on the loop's clock: the answer fails with TimeoutError past it


class Answers:
    """The answers this node waits for from other nodes."""

    def __init__(self, cluster: Cluster, timeout: float) -> None:
        """``timeout``: seconds an answer may take at most."""
        self._cluster = cluster
        self._timeout = timeout
        self._pending: dict[int, asyncio.Future[Done]] = {}
        #: The answers awaited whose lateness is not being checked yet, oldest first (a dict
        #: keeps the order they were awaited in, which is the order they fall late in).
        self._unchecked: dict[int, _Awaited] = {}
        self._sweep: asyncio.TimerHandle | None = None
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
        Redis cannot say whether it beats. Counted (``solitaire_forwarded_requests_sent``)
        and, answered, timed (``solitaire_forwarded_request_seconds``)."""
        loop = future.get_loop()
        now, sent = loop.time(), time.perf_counter()
        self._unchecked[seq] = _Awaited(future, owner, now + self._timeout)
        if self._sweep is None:
            self._sweep = loop.call_at(now + LATE, self._find_late)
        try:
            done = await future
        except TimeoutError:
            _TIMED_OUT.inc()
            raise
        else:
            _SENT[done.moved].inc()
            FORWARD_SECONDS.observe(time.perf_counter() - sent)
            return done
        finally:
            self._pending.pop(seq, None)
            self._unchecked.pop(seq, None)

    def _find_late(self) -> None:
        """Check the answers late by now; come back when the next one falls late."""
        self._sweep = None
        now = asyncio.get_running_loop().time()
        unchecked = self._unchecked
        while unchecked:
            seq, awaited = next(iter(unchecked.items()))
            late_at = awaited.deadline - self._timeout + LATE
            if late_at > now:
                self._sweep = awaited.future.get_loop().call_at(late_at, self._find_late)
                return
            del unchecked[seq]
            self._late(awaited.owner, awaited.future, awaited.deadline)

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
        left = deadline - asyncio.get_running_loop().time()
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
