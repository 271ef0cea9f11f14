"""What a solve returns, and the budget it may spend."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Final

from server.games import Move

#: What one stored position costs at most, measured by ``python -m bench.solver_speed`` (its
#: table's peak, while it doubles, included): in a Scorpion search about 75 bytes (its C
#: core's table, where a position after the deal takes a 16-byte slot; the Python loop's set
#: takes about 130), about 400 in an Antares search, whose scans also keep positions waiting
#: in their queues.
BYTES_PER_POSITION: Final = {"scorpion": 75, "antares": 400}


@dataclass(frozen=True, slots=True)
class Budget:
    """Limits of one solve. Whichever runs out first ends the search with :class:`Unknown`.

    ``seconds`` is the budget that matters; ``nodes`` is a cap only when asked for
    (None, the default, means no node cap: the time budget is never cut short by it).
    ``max_positions`` caps the transposition tables, which is what memory limits: a
    stored position costs about :data:`BYTES_PER_POSITION` bytes, so the default cap
    of 16 million positions is about 1.2 GB in Scorpion (6 GB in Antares), more than
    10 s of search reaches (about 13 million and 300,000 positions).
    ``interrupt`` is polled every few thousand nodes; returning True stops the search.
    ``clock`` tells the time for ``seconds``.
    """

    nodes: int | None = None
    seconds: float = 10.0
    max_positions: int = 16_000_000
    interrupt: Callable[[], bool] | None = field(default=None, compare=False)
    #: What ``seconds`` are counted on, and :class:`Stats` too: wall-clock time by default;
    #: ``time.process_time`` counts only this process's CPU time, which is what "10 s on
    #: one core" means on a machine shared with other work (the surveys use it).
    clock: Callable[[], float] = field(default=time.perf_counter, compare=False)

    def share(self, fraction: float) -> Budget:
        """A budget of ``fraction`` of these nodes and seconds, with the same memory cap."""
        nodes = None if self.nodes is None else int(self.nodes * fraction)
        return replace(self, nodes=nodes, seconds=self.seconds * fraction)


@dataclass(frozen=True, slots=True)
class Stats:
    """Work done by the search to its verdict: positions reached and seconds (on the budget's clock)."""

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
