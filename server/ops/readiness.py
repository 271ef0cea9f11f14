"""Readiness for ``/readyz``, and draining before a shutdown.

A load balancer stops sending new players to a server whose ``/readyz`` answers 503.
On SIGTERM the server first turns not ready (:meth:`Readiness.start_draining`), waits
``drain`` seconds so the balancer notices (:func:`drain`), then shuts down as before.

The gauge ``solitaire_ready`` (:data:`~server.ops.metrics.READY`) says the same as
``/readyz`` without a probe: it is set whenever the state changes (restore done, draining
started) and whenever the check runs (storage answering or not). One server runs per
process; with several, the last change wins.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from server.ops.metrics import READY

logger = logging.getLogger("server")


class Readiness:
    """Ready once restore is done, while storage answers ``ping`` and the server is not draining.

    ``ping`` raises when storage does not answer (``Store.ping``); None skips that check.
    Call :meth:`__call__` for the reason the server is not ready (None when it is).
    """

    def __init__(
        self, ping: Callable[[], Awaitable[None]] | None = None, current: Callable[[], bool] | None = None
    ) -> None:
        self.ping = ping
        #: Whether this node's heartbeat is within its TTL (False: it may be fenced).
        self.current = current
        self._restored = False
        self._draining = False
        #: Whether storage answered the last check (no check yet: restore just read it).
        self._storage_answers = True
        self._publish()

    def mark_restored(self) -> None:
        """The rooms in progress are back: ready, unless something else says otherwise."""
        self._restored = True
        self._publish()

    def start_draining(self) -> None:
        self._draining = True
        self._publish()

    def _publish(self) -> None:
        READY.set(1 if self._state() is None and self._storage_answers else 0)

    def _storage(self, answers: bool) -> None:
        self._storage_answers = answers
        self._publish()

    def _state(self) -> str | None:
        if self._draining:
            return "draining: the server is shutting down"
        if not self._restored:
            return "starting: rooms are being restored"
        if self.current is not None and not self.current():
            return "fenced: no heartbeat written within the node TTL; the other nodes may have taken its rooms"
        return None

    async def __call__(self) -> str | None:
        reason = self._state()
        if reason is not None:
            self._publish()
            return reason
        if self.ping is None:
            self._storage(True)
            return None
        try:
            await self.ping()
        except Exception as error:
            self._storage(False)
            return f"storage unavailable: {error}"
        except asyncio.CancelledError:
            # /readyz gave up waiting (and answers 503): a ping without an answer counts as failed.
            self._storage(False)
            raise
        self._storage(True)
        # Draining may have started during the ping.
        return self._state()


async def drain(readiness: Readiness, seconds: float) -> None:
    """Turn not ready, then wait ``seconds`` (open connections keep being served meanwhile)."""
    readiness.start_draining()
    if seconds > 0:
        logger.info("draining: not ready, shutting down in %g s", seconds)
        await asyncio.sleep(seconds)
