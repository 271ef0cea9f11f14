"""Per-connection rate limiting: a token bucket charged by cost, and a count of offences."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class TokenBucket:
    """``rate`` requests a second on average, bursts of up to ``burst``."""

    rate: float
    burst: float
    tokens: float = field(init=False)
    stamp: float = field(default=0.0, init=False)

    def __post_init__(self) -> None:
        self.tokens = self.burst

    def take(self, now: float, cost: float = 1.0) -> bool:
        """Spend ``cost`` tokens if there are that many (refilling for the time since the last
        call). Costly requests (a long replay) cost more than a move."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= cost:
            self.tokens -= cost
            return True
        return False

    def full(self, now: float) -> bool:
        """Whether the bucket would be full at ``now``: nothing spent is still owed."""
        return self.tokens + (now - self.stamp) * self.rate >= self.burst

    def charge(self, cost: float) -> None:
        """Spend ``cost`` more tokens after the fact (the bucket may go into debt: the
        connection then waits until it refills)."""
        self.tokens -= cost


@dataclass(slots=True)
class Offences:
    """Bad frames and rate-limited requests within a sliding window. Past ``limit`` of them
    within ``window`` seconds, the connection is abusive and gets closed."""

    limit: int
    window: float
    times: list[float] = field(default_factory=list)

    def record(self, now: float) -> bool:
        """Count one offence; True when the connection is now over the limit."""
        self.times = [t for t in self.times if now - t < self.window]
        self.times.append(now)
        return len(self.times) > self.limit


@dataclass(slots=True)
class Pacer:
    """Spaces events at least ``interval`` seconds apart: :meth:`delay` says how long the
    caller must wait for its turn (0 when it may go at once) and books that turn."""

    interval: float
    _next: float = 0.0

    def delay(self, now: float) -> float:
        start = max(now, self._next)
        self._next = start + self.interval
        return start - now
