"""A deliberately naive exhaustive search: the second opinion on every Unwinnable verdict.

It shares nothing with :mod:`server.solver` but the rules engine: the engine's own
``legal_moves``, ``push`` and ``pop``, a plain depth-first walk, and no pruning at all
beyond exact duplicates (the same cards on the same piles in the same order, the
same face-down counts). No canonical keys, no interchangeable piles, no forced moves,
no compact positions: a bug in any of those cannot hide behind itself here.
"""

from __future__ import annotations

from dataclasses import dataclass

from server.games import Game


@dataclass(frozen=True, slots=True)
class NaiveVerdict:
    """``won``: a winning line exists; ``positions``: distinct exact positions visited."""

    won: bool
    positions: int


def _exact(game: Game) -> tuple[tuple[int, ...], ...]:
    return (tuple(game.hidden), *(tuple(pile) for pile in game.piles))


def naive_search(game: Game, max_positions: int) -> NaiveVerdict | None:
    """Walk every position reachable from ``game`` (left unchanged); None if there are
    more than ``max_positions``."""
    walker = game.copy(history=False)
    if walker.is_won():
        return NaiveVerdict(True, 1)
    seen = {_exact(walker)}
    stack = [iter(walker.legal_moves())]
    depth = 0
    while stack:
        move = next(stack[-1], None)
        if move is None:
            stack.pop()
            if depth:
                walker.pop()
                depth -= 1
            continue
        walker.push(move)
        position = _exact(walker)
        if position in seen:
            walker.pop()
            continue
        if walker.is_won():
            return NaiveVerdict(True, len(seen) + 1)
        seen.add(position)
        if len(seen) > max_positions:
            return None
        depth += 1
        stack.append(iter(walker.legal_moves()))
    return NaiveVerdict(False, len(seen))
