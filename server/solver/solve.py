"""The solver's entry points: a verdict, par, and a line checked against the engine."""

from __future__ import annotations

import time
from dataclasses import replace

from server.games import Antares, Deal, Game, Move, Options
from server.solver.best_first import best_first
from server.solver.depth_first import depth_first
from server.solver.par import shorten
from server.solver.results import Budget, Result, Solved, Stats, Unknown, Unwinnable
from server.solver.scorpion_search import depth_first_scorpion

#: The part of an Antares budget that best-first search gets before depth-first takes over.
_BEST_FIRST_SHARE = 0.4


class SolverBug(AssertionError):
    """A reported line did not replay to a win through the engine (never expected)."""


def solve(
    variant: type[Game], deal: Deal | int | str, options: Options | None = None, budget: Budget | None = None
) -> Result:
    """Solve the deal's starting position; see :func:`solve_position`."""
    return solve_position(variant.new(deal, options), budget or Budget())


def solve_position(game: Game, budget: Budget, par_seconds: float | None = None) -> Result:
    """Decide whether ``game``'s position can be won, knowing every card.

    :class:`Solved` carries a par line (shortened for up to ``par_seconds``, by default
    a fifth of the budget, at least 0.5 s), checked move by move through the engine.
    :class:`Unwinnable` is a proof; :class:`Unknown` means the budget ran out.
    ``game`` is left unchanged.
    """
    result = _search(game, budget)
    if not isinstance(result, Solved):
        return result
    seconds = par_seconds if par_seconds is not None else max(0.5, budget.seconds / 5)
    start = time.perf_counter()
    line = shorten(game, result.moves, seconds)
    _verify(game, line)
    return Solved(line, result.found, result.stats, par_seconds=time.perf_counter() - start)


def _search(game: Game, budget: Budget) -> Result:
    """The verdict, from the search that suits the game.

    Scorpion's state spaces are small enough to exhaust, fastest depth-first on compact
    positions. For Antares, best-first search finds most wins in a fraction of the
    nodes, and where its estimate leads it astray, depth-first search with a fixed
    move order usually escapes: it gets the rest of the budget.
    """
    if not isinstance(game, Antares):
        return depth_first_scorpion(game, budget)
    first = best_first(game, budget.share(_BEST_FIRST_SHARE))
    if not isinstance(first, Unknown) or first.reason in ("memory", "interrupted"):
        return first
    # The second search gets what the first left, so the whole solve keeps to the budget.
    rest = replace(budget, nodes=max(0, budget.nodes - first.stats.nodes), seconds=budget.seconds - first.stats.seconds)
    second = depth_first(game, rest)
    both = Stats(first.stats.nodes + second.stats.nodes, first.stats.seconds + second.stats.seconds)
    if isinstance(second, Solved):
        return Solved(second.moves, second.found, both)
    if isinstance(second, Unknown):
        return Unknown(second.reason, both)
    return Unwinnable(both)


def _verify(game: Game, line: tuple[Move, ...]) -> None:
    replay = game.copy()
    for move in line:
        replay.apply(move)  # raises IllegalMove if the line is wrong
    if not replay.is_won():
        raise SolverBug("the solver's line does not win")
