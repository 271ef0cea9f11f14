"""This node's room leases: taken before a room is loaded or created, renewed while it lives,
given up when it is let go.

A lease counts as valid here until ``ttl`` after the renewal that last confirmed it was
*sent* (monotonic clock, minus a margin), so a node paused past its lease (a GC pause,
SIGSTOP) finds on waking that it no longer knows it is the owner, and asks Redis before
acting: :meth:`RoomLeases.confirm`. Redis itself fences the writes (the commit script checks
the lease first), so even a node that guessed wrong could write nothing.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

from server.ops.metrics import LEASES_LOST, ROOMS_TAKEN_OVER
from server.ops.stopping import stop_requested, stop_tasks
from server.storage.connection import StoreUnavailable
from server.storage.nodes import Claim, NodeStore
from server.storage.rooms import Fenced

logger = logging.getLogger("server.nodes")

#: A lease counts as valid here for this share of its TTL after it was last confirmed.
_SAFE_SHARE: Final = 0.8
#: Room lease renewals a TTL, each costing Redis a command a room. They are spaced from one's
#: sending to the next's, and one that failed is followed at once if its interval is over:
#: after a renewal that failed fast, the next comes two thirds of a TTL after the last that
#: held (within :data:`_SAFE_SHARE` here, and within the lease in Redis); after one that timed
#: out (:data:`server.storage.connection.REPLY_TIMEOUT`), as soon as it gave up.
RENEWALS_PER_TTL: Final = 3


@dataclass(slots=True)
class _Held:
    lease: str
    valid_until: float  # monotonic seconds


class RoomLeases:
    """The owner leases ``node`` holds, with a time to live of ``ttl`` seconds."""

    def __init__(self, store: NodeStore, node: str, ttl: float) -> None:
        self.store = store
        self.node = node
        self.ttl = ttl
        self._held: dict[str, _Held] = {}
        self._claiming: dict[str, int] = {}  # claims awaiting Redis's answer, by room

    @property
    def _ttl_ms(self) -> int:
        return int(self.ttl * 1000)

    def _deadline(self, sent: float) -> float:
        return sent + self.ttl * _SAFE_SHARE

    async def claim(self, code: str, must_exist: bool = True) -> Claim:
        """Take room ``code`` if nobody owns it (see :meth:`NodeStore.claim`)."""
        sent = time.monotonic()
        self._claiming[code] = self._claiming.get(code, 0) + 1
        try:
            claim = await self.store.claim(code, self.node, self._ttl_ms, must_exist)
        finally:
            left = self._claiming.pop(code) - 1
            if left:
                self._claiming[code] = left
        if claim.lease is not None:
            self._held[code] = _Held(claim.lease, self._deadline(sent))
            if not claim.lease.endswith(":1"):
                # Not the room's first lease: its earlier owner died, was paused past its
                # lease, or let it go (a drain).
                ROOMS_TAKEN_OVER.labels("expired").inc()
        return claim

    async def take_over(self, claim: Claim, code: str) -> bool:
        """Take room ``code`` from ``claim``'s holder, known dead (or this node in an earlier
        life, with the same id); True if taken."""
        sent = time.monotonic()
        lease = await self.store.steal(code, claim.held, self.node, self._ttl_ms)
        if lease is None:
            return False
        logger.warning("room %s taken over from %s", code, claim.held)
        ROOMS_TAKEN_OVER.labels("dead").inc()
        self._held[code] = _Held(lease, self._deadline(sent))
        return True

    def lease(self, code: str) -> str:
        """The lease this node holds on ``code`` ("" if none: the commit is then fenced)."""
        held = self._held.get(code)
        return "" if held is None else held.lease

    def holds(self, code: str) -> bool:
        return code in self._held

    def in_hand(self, code: str) -> bool:
        """Whether this process holds room ``code``'s lease or is claiming it: a lease in
        Redis under this node's id is then this process's own, not one left by this node
        before a restart, and must not be taken over."""
        return code in self._held or code in self._claiming

    def __len__(self) -> int:
        """How many room leases this node holds."""
        return len(self._held)

    async def confirm(self, code: str) -> None:
        """Return once this node's lease on ``code`` is known valid; raise :class:`Fenced` if
        it is lost and :class:`StoreUnavailable` if Redis cannot say."""
        held = self._held.get(code)
        if held is None:
            raise Fenced(f"room {code}: this node holds no lease on it")
        if time.monotonic() < held.valid_until:
            return
        sent = time.monotonic()
        renewed = await self.store.renew({code: held.lease}, self._ttl_ms)
        if not renewed.get(code):
            self._held.pop(code, None)
            LEASES_LOST.inc()
            raise Fenced(f"room {code}: lease {held.lease} was taken over")
        held.valid_until = self._deadline(sent)

    async def release(self, code: str) -> None:
        """Give room ``code`` up (drain, let go): another node may take it at once."""
        held = self._held.pop(code, None)
        if held is not None:
            try:
                await self.store.release(code, held.lease)
            except StoreUnavailable as error:
                logger.warning("room %s: lease not released (it expires by itself): %s", code, error)

    def forget(self, code: str) -> None:
        self._held.pop(code, None)

    async def renew_all(self) -> list[str]:
        """Renew every lease; return the rooms whose lease was lost (forgotten here)."""
        if not self._held:
            return []
        sent = time.monotonic()
        leases = {code: held.lease for code, held in self._held.items()}
        renewed = await self.store.renew(leases, self._ttl_ms)
        lost = []
        for code, ok in renewed.items():
            held = self._held.get(code)
            if held is None or held.lease != leases[code]:
                continue  # released or retaken meanwhile
            if ok:
                held.valid_until = self._deadline(sent)
            else:
                lost.append(code)
                del self._held[code]
                LEASES_LOST.inc()
        return lost

    async def keep(self, on_lost: Callable[[str], Awaitable[None]]) -> None:
        """Renew every lease :data:`RENEWALS_PER_TTL` times a TTL, forever; ``on_lost`` for
        each one lost."""
        sent = time.monotonic()
        while True:
            await asyncio.sleep(max(0.0, sent + self.ttl / RENEWALS_PER_TTL - time.monotonic()))
            stop_requested()
            sent = time.monotonic()
            try:
                lost = await self.renew_all()
            except StoreUnavailable as error:
                logger.warning("room leases not renewed: %s", error)
                continue
            for code in lost:
                logger.warning("room %s: lease lost to another node", code)
                await on_lost(code)


async def while_holding(store: NodeStore, name: str, node: str, ttl: float, job: Callable[[], Awaitable[None]]) -> None:
    """Run ``job`` (a loop) only while this node holds the service-wide lease ``name``: one
    node of the service runs it; when that node dies, another takes over within ``ttl``."""
    task: asyncio.Task[None] | None = None
    try:
        while True:
            stop_requested()
            try:
                held = await store.hold(name, node, int(ttl * 1000))
            except StoreUnavailable as error:
                logger.warning("lease %s: %s", name, error)
                held = False
            if held and task is None:
                logger.info("this node runs %s", name)
                task = asyncio.ensure_future(job())
            elif not held and task is not None:
                task.cancel()
                task = None
            await asyncio.sleep(ttl / 4)
    finally:
        if task is not None:
            await stop_tasks([task])
        with contextlib.suppress(StoreUnavailable):
            await store.let_go(name, node)
