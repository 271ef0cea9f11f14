"""Winning hints: the next move of a winning line from the player's position.

Only where the player sees every card (Antares always; Scorpion once the stock is
dealt and no card is face down): a hint computed from hidden cards would tell the
player what they are. Elsewhere the engine's visible-information hints apply.
"""

from __future__ import annotations

from server.games import Game, Move
from server.solver.keys import key_function, translate
from server.solver.results import Budget, Solved
from server.solver.solve import solve_position


def sees_everything(game: Game) -> bool:
    """True when no card of the position is face down (the Scorpion stock counts as face down)."""
    return not any(game.hidden)


class WinningHints:
    """Answers "what next?" for one player's game, reusing the last winning line.

    While the player follows the line (or reaches any position on it, up to
    interchangeable piles), answers come from memory; off the line, the solver runs
    again from the new position within ``budget``.
    """

    def __init__(self, budget: Budget | None = None) -> None:
        self._budget = budget or Budget(seconds=2.0)
        self._line: dict[bytes, tuple[Game, Move]] = {}

    def next_move(self, game: Game) -> Move | None:
        """The next move of a winning line, or None: game won, no win found within the
        budget, the position lost, or cards still hidden (see :func:`sees_everything`)."""
        if not sees_everything(game) or game.is_won():
            return None
        key_of = key_function(type(game))
        entry = self._line.get(key_of(game))
        if entry is None:
            result = solve_position(game, self._budget, par_seconds=0.0)
            if not isinstance(result, Solved):
                return None
            self._remember(game, result.moves)
            entry = self._line[key_of(game)]
        position, move = entry
        return translate(move, position, game)

    def _remember(self, game: Game, line: tuple[Move, ...]) -> None:
        key_of = key_function(type(game))
        self._line.clear()
        walker = game.copy(history=False)
        for move in line:
            self._line[key_of(walker)] = (walker.copy(history=False), move)
            walker.push(move)
