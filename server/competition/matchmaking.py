"""Quick match: a waiting line per game that forms races of 2 to 4 players. Sans-I/O.

Who races whom:

- A race forms around the player who has waited longest, with the players nearest
  to them in rating, as soon as four are waiting, or once that player has waited
  ``gather_seconds`` (so that two players wait a few seconds for company, then race).
- A partner must be within a rating window around the longest waiter's rating; the
  window starts at ``window`` points and widens by ``widen_per_second`` for every
  second they have waited, so nobody waits forever when the line is short.

Times are seconds on any monotonic clock, passed in by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Waiting:
    player: str
    name: str
    rating: float
    since: float


@dataclass(slots=True)
class MatchQueue:
    """The quick-match line of one game."""

    gather_seconds: float = 3.0
    max_players: int = 4
    window: float = 200.0
    widen_per_second: float = 100.0
    _waiting: dict[str, Waiting] = field(default_factory=dict)

    def join(self, player: str, name: str, rating: float, now: float) -> bool:
        """Put ``player`` in line; False if they already are (their place is kept)."""
        if player in self._waiting:
            return False
        self._waiting[player] = Waiting(player, name, rating, now)
        return True

    def leave(self, player: str) -> bool:
        """Take ``player`` out of the line; False if they were not in it."""
        return self._waiting.pop(player, None) is not None

    def __contains__(self, player: object) -> bool:
        return player in self._waiting

    def __len__(self) -> int:
        return len(self._waiting)

    def form(self, now: float) -> list[list[Waiting]]:
        """The races that can start now, each a list of 2 to 4 players (taken out of line)."""
        races: list[list[Waiting]] = []
        while True:
            race = self._next_race(now)
            if race is None:
                return races
            for waiting in race:
                del self._waiting[waiting.player]
            races.append(race)

    def _next_race(self, now: float) -> list[Waiting] | None:
        if len(self._waiting) < 2:
            return None
        first = min(self._waiting.values(), key=lambda w: (w.since, w.player))
        waited = now - first.since
        reach = self.window + self.widen_per_second * waited
        others = sorted(
            (w for w in self._waiting.values() if w is not first and abs(w.rating - first.rating) <= reach),
            key=lambda w: (abs(w.rating - first.rating), w.since, w.player),
        )
        if not others:
            return None
        if len(others) + 1 < self.max_players and waited < self.gather_seconds:
            return None  # wait a little for more players
        return [first, *others[: self.max_players - 1]]
