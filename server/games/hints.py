"""Hints: legal moves ranked by how useful they look, from visible information only.

A hint must never tell a player more than the table shows: the scores read face-up
cards and the number of face-down cards, never a face-down card or the stock. So
a hint is a judgement, not a promise of a winning line (the solver gives those).

In Scorpion the judgement looks ahead (issue 31): following the first hint used to run out
of moves on 114 of the first 200 certified deals (on deal 57 after 14 moves), and to go
round in a circle on 27. Moves that turn up a face-down card come first, then moves that
lead to one; a move after which the visible cards already show a dead end is not hinted;
and a whole column moved to an empty one (which the next hint would move back) never is.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Final

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
    """Useful legal moves, best first (ties in legal-move order); empty when none looks useful.

    Where cards lie face down (Scorpion), each move is also judged by what the player can see
    it leads to (:class:`_Outlook`): a move is worth more when the moves it opens turn up
    face-down cards or complete suits, and it is no hint at all when every way on from it
    ends with no move left, whatever the face-down cards are.
    """
    outlook = _Outlook(game) if game.HAS_FACE_DOWN_CARDS else None
    hints = []
    for move in game.legal_moves():
        if _changes_nothing(game, move):
            continue
        score, reason = move_score(game, move)
        if outlook is not None and not move.is_deal:
            ahead = outlook.after(move)
            if ahead <= DEAD // 2:
                continue  # a dead end, in plain sight
            if ahead > 0:
                score += ahead
                more = "then more can be turned up or completed"
                reason = f"{reason}; {more}" if reason != _PLAIN else more
        if score > 0:
            hints.append(Hint(move, score, reason))
    hints.sort(key=lambda hint: -hint.score)
    return hints


#: What the look-ahead counts: a face-down card turned up, a suit gone home, each move it
#: takes to get there, and a position where no move is left.
REVEAL: Final = 40
SUIT: Final = 100
STEP: Final = 5
DEAD: Final = -1000
#: Positions the look-ahead may play through, in all, for one list of hints: on the event
#: loop, 0.5 ms a list at the median, 9 ms at p99, 19 ms at most (bench.hint_reach, whose
#: table in bench/README.md has the figures for 250 and 2,000 positions too).
LOOK_NODES: Final = 500
#: Moves deep the look-ahead goes at most: a position deeper counts as gaining nothing. It
#: recurses a few frames a move, so this keeps it far inside Python's recursion limit.
LOOK_DEPTH: Final = 60
#: The stand-in for every card a player cannot see: the Two of a fifth suit, to the rules.
#: It goes on no card (no Three of its suit) and no card goes on it (no Ace of its suit), so
#: the look-ahead can neither move it nor build on it, and it completes no suit.
_UNSEEN: Final = 53
_PLAIN: Final = "a legal move"


class _Outlook:
    """What each move leads to, as far as the player can see: a search of the moves after it
    on a copy of the position whose unseen cards (face down, in the stock) are stand-ins.

    A move's outlook is the best of the lines after it: what they gain (:data:`REVEAL` a
    card turned up, :data:`SUIT` a suit gone home), less :data:`STEP` a move; a line goes on
    after a card turns up (the stand-in turned up can neither move nor take a card; the
    real card may open more, so a line that turned a card never counts as a dead end). The
    deal ends a line, gaining nothing: it is there while the stock is, and what it brings is
    unseen. A line with no card turned that ends with no move left is :data:`DEAD`: then no
    face-down card can change it. The search stops after :data:`LOOK_NODES` positions, and
    at :data:`LOOK_DEPTH` moves deep; a position past either counts as gaining nothing.

    Only what the player sees goes in: :meth:`Game.public_piles` and the face-down counts.
    """

    def __init__(self, game: Game) -> None:
        piles = [[_UNSEEN if card is None else card for card in pile] for pile in game.public_piles()]
        self._game = type(game)(game.deal, game.options, piles, list(game.hidden))
        self._memo: dict[bytes, int] = {}
        self._nodes = 0
        self._depth = 0

    def after(self, move: Move) -> int:
        """The outlook of ``move``, a legal move of the position (not the deal)."""
        game = self._game
        gain, turned, ends = self._play(move)
        value = gain + self._tail(turned, ends)
        game.pop()
        return value

    def _tail(self, turned: bool, ends: bool) -> int:
        if ends:
            return 0
        value = self._value()
        # A card turned up may open ways the stand-in hides: no way on is not the end then.
        return max(0, value) if turned else value

    def _play(self, move: Move) -> tuple[int, bool, bool]:
        """Play ``move`` on the copy: what it gains, whether it turned a card up, and whether
        it ends a line (the deal, or a won game)."""
        game = self._game
        self._nodes += 1
        foundations = game.piles[game.FOUNDATION : game.FOUNDATION + 4]
        down, home = sum(game.hidden), sum(map(len, foundations))
        game.push(move)
        if move.is_deal:
            return 0, False, True
        turned = down - sum(game.hidden)
        suits = (sum(map(len, foundations)) - home) // 13
        return REVEAL * turned + SUIT * suits, turned > 0, suits > 0 and game.is_won()

    def _value(self) -> int:
        """The best a line from the copy's position gains (see the class)."""
        game = self._game
        key = bytes(game.hidden) + b"\xfe" + b"\xff".join(map(bytes, game.piles))
        known = self._memo.get(key)
        if known is not None:
            return known
        self._memo[key] = DEAD  # a way round back here gains nothing
        if self._nodes >= LOOK_NODES or self._depth >= LOOK_DEPTH:
            best = 0
        else:
            best = DEAD
            self._depth += 1
            for move in game.legal_moves():
                if move.is_deal:
                    best = max(best, 0)
                    continue
                if _changes_nothing(game, move):
                    continue
                gain, turned, ends = self._play(move)
                value = gain - STEP + self._tail(turned, ends)
                game.pop()
                best = max(best, value)
            self._depth -= 1
        self._memo[key] = best
        return best


def _changes_nothing(game: Game, move: Move) -> bool:
    """A whole pile to an empty pile of its kind (Scorpion allows it before the deal, where
    it changes which column gets a stock card): hinted, it would be hinted back, for ever."""
    if move.is_deal or game.piles[move.target] or move.count != len(game.piles[move.source]):
        return False
    return game.PILES[move.source].kind is game.PILES[move.target].kind


def move_score(game: Game, move: Move) -> tuple[int, str]:
    """What ``move`` does by itself (before any look-ahead): its score (above 0: useful) and
    the reason, in words."""
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
    return score, "; ".join(reasons) or _PLAIN
