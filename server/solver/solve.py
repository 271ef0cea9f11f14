"""The solver's entry points: a verdict, par, and a line checked against the engine."""

from __future__ import annotations

from server.games import Antares, Deal, Game, Move, Options
from server.solver.antares_par import shorten_antares
from server.solver.antares_search import search_antares, short_line
from server.solver.par import shorten
from server.solver.results import Budget, Result, Solved
from server.solver.scorpion_search import depth_first_scorpion


class SolverBug(AssertionError):
    """A reported line did not replay to a win through the engine (never expected)."""


def solve(
    variant: type[Game],
    deal: Deal | int | str,
    options: Options | None = None,
    budget: Budget | None = None,
    par_seconds: float | None = None,
) -> Result:
    """Solve the deal's starting position; see :func:`solve_position`."""
    return solve_position(variant.new(deal, options), budget or Budget(), par_seconds)


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
    start = budget.clock()
    line = result.moves
    if isinstance(game, Antares):
        # Half the time on a search for short lines, the rest on shortcuts along the shorter one.
        short = short_line(game, seconds / 2, budget.clock)
        if short is not None and len(short) < len(line):
            line = short
        line = shorten_antares(game, line, seconds - (budget.clock() - start), clock=budget.clock)
    else:
        line = shorten(game, line, seconds, clock=budget.clock)
    _verify(game, line)
    return Solved(line, result.found, result.stats, par_seconds=budget.clock() - start)


def _search(game: Game, budget: Budget) -> Result:
    """The verdict, from the search that suits the game: Scorpion's state spaces are
    small enough to exhaust depth-first on compact positions; Antares needs a search
    that finds the obvious lines first (:mod:`server.solver.antares_search`)."""
    if isinstance(game, Antares):
        return search_antares(game, budget)
    return depth_first_scorpion(game, budget)


def _verify(game: Game, line: tuple[Move, ...]) -> None:
    replay = game.copy()
    for move in line:
        replay.apply(move)  # raises IllegalMove if the line is wrong
    if not replay.is_won():
        raise SolverBug("the solver's line does not win")
