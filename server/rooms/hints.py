"""The hints a racer is given: a winning move where every card is visible, else the engine's
visible-information hints, and never nothing while a legal move exists.

The winning move comes from the racer's winning line in memory, never from a search here:
the server searches in worker processes (server/live/hint_search.py), off the event loop,
and a line it finds is remembered (:meth:`WinningHints.learn`) before the hints are made.
"""

from __future__ import annotations

from typing import Final

from protocol.messages import HintItem
from server.games import Game, hint
from server.solver.winning_hint import WinningHints

#: Seconds one winning-line search for a hint may take (in a worker process).
HINT_SEARCH_SECONDS: Final = 0.25


def hints_for(game: Game, winning: WinningHints | None = None) -> list[HintItem]:
    """Useful moves for ``game``, best first; empty only when no move is legal.

    ``winning`` (kept per racer) adds the next move of its winning line first, where the line
    in memory reaches the racer's position.
    """
    items: list[HintItem] = []
    best = winning.remembered(game) if winning is not None else None
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
