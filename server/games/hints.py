"""Hints: legal moves ranked by how useful they look, from visible information only.

A hint must never tell a player more than the table shows: the scores read face-up
cards and the number of face-down cards, never a face-down card or the stock. So
a hint is a judgement, not a promise of a winning line (the solver gives those).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from server.games.cards import card_text, suit_run
from server.games.game import Game, Move, PileKind, builds_on

_RUNS = [list(suit_run(suit)) for suit in range(4)]


@dataclass(frozen=True, slots=True)
class Hint:
    """A suggested move, its score (higher is better) and why, in words."""

    move: Move
    score: int
    reason: str


def hint(game: Game) -> list[Hint]:
    """Useful legal moves, best first (ties in legal-move order); empty when none looks useful."""
    hints = []
    for move in game.legal_moves():
        score, reason = _score(game, move)
        if score > 0:
            hints.append(Hint(move, score, reason))
    hints.sort(key=lambda hint: -hint.score)
    return hints


def _score(game: Game, move: Move) -> tuple[int, str]:
    if move.is_deal:
        return 1, "deal the stock"
    piles, hidden, specs = game.piles, game.hidden, game.PILES
    source = piles[move.source]
    lead_at = len(source) - move.count
    lead = source[lead_at]
    group = source[lead_at:]
    target = piles[move.target]
    source_kind = specs[move.source].kind
    target_kind = specs[move.target].kind
    score = 0
    reasons = []

    if target_kind is PileKind.FOUNDATION:
        score += 100
        reasons.append(f"sends {card_text(lead)} home")
    elif target_kind is PileKind.CELL:
        score -= 20
    elif target:
        visible_run = target[hidden[move.target] :] + group
        if len(visible_run) >= 13 and visible_run[-13:] == _RUNS[visible_run[-1] // 13]:
            score += 200
            reasons.append("completes a suit")
        # Count the cards of the group that lie out of order: they will be in the way.
        score -= 2 * sum(not builds_on(source_kind, a, b) for a, b in itertools.pairwise(group))
        score += 15
        reasons.append(f"builds {card_text(lead)} on {card_text(target[-1])}")
    else:
        score += 5
        reasons.append(f"moves {card_text(lead)} to an empty pile")

    if source_kind is PileKind.CELL:
        score += 30
        reasons.append("frees a cell")
    elif lead_at == 0:
        if target:
            score += 20
            reasons.append("empties a pile")
    elif lead_at == hidden[move.source]:
        score += 60
        reasons.append("turns up a face-down card")
    else:
        under = source[lead_at - 1]  # face up: lead_at > hidden
        if builds_on(source_kind, under, lead):
            # Already built where it lies: moving it only shuffles.
            score -= 25
        elif game.BUILDS_FOUNDATIONS and len(piles[game.FOUNDATION + under // 13]) == under % 13:
            score += 40
            reasons.append(f"uncovers {card_text(under)}, which can go home")
    return score, "; ".join(reasons) or "a legal move"
