"""What a solve returns, and the budget it may spend."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace

from server.games import Move


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits of one solve. Whichever runs out first ends the search with :class:`Unknown`.

    ``max_positions`` caps the transposition table (about 200 bytes a position), so a
    solve never grows past roughly ``max_positions * 200`` bytes. ``interrupt`` is
    polled every few thousand nodes; returning True stops the search.
    """

    nodes: int = 2_000_000
    seconds: float = 10.0
    max_positions: int = 2_000_000
    interrupt: Callable[[], bool] | None = field(default=None, compare=False)

    def share(self, fraction: float) -> Budget:
        """A budget of ``fraction`` of these nodes and seconds, with the same memory cap."""
        return replace(self, nodes=int(self.nodes * fraction), seconds=self.seconds * fraction)


@dataclass(frozen=True, slots=True)
class Stats:
    """Work done by the search to its verdict: positions reached and wall-clock seconds."""

    nodes: int
    seconds: float


@dataclass(frozen=True, slots=True)
class Solved:
    """A winning line from the position solved, each move legal in turn.

    ``moves`` is the par line: a short solution, shortened after the search (not
    proven optimal). ``found`` is the length of the line the search first found.
    """

    moves: tuple[Move, ...]
    found: int
    stats: Stats
    #: Seconds spent shortening the line after the search (not in ``stats``).
    par_seconds: float = 0.0

    @property
    def par(self) -> int:
        return len(self.moves)


@dataclass(frozen=True, slots=True)
class Unwinnable:
    """The search exhausted every position reachable, with sound pruning only."""

    stats: Stats


@dataclass(frozen=True, slots=True)
class Unknown:
    """The budget ran out before a verdict. ``reason`` says which limit: nodes, seconds, memory, interrupted."""

    reason: str
    stats: Stats


Result = Solved | Unwinnable | Unknown
