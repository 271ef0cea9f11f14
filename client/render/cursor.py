"""Keyboard selection on a board: a cursor over piles and cards, and the move a
pick-and-drop makes, in notation. No rules: the server judges the move.

Positions are ``(pile, index)``, index from the bottom of the pile (``-1``: an empty
pile). In the tableau the cursor rests on face-up cards; on the top row (stock, cells,
foundations) on the top card.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from client.render.board import Board, Layout
from client.render.cards import card_code, parse_card_code
from protocol.messages import PileInfo

Position = tuple[int, int]


def top_of(board: Board, pile: int) -> Position:
    return (pile, len(board[pile]) - 1)


def _nearest(index: int, count: int, other: int) -> int:
    """The slot of a row of ``other`` slots under slot ``index`` of a row of ``count``."""
    if other <= 1 or count <= 1:
        return 0
    return round(index * (other - 1) / (count - 1))


@dataclass
class Cursor:
    """The cursor and the selected card (the card picked up, with everything on it)."""

    layout: Layout
    position: Position
    selected: Position | None = None

    @classmethod
    def start(cls, layout: Layout, board: Board) -> Cursor:
        first = layout.main[0] if layout.main else layout.order[0]
        return cls(layout, top_of(board, first))

    def clamp(self, board: Board) -> None:
        """Keep the cursor on a face-up card (or an empty pile) after the board changed;
        drop a selection whose card is gone."""
        pile, index = self.position
        cards = board[pile]
        if not 0 <= index < len(cards) or cards[index] is None or pile in self.layout.top:
            self.position = top_of(board, pile)
        if self.selected is not None:
            pile, index = self.selected
            if not 0 <= index < len(board[pile]) or board[pile][index] is None:
                self.selected = None

    def move(self, direction: str, board: Board) -> None:
        """``left``, ``right``, ``up`` (deeper into a column, then to the top row) or
        ``down`` (towards the top card, then from the top row into the tableau)."""
        pile, index = self.position
        layout = self.layout
        in_top = pile in layout.top
        row = layout.top if in_top else layout.main
        slot = row.index(pile)
        if direction in ("left", "right"):
            step = -1 if direction == "left" else 1
            self.position = top_of(board, row[(slot + step) % len(row)])
        elif direction == "up":
            if not in_top and index > 0 and board[pile][index - 1] is not None:
                self.position = (pile, index - 1)
            elif not in_top and layout.top:
                self.position = top_of(board, layout.top[_nearest(slot, len(layout.main), len(layout.top))])
        elif direction == "down":
            if in_top and layout.main:
                self.position = top_of(board, layout.main[_nearest(slot, len(layout.top), len(layout.main))])
            elif not in_top and index < len(board[pile]) - 1:
                self.position = (pile, index + 1)

    def jump(self, number: int, board: Board) -> None:
        """To the top card of tableau pile ``number`` (1 = leftmost)."""
        if 1 <= number <= len(self.layout.main):
            self.position = top_of(board, self.layout.main[number - 1])


def card_at(board: Board, position: Position) -> int | None:
    pile, index = position
    return board[pile][index] if 0 <= index < len(board[pile]) else None


def move_text(piles: Sequence[PileInfo], board: Board, source: Position, target: int) -> str | None:
    """The notation for moving the card at ``source`` (with the cards on it) onto pile
    ``target``; None if there is no face-up card there."""
    card = card_at(board, source)
    if card is None:
        return None
    return f"{card_code(card)}>{piles[target].name}"


def home_text(board: Board, source: Position) -> str | None:
    """The notation for sending the card at ``source`` to its foundation."""
    card = card_at(board, source)
    return None if card is None else f"{card_code(card)}>h"


def hint_marks(piles: Sequence[PileInfo], board: Board, move: str) -> tuple[frozenset[Position], int | None]:
    """The cards a hinted move (canonical text, e.g. ``9S>6``, ``c2>h``, ``deal``) would move,
    and its target pile (None when the notation names no pile, as ``h``)."""
    names = {pile.name.lower(): number for number, pile in enumerate(piles)}
    text = move.strip().lower()
    if text in ("deal", "d"):
        stock = next((n for n, pile in enumerate(piles) if pile.kind == "stock"), None)
        return (frozenset() if stock is None else frozenset({top_of(board, stock)})), None
    source, _, target = text.partition(">")
    start: Position | None = None
    if source in names:
        start = top_of(board, names[source])
    else:
        card = parse_card_code(source)
        for number, pile_cards in enumerate(board):
            if card is not None and card in pile_cards:
                start = (number, list(pile_cards).index(card))
    moved: frozenset[Position] = frozenset()
    if start is not None and start[1] >= 0:
        pile, index = start
        moved = frozenset((pile, i) for i in range(index, len(board[pile])))
    target_pile = names.get(target)
    if target == "h" and start is not None:
        # "h" is the card's own foundation, named after its suit (hc hs hh hd).
        card = card_at(board, start)
        if card is not None:
            target_pile = names.get("h" + card_code(card)[-1].lower())
    return moved, target_pile
