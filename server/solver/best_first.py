"""Best-first search over canonical positions: finds Antares wins fast.

Positions wait in a priority queue ordered by :mod:`server.solver.heuristics`, stored
only as their canonical keys (a position is rebuilt from its key when its turn
comes), with one parent link each. The queue empties only when every reachable
position was expanded, so :class:`Unwinnable` stays a proof.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable

from server.games import Antares, Autoplay, Game, Move
from server.solver.heuristics import estimate_function
from server.solver.keys import antares_key, rebuild_antares, rebuild_scorpion, scorpion_key, translate
from server.solver.pruning import POLL_EVERY, forced_home, spent
from server.solver.results import Budget, Result, Solved, Stats, Unknown, Unwinnable

Rebuild = Callable[[bytes, Game], Game]
Parents = dict[bytes, tuple[bytes, Move] | None]


def best_first(game: Game, budget: Budget, estimate: Callable[[Game], int] | None = None) -> Result:
    """Search from ``game``'s position (left unchanged); the line found is legal in ``game``.
    ``estimate`` orders the queue (the variant's default estimate if None)."""
    key_of, rebuild = (antares_key, rebuild_antares) if isinstance(game, Antares) else (scorpion_key, rebuild_scorpion)
    estimate = estimate or estimate_function(type(game))
    force_home = isinstance(game, Antares) and game.options.autoplay is Autoplay.OFF
    start = budget.clock()
    deadline = start + budget.seconds
    root = key_of(game)
    parents: Parents = {root: None}
    queue = [(estimate(game), 0, root)]
    nodes = 0

    def stats() -> Stats:
        return Stats(nodes, budget.clock() - start)

    if game.is_won():
        return Solved((), 0, stats())
    while queue:
        _, minus_depth, key = heapq.heappop(queue)
        node = rebuild(key, game)
        moves = node.legal_moves()
        if force_home:
            moves = forced_home(node, moves)
        for move in moves:
            node.push(move)
            child = key_of(node)
            if child not in parents:
                parents[child] = (key, move)
                nodes += 1
                if node.is_won():
                    line = _line(parents, child, game, rebuild)
                    return Solved(line, len(line), stats())
                # Ties go to the deeper position: it is further along a line.
                heapq.heappush(queue, (estimate(node), minus_depth - 1, child))
                if nodes % POLL_EVERY == 0:
                    reason = spent(budget, nodes, deadline, len(parents))
                    if reason:
                        return Unknown(reason, stats())
            node.pop()
    return Unwinnable(stats())


def _line(
    parents: dict[bytes, tuple[bytes, Move] | None], key: bytes, game: Game, rebuild: Rebuild
) -> tuple[Move, ...]:
    """The moves from ``game`` to the position ``key``, translated from canonical positions."""
    chain = []
    link = parents[key]
    while link is not None:
        chain.append(link)
        link = parents[link[0]]
    real = game.copy()
    line = []
    for parent, move in reversed(chain):
        real_move = translate(move, rebuild(parent, game), real)
        real.push(real_move)
        line.append(real_move)
    return tuple(line)
