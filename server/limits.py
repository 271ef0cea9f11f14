"""Per-connection rate limiting: a token bucket, and a count of offences."""

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

    def take(self, now: float) -> bool:
        """Spend one token if there is one (refilling for the time since the last call)."""
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens >= 1:
            self.tokens -= 1
            return True
        return False


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
