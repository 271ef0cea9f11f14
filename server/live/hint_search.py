"""Winning-line searches for hints, in solver worker processes, charged to each racer.

A search is CPU work of up to :data:`~server.rooms.hints.HINT_SEARCH_SECONDS`, and as much
again to shorten the line it found, so that following the hints visibly makes progress
(:mod:`server.solver.hint_line`, issue 31): it never runs on the event loop, where it would
hold up every room of the process. Each racer (a room and a
player) has an allowance of search time that refills slowly; a search is charged what it
took, at least :data:`MIN_CHARGE`. A racer out of allowance, or with a search already running,
gets the engine's hints without a new winning line: one player's hints never queue the
workers for everybody else. Without workers (``--hint-workers 0``) hints come from the
engine alone, and from winning lines remembered earlier.
"""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import Executor
from concurrent.futures.process import BrokenProcessPool
from typing import Final

from server.connections.limits import TokenBucket
from server.games import Game, Move
from server.rooms.hints import HINT_SEARCH_SECONDS
from server.solver.winning_hint import search_line

logger = logging.getLogger("server.hints")

#: Seconds of search a racer may spend at once, and the seconds of search a second of time
#: gives back: a few searches in a row (two that take all their time, search and shortening),
#: then about one every ten seconds.
ALLOWANCE: Final = 4 * HINT_SEARCH_SECONDS
REFILL: Final = HINT_SEARCH_SECONDS / 10
#: The least a search is charged (asking costs something even when the answer is quick).
MIN_CHARGE: Final = 0.02
#: Racers whose allowances are kept; past it, full allowances (nothing owed) are forgotten.
KEPT: Final = 10_000


class HintSearch:
    """Searches for winning lines on ``executor`` (solver worker processes), one at a time
    per racer, within each racer's allowance."""

    def __init__(self, executor: Executor, seconds: float = HINT_SEARCH_SECONDS) -> None:
        self._executor = executor
        self._seconds = seconds
        self._allowances: dict[tuple[str, str], TokenBucket] = {}
        self._running: set[tuple[str, str]] = set()

    async def line(self, room: str, player: str, game: Game) -> tuple[Move, ...] | None:
        """A winning line from ``game`` (the racer's position in ``room``), or None: none found
        in time, the racer's allowance is spent, or a search of theirs is already running."""
        racer = (room, player)
        now = time.monotonic()
        allowance = self._allowance(racer)
        if racer in self._running or not allowance.take(now, MIN_CHARGE):
            return None
        self._running.add(racer)
        try:
            work = asyncio.get_running_loop().run_in_executor(self._executor, search_line, game, self._seconds)
            line, spent = await asyncio.wait_for(work, 2 * self._seconds + 5.0)
        except (TimeoutError, BrokenProcessPool, RuntimeError) as error:
            # Workers busy past the deadline, or gone (a stopping server): engine hints only.
            logger.debug("hint search for %s in room %s: %r", player, room, error)
            allowance.charge(2 * self._seconds)
            return None
        finally:
            self._running.discard(racer)
        allowance.charge(max(0.0, spent - MIN_CHARGE))
        return line

    def _allowance(self, racer: tuple[str, str]) -> TokenBucket:
        allowance = self._allowances.get(racer)
        if allowance is None:
            if len(self._allowances) >= KEPT:
                now = time.monotonic()
                self._allowances = {key: bucket for key, bucket in self._allowances.items() if not bucket.full(now)}
            allowance = self._allowances[racer] = TokenBucket(REFILL, ALLOWANCE)
        return allowance
