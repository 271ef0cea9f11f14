"""The hints a racer is given: a winning move where every card is visible, else the engine's
visible-information hints, and never nothing while a legal move exists.

The winning hint needs the solver, so it runs within a small budget (it is asked for on the
request path): where the solver finds no line in time, the engine's hints answer alone.
"""

from __future__ import annotations

from typing import Final

from protocol.messages import HintItem
from server.games import Game, hint
from server.solver.results import Budget
from server.solver.winning_hint import WinningHints

#: What one winning hint may cost on the request path (cheap against a move's rate limit).
HINT_BUDGET: Final = Budget(nodes=20_000, seconds=0.05, max_positions=20_000)


def hints_for(game: Game, winning: WinningHints | None = None) -> list[HintItem]:
    """Useful moves for ``game``, best first; empty only when no move is legal.

    ``winning`` (kept per racer, so a followed line is answered from memory) adds the next
    move of a winning line first, where the racer sees every card.
    """
    items: list[HintItem] = []
    best = (winning or WinningHints(HINT_BUDGET)).next_move(game)
    if best is not None:
        items.append(HintItem(game.move_text(best), "it is on a winning line"))
    seen = {item.move for item in items}
    for suggestion in hint(game):
        text = game.move_text(suggestion.move)
        if text not in seen:
            seen.add(text)
            items.append(HintItem(text, suggestion.reason))
    if not items:
        # Nothing looks useful, but a legal move may still be the way on.
        items = [HintItem(game.move_text(move), "a legal move") for move in game.legal_moves()[:3]]
    return items
