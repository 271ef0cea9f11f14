"""Readiness for ``/readyz``, and draining before a shutdown.

A load balancer stops sending new players to a server whose ``/readyz`` answers 503.
On SIGTERM the server first turns not ready (:meth:`Readiness.start_draining`), waits
``drain`` seconds so the balancer notices (:func:`drain`), then shuts down as before.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

logger = logging.getLogger("server")


class Readiness:
    """Ready once restore is done, while storage answers ``ping`` and the server is not draining.

    ``ping`` raises when storage does not answer (``Store.ping``); None skips that check.
    Call :meth:`__call__` for the reason the server is not ready (None when it is).
    """

    def __init__(self, ping: Callable[[], Awaitable[None]] | None = None) -> None:
        self.ping = ping
        self.restored = False
        self.draining = False

    def start_draining(self) -> None:
        self.draining = True

    async def __call__(self) -> str | None:
        if self.draining:
            return "draining: the server is shutting down"
        if not self.restored:
            return "starting: rooms are being restored"
        if self.ping is not None:
            try:
                await self.ping()
            except Exception as error:
                return f"storage unavailable: {error}"
        return None


async def drain(readiness: Readiness, seconds: float) -> None:
    """Turn not ready, then wait ``seconds`` (open connections keep being served meanwhile)."""
    readiness.start_draining()
    if seconds > 0:
        logger.info("draining: not ready, shutting down in %g s", seconds)
        await asyncio.sleep(seconds)
