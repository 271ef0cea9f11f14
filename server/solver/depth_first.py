"""Depth-first search on the engine's own positions: a second opinion for Antares.

Best-first search can sink into a region its estimate likes and run out of
budget there; plain depth-first search with a fixed move order escapes such traps
on many of those deals (at the price of long lines, which par then shortens). The
two share the transposition-table soundness argument of :mod:`server.solver.keys`.
"""

from __future__ import annotations

from collections.abc import Iterator

from server.games import Antares, Autoplay, Game, Move
from server.solver.keys import key_function
from server.solver.pruning import POLL_EVERY, forced_home, spent
from server.solver.results import Budget, Result, Solved, Stats, Unknown, Unwinnable


def _antares_order(game: Game, moves: list[Move]) -> list[Move]:
    """Foundation moves, then moves out of cells, builds, emptying moves, moves to empty
    piles, moves into cells, and last, moves of cards already built where they lie."""
    piles = game.piles

    def rank(move: Move) -> int:
        if move.target >= Antares.FOUNDATION:
            return 0
        if move.source >= 8:
            return 1
        if move.target >= 8:
            return 5
        if not piles[move.target]:
            return 4
        source = piles[move.source]
        lead_at = len(source) - move.count
        if not lead_at:
            return 3
        under, lead = source[lead_at - 1], source[lead_at]
        built = under % 13 == lead % 13 + 1 and (
            under // 13 == lead // 13 if move.source < 4 else (under >= 26) != (lead >= 26)
        )
        return 6 if built else 2

    return sorted(moves, key=rank)


def depth_first(game: Game, budget: Budget) -> Result:
    """Search from ``game``'s position for a winning line; ``game`` is left as it was."""
    key_of = key_function(type(game))
    force_home = isinstance(game, Antares) and game.options.autoplay is Autoplay.OFF
    start = budget.clock()
    deadline = start + budget.seconds
    seen = {key_of(game)}
    path: list[Move] = []
    nodes = 0

    def children() -> Iterator[Move]:
        moves = game.legal_moves()
        if force_home:
            moves = forced_home(game, moves)
        return iter(_antares_order(game, moves))

    def stats() -> Stats:
        return Stats(nodes, budget.clock() - start)

    if game.is_won():
        return Solved((), 0, stats())
    stack = [children()]
    try:
        while stack:
            move = next(stack[-1], None)
            if move is None:
                stack.pop()
                if path:
                    path.pop()
                    game.pop()
                continue
            game.push(move)
            key = key_of(game)
            if key in seen:
                game.pop()
                continue
            seen.add(key)
            nodes += 1
            path.append(move)
            if game.is_won():
                return Solved(tuple(path), len(path), stats())
            if nodes % POLL_EVERY == 0:
                reason = spent(budget, nodes, deadline, len(seen))
                if reason:
                    return Unknown(reason, stats())
            stack.append(children())
        return Unwinnable(stats())
    finally:
        for _ in path:
            game.pop()
