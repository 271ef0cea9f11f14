"""Log lines that clients can cause, rate-limited so that no client can fill the disk.

A :class:`LogLimiter` writes at most one line per ``interval`` seconds for each *kind*
(what went wrong, as the caller names it, such as ``"PlayMove/KeyError"``), and at most
``burst`` lines at ``rate`` a second over all kinds together. Lines held back are
counted, and the next line written for that kind says how many there were, so nothing is
lost from view but the repetition.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(slots=True)
class _Kind:
    """What a limiter remembers of one kind: its last line's time, and lines held back since."""

    last: float | None = None
    held: int = 0


class LogLimiter:
    """Rate-limited logging through ``logger``; see the module's docstring.

    ``max_kinds`` bounds the memory kept per kind: past it, kinds with nothing held back
    and no line for an interval are forgotten, and if that frees none, new kinds share one
    budget (``"other"``). ``clock`` gives the time in seconds (monotonic).
    """

    def __init__(
        self,
        logger: logging.Logger,
        interval: float = 10.0,
        rate: float = 1.0,
        burst: float = 5.0,
        max_kinds: int = 256,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.logger = logger
        self.interval = interval
        self.rate = rate
        self.burst = burst
        self.max_kinds = max_kinds
        self.clock = clock
        self._tokens = burst
        self._stamp = clock()
        self._kinds: dict[str, _Kind] = {}

    def exception(self, kind: str, message: str, *args: object) -> bool:
        """Log ``message % args`` at ERROR with the exception being handled (its traceback);
        True if the line was written, False if it was held back."""
        return self.log(logging.ERROR, kind, message, *args, exc_info=True)

    def log(self, level: int, kind: str, message: str, *args: object, exc_info: bool = False) -> bool:
        """Log ``message % args`` at ``level`` unless ``kind`` had a line less than an
        interval ago or the overall budget is spent; True if the line was written."""
        if not self.logger.isEnabledFor(level):
            return False
        held = self.admit(kind)
        if held is None:
            return False
        if held:
            message += " (%d more like it held back)"
            args = (*args, held)
        self.logger.log(level, message, *args, exc_info=exc_info)
        return True

    def admit(self, kind: str) -> int | None:
        """Whether a line of ``kind`` may be written now: how many were held back since its
        last one (it is written), or None (held back, and counted)."""
        now = self.clock()
        state = self._state(kind, now)
        if (state.last is not None and now - state.last < self.interval) or not self._take(now):
            state.held += 1
            return None
        held, state.last, state.held = state.held, now, 0
        return held

    def _take(self, now: float) -> bool:
        self._tokens = min(self.burst, self._tokens + (now - self._stamp) * self.rate)
        self._stamp = now
        if self._tokens >= 1:
            self._tokens -= 1
            return True
        return False

    def _state(self, kind: str, now: float) -> _Kind:
        """What is remembered of ``kind`` (of ``"other"`` when no more kinds fit)."""
        state = self._kinds.get(kind)
        if state is not None:
            return state
        if len(self._kinds) >= self.max_kinds:
            for name, old in list(self._kinds.items()):
                if not old.held and (old.last is None or now - old.last >= self.interval):
                    del self._kinds[name]
        if len(self._kinds) >= self.max_kinds:
            kind = "other"
        return self._kinds.setdefault(kind, _Kind())


class LimitedRecords(logging.Filter):
    """A handler's filter for the records of libraries a client can make log (websockets'
    failed handshakes, asyncio's transport errors): each kind (logger, message, exception
    type) passes as a :class:`LogLimiter` would let it, saying how many were held back.
    The server's own records pass untouched: their callers limit them where a client can
    cause them."""

    def __init__(self, limiter: LogLimiter, libraries: tuple[str, ...] = ("websockets", "asyncio")) -> None:
        super().__init__()
        self.limiter, self.libraries = limiter, libraries

    def filter(self, record: logging.LogRecord) -> bool:
        if not record.name.startswith(self.libraries):
            return True
        error = record.exc_info[1] if record.exc_info else None
        held = self.limiter.admit(f"{record.name}:{record.msg}:{type(error).__name__}")
        if held is None:
            return False
        if held:
            record.msg, record.args = f"{record.getMessage()} ({held} more like it held back)", None
        return True
