"""The solver's entry points: a verdict, par, and a line checked against the engine."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from functools import partial

from server.games import Antares, Deal, Game, Move, Options
from server.solver.best_first import best_first
from server.solver.depth_first import depth_first
from server.solver.heuristics import HOMEWARD, TIDY, antares_estimate
from server.solver.par import shorten
from server.solver.results import Budget, Result, Solved, Stats, Unknown, Unwinnable
from server.solver.scorpion_search import depth_first_scorpion

#: The parts of an Antares budget for best-first search with its two weightings (the
#: second share is of what the first left); depth-first search gets the rest.
_HOMEWARD_SHARE = 0.35
_TIDY_SHARE = 0.5


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
    """The verdict, from the searches that suit the game.

    Scorpion's state spaces are small enough to exhaust, fastest depth-first on compact
    positions. For Antares, best-first search finds most wins in a fraction of the nodes;
    where its estimate leads it astray, the same search with other weights often gets
    there, and depth-first search with a fixed move order escapes many of the rest. Each
    gets a share of the budget; any of them that finishes gives the verdict.
    """
    if not isinstance(game, Antares):
        return depth_first_scorpion(game, budget)
    phases: list[tuple[float, Callable[[Game, Budget], Result]]] = [
        (_HOMEWARD_SHARE, lambda g, b: best_first(g, b, partial(antares_estimate, weights=HOMEWARD))),
        (_TIDY_SHARE, lambda g, b: best_first(g, b, partial(antares_estimate, weights=TIDY))),
        (1.0, depth_first),
    ]
    nodes, seconds = 0, 0.0
    result: Result = Unknown("nodes", Stats(0, 0.0))
    for share, search in phases:
        # Each phase gets its share of what the earlier ones left, so the solve keeps to the budget.
        nodes_left = None if budget.nodes is None else max(0, budget.nodes - nodes)
        left = replace(budget, nodes=nodes_left, seconds=budget.seconds - seconds)
        result = search(game, left.share(share))
        nodes, seconds = nodes + result.stats.nodes, seconds + result.stats.seconds
        if not isinstance(result, Unknown) or result.reason in ("memory", "interrupted"):
            break
    total = Stats(nodes, seconds)
    if isinstance(result, Solved):
        return Solved(result.moves, result.found, total)
    if isinstance(result, Unknown):
        return Unknown(result.reason, total)
    return Unwinnable(total)


def _verify(game: Game, line: tuple[Move, ...]) -> None:
    replay = game.copy()
    for move in line:
        replay.apply(move)  # raises IllegalMove if the line is wrong
    if not replay.is_won():
        raise SolverBug("the solver's line does not win")
