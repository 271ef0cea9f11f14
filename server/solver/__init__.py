"""The solver: certified-winnable deals, par and winning hints (pure code, no I/O).

``solve(variant, deal, options, budget, par_seconds=None)`` answers :class:`Solved` (with a par line
that replays through the engine to a win), :class:`Unwinnable` (a proof: the search
exhausted every position with sound pruning only) or :class:`Unknown` (budget spent).
Scorpion is searched depth-first on compact positions (:mod:`.scorpion_search`), Antares
by interleaved scans that find the obvious lines first (:mod:`.antares_search`).
Scorpion's search runs compiled by mypyc where it was built (:mod:`.compiled`).
"""

from server.solver.compiled import prefer_fresh

prefer_fresh()  # before anything imports the compiled modules

from server.solver.results import Budget, Result, Solved, Stats, Unknown, Unwinnable  # noqa: E402
from server.solver.solve import SolverBug, solve, solve_position  # noqa: E402

__all__ = ["Budget", "Result", "Solved", "SolverBug", "Stats", "Unknown", "Unwinnable", "solve", "solve_position"]
