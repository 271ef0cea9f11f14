"""Sound pruning and budget checks shared by the searches."""

from __future__ import annotations

from server.games import Antares, Game, Move
from server.solver.results import Budget

#: How many nodes pass between two looks at the clock and the interrupt callback.
POLL_EVERY = 2048


def forced_home(game: Game, moves: list[Move]) -> list[Move]:
    """In Antares, a safe foundation move can be played first and alone.

    A card of rank r is only ever useful in the tableau as a base for a card of rank
    r-1: of its suit (Scorpion piles) or of the other colour (FreeCell piles). When
    r <= 2, or both other-colour foundations hold r-1 cards (and its own suit holds
    r-1, or it could not go home), every such card is already home, so sending it home
    cannot lose a win. This is the engine's own "safe" autoplay rule; with autoplay on
    the engine has played these already.
    """
    piles = game.piles
    for move in moves:
        if move.target >= Antares.FOUNDATION:
            card = piles[move.source][-1]
            rank0 = card % 13
            if rank0 < 2:
                return [move]
            others = (2, 3) if card < 26 else (0, 1)
            if all(len(piles[Antares.FOUNDATION + suit]) >= rank0 for suit in others):
                return [move]
    return moves


def spent(budget: Budget, nodes: int, deadline: float, positions: int) -> str:
    if budget.nodes is not None and nodes >= budget.nodes:
        return "nodes"
    if budget.clock() >= deadline:
        return "seconds"
    if positions >= budget.max_positions:
        return "memory"
    if budget.interrupt is not None and budget.interrupt():
        return "interrupted"
    return ""
