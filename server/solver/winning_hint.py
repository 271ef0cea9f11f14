"""Winning hints: the next move of a winning line from the player's position.

Only where the player sees every card (Antares always; Scorpion once the stock is
dealt and no card is face down): a hint computed from hidden cards would tell the
player what they are. Elsewhere the engine's visible-information hints apply.

The line the hints follow is not the search's first-found line, which wanders (cards back
and forth, long stretches where nothing goes home: issue 31), but that line shortened by
:func:`server.solver.hint_line.hint_line` within a budget of its own, as long as the search's.
"""

from __future__ import annotations

import time

from server.games import Game, Move
from server.solver.hint_line import hint_line
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
        budget, the position lost, or cards still hidden (see :func:`sees_everything`).
        Searches here when the line in memory does not reach ``game`` (for tools and tests;
        the server searches in worker processes: :meth:`needs_search`, :meth:`learn`)."""
        if self.needs_search(game):
            line = find_line(game, self._budget)
            if line is None:
                return None
            self.learn(game, line)
        return self.remembered(game)

    def remembered(self, game: Game) -> Move | None:
        """The next move of the winning line in memory from ``game``, if the line reaches it."""
        if not sees_everything(game) or game.is_won():
            return None
        entry = self._line.get(key_function(type(game))(game))
        if entry is None:
            return None
        position, move = entry
        return translate(move, position, game)

    def needs_search(self, game: Game) -> bool:
        """Whether a search could add a winning move for ``game``: every card is visible, the
        game is not won, and the line in memory does not reach it."""
        if not sees_everything(game) or game.is_won():
            return False
        return key_function(type(game))(game) not in self._line

    def learn(self, game: Game, line: tuple[Move, ...]) -> None:
        """Remember ``line``, a winning line from ``game`` (found by :func:`search_line`)."""
        self._remember(game, line)

    def _remember(self, game: Game, line: tuple[Move, ...]) -> None:
        key_of = key_function(type(game))
        self._line.clear()
        walker = game.copy(history=False)
        for move in line:
            self._line[key_of(walker)] = (walker.copy(history=False), move)
            walker.push(move)


def find_line(game: Game, budget: Budget) -> tuple[Move, ...] | None:
    """A winning line from ``game`` for hints, or None (none found within ``budget``, or
    lost): the search's first line, found within ``budget``, then shortened by
    :func:`~server.solver.hint_line.hint_line` for up to ``budget.seconds`` more (it stops
    sooner when nothing shortens the line any more)."""
    result = solve_position(game, budget, par_seconds=0.0)
    if not isinstance(result, Solved):
        return None
    return hint_line(game, result.moves, budget.seconds, budget.clock)


def search_line(game: Game, seconds: float) -> tuple[tuple[Move, ...] | None, float]:
    """A winning line from ``game`` found within ``seconds`` and shortened within as many
    more (:func:`find_line`), None when none was found or the position is lost, and the
    seconds it all took. Seconds of this process's CPU: a solver worker process runs it (it is
    module level for that), so a busy machine makes a hint slower, never worse, and a racer is
    charged what the search cost."""
    start = time.process_time()
    line = find_line(game, Budget(seconds=seconds, clock=time.process_time))
    return line, time.process_time() - start
