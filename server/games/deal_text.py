"""Starting layouts in the text format of DEALS.md, to compare with PySolFC.

One line per pile, bottom card first, face-down cards in angle brackets. Scorpion
adds the stock line; Antares is printed in PySolFC's pile order (its piles 1-4,
our FreeCell piles, first), exactly as the test vectors of DEALS.md.
"""

from __future__ import annotations

from server.games.antares import Antares, pysol_piles
from server.games.cards import card_text
from server.games.deals import Deal
from server.games.game import Game
from server.games.scorpion import COLUMNS, STOCK, Scorpion


def deal_text(variant: type[Game], deal: Deal) -> str:
    """The starting layout of ``deal`` in ``variant``, as DEALS.md prints it."""
    if variant is Antares:
        return "".join(" ".join(card_text(c) for c in pile) + "\n" for pile in pysol_piles(deal))
    if variant is not Scorpion:
        raise ValueError(f"no layout text for {variant.VARIANT}")
    piles, hidden = Scorpion.layout(deal)
    lines = []
    for column in range(COLUMNS):
        cards = [card_text(c) for c in piles[column]]
        cards[: hidden[column]] = [f"<{c}>" for c in cards[: hidden[column]]]
        lines.append(" ".join(cards))
    stock = " ".join(card_text(c) for c in reversed(piles[STOCK]))
    lines.append(f"stock, dealt to columns 1,2,3: {stock}")
    return "\n".join(lines) + "\n"
