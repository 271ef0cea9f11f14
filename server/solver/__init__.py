"""The solver: certified-winnable deals, par and winning hints (pure code, no I/O).

``solve(variant, deal, options, budget)`` answers :class:`Solved` (with a par line
that replays through the engine to a win), :class:`Unwinnable` (a proof: the search
exhausted every position with sound pruning only) or :class:`Unknown` (budget spent).
"""

from server.solver.results import Budget, Result, Solved, Stats, Unknown, Unwinnable
from server.solver.solve import SolverBug, solve, solve_position

__all__ = ["Budget", "Result", "Solved", "SolverBug", "Stats", "Unknown", "Unwinnable", "solve", "solve_position"]
