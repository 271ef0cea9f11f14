"""Scorpion: seven columns built down in suit, a three-card stock, suits go home whole.

The rules as implemented are stated in seeds/scorpion.md; this module is their
only implementation. Piles: columns ``1``-``7`` (numbers 0-6), the ``stock``
(7), and the foundations ``hc hs hh hd`` (8-11, one per suit, holding
completed suits Ace at the bottom).
"""

from __future__ import annotations

from typing import ClassVar, Final

from server.games.cards import card_text, suit_run
from server.games.deals import Deal, talon
from server.games.errors import IllegalMove
from server.games.game import OP_DEAL, OP_FLIP, OP_MOVE, OP_SUIT_HOME, Game, Move, Op, PileKind, PileSpec

COLUMNS: Final = 7
STOCK: Final = 7
FOUNDATION: Final = 8
#: Columns that receive a stock card, in the order they receive them.
STOCK_COLUMNS: Final = 3
_RUNS: Final = [list(suit_run(suit)) for suit in range(4)]


class Scorpion(Game):
    VARIANT: ClassVar[str] = "scorpion"
    PILES: ClassVar[tuple[PileSpec, ...]] = (
        *(PileSpec(str(i + 1), PileKind.SCORPION) for i in range(COLUMNS)),
        PileSpec("stock", PileKind.STOCK),
        *(PileSpec("h" + suit.lower(), PileKind.FOUNDATION) for suit in "CSHD"),
    )
    STOCK: ClassVar[int] = STOCK
    FOUNDATION: ClassVar[int] = FOUNDATION
    HAS_FACE_DOWN_CARDS: ClassVar[bool] = True
    BUILDS_FOUNDATIONS: ClassVar[bool] = False

    @classmethod
    def layout(cls, deal: Deal) -> tuple[list[list[int]], list[int]]:
        """Seven rows left to right; rows 1-3 of columns 1-4 face down; three cards stay in stock."""
        cards = talon(deal)
        columns: list[list[int]] = [[] for _ in range(COLUMNS)]
        for _row in range(7):
            for column in columns:
                column.append(cards.pop())
        # What is left is the stock; its last card is dealt first, to column 1.
        piles = [*columns, cards, [], [], [], []]
        hidden = [3, 3, 3, 3, 0, 0, 0, len(cards), 0, 0, 0, 0]
        return piles, hidden

    def _stock_undealt(self) -> bool:
        return bool(self.piles[STOCK])

    def _is_pointless(self, source: int, count: int, target: int) -> bool:
        """A whole column onto an empty column changes nothing, unless the stock is still to
        be dealt and one of the two columns is among those the stock deals to."""
        if count != len(self.piles[source]) or self.piles[target]:
            return False
        return not (self._stock_undealt() and (source < STOCK_COLUMNS or target < STOCK_COLUMNS))

    def _empty_targets(self) -> list[int]:
        """One empty column per class of interchangeable empty columns."""
        empty = [i for i in range(COLUMNS) if not self.piles[i]]
        if not empty:
            return []
        if not self._stock_undealt():
            return empty[:1]
        # Before the deal, columns 1-3 differ from each other (each gets its own stock card).
        distinct = [i for i in empty if i < STOCK_COLUMNS]
        rest = [i for i in empty if i >= STOCK_COLUMNS]
        return distinct + rest[:1]

    def legal_moves(self) -> list[Move]:
        # tuple.__new__ skips the named tuple's Python-level __new__: a third of the cost
        # of each move built here.
        new = tuple.__new__
        piles = self.piles
        hidden = self.hidden
        wanted: dict[int, int] = {}  # card -> the column whose top is that card's successor
        for t in range(COLUMNS):
            pile = piles[t]
            if pile and pile[-1] % 13:
                wanted[pile[-1] - 1] = t
        empty_targets = self._empty_targets()
        moves: list[Move] = []
        for s in range(COLUMNS):
            pile = piles[s]
            size = len(pile)
            for k in range(hidden[s], size):
                card = pile[k]
                target = wanted.get(card)
                if target is not None and target != s:
                    moves.append(new(Move, (s, size - k, target)))
                if card % 13 == 12:
                    for empty in empty_targets:
                        if not (k == 0 and self._is_pointless(s, size, empty)):
                            moves.append(new(Move, (s, size - k, empty)))
        if piles[STOCK]:
            moves.append(new(Move, (STOCK, len(piles[STOCK]), STOCK)))
        return moves

    def check(self, move: Move) -> None:
        s, count, t = move.source, move.count, move.target
        if not (0 <= s < len(self.PILES) and 0 <= t < len(self.PILES)):
            raise IllegalMove("no-such-pile", "Scorpion has columns 1-7, the stock and four foundations")
        if move.is_deal:
            if s != STOCK:
                raise IllegalMove("same-pile", "cards cannot move onto the pile they are on")
            if not self.piles[STOCK]:
                raise IllegalMove("stock-dealt", "the stock has already been dealt")
            if count != len(self.piles[STOCK]):
                raise IllegalMove("deal-whole-stock", "the stock is dealt all at once")
            return
        if s == STOCK or t == STOCK:
            raise IllegalMove("stock-deal-only", "stock cards only come out by dealing the stock")
        if s >= FOUNDATION:
            raise IllegalMove("foundation-final", "cards never leave the foundations")
        if t >= FOUNDATION:
            raise IllegalMove(
                "no-foundation-moves",
                "cards go home only as a complete King-to-Ace suit, and they go by themselves",
            )
        pile = self.piles[s]
        if not 1 <= count <= len(pile):
            raise IllegalMove("no-such-cards", f"column {s + 1} has {len(pile)} cards, so {count} cannot move")
        if count > len(pile) - self.hidden[s]:
            raise IllegalMove("face-down", "only face-up cards can be moved")
        lead = pile[-count]
        destination = self.piles[t]
        if not destination:
            if lead % 13 != 12:
                raise IllegalMove("empty-needs-king", "an empty column takes only a King, with whatever lies on it")
            if self._is_pointless(s, count, t):
                raise IllegalMove("pointless", "moving a whole column to an empty column changes nothing")
            return
        top = destination[-1]
        if lead % 13 == 12:
            raise IllegalMove("build-in-suit", f"{card_text(lead)} is a King: it can only go to an empty column")
        if top != lead + 1:
            raise IllegalMove(
                "build-in-suit",
                f"{card_text(lead)} goes only onto {card_text(lead + 1)} (same suit, one rank higher),"
                f" not onto {card_text(top)}",
            )

    def _play(self, move: Move, ops: list[Op]) -> None:
        piles = self.piles
        hidden = self.hidden
        if move.is_deal:
            stock = piles[STOCK]
            dealt = len(stock)
            for column in range(dealt):
                piles[column].append(stock.pop())
            hidden[STOCK] = 0
            ops.append((OP_DEAL, STOCK, 0, dealt))
            for column in range(dealt):
                self._send_suits_home(column, ops)
            return
        s, count, t = move.source, move.count, move.target
        source = piles[s]
        piles[t].extend(source[-count:])
        del source[-count:]
        ops.append((OP_MOVE, s, t, count))
        if hidden[s] and hidden[s] == len(source):
            hidden[s] -= 1
            ops.append((OP_FLIP, s, 0, 0))
        self._send_suits_home(t, ops)
        # Taking cards off may uncover a suit that was complete beneath them.
        self._send_suits_home(s, ops)

    def _send_suits_home(self, column: int, ops: list[Op]) -> None:
        piles = self.piles
        hidden = self.hidden
        pile = piles[column]
        while len(pile) - hidden[column] >= 13 and pile[-1] % 13 == 0 and pile[-13:] == _RUNS[pile[-1] // 13]:
            home = FOUNDATION + pile[-1] // 13
            run = pile[-13:]
            del pile[-13:]
            run.reverse()
            piles[home].extend(run)
            ops.append((OP_SUIT_HOME, column, home, 13))
            if hidden[column] and hidden[column] == len(pile):
                hidden[column] -= 1
                ops.append((OP_FLIP, column, 0, 0))
