"""Cards as the protocol sends them (ints 0-51, None face down), as text and as styles.

This is notation, not rules: ``suit * 13 + rank - 1`` with suits C S H D, written rank
then suit (``QS``). The client needs it to show cards, to name a selected card in a move
it sends, and to find on the board the cards a hint names.
"""

from __future__ import annotations

SUIT_LETTERS = "CSHD"
SUIT_SYMBOLS = "♣♠♥♦"
RANK_LETTERS = "A23456789TJQK"


def suit_of(card: int) -> int:
    return card // 13


def is_red(card: int) -> bool:
    """Hearts and diamonds."""
    return suit_of(card) in (2, 3)


def card_code(card: int) -> str:
    """The card as the move notation writes it: ``QS``, ``TH``, ``AC``."""
    return RANK_LETTERS[card % 13] + SUIT_LETTERS[suit_of(card)]


def card_label(card: int) -> str:
    """Three columns for the screen: `` A♠``, ``10♥``, `` Q♦``."""
    rank = card % 13 + 1
    text = "10" if rank == 10 else RANK_LETTERS[rank - 1]
    return f"{text:>2}{SUIT_SYMBOLS[suit_of(card)]}"


def parse_card_code(text: str) -> int | None:
    """The card ``text`` names (``QS``, ``10h``), or None if it names no card."""
    text = text.strip().upper()
    if len(text) < 2:
        return None
    rank_text, suit_text = text[:-1], text[-1]
    if suit_text not in SUIT_LETTERS:
        return None
    rank = 10 if rank_text == "10" else RANK_LETTERS.find(rank_text) + 1 if len(rank_text) == 1 else 0
    if rank < 1:
        return None
    return SUIT_LETTERS.index(suit_text) * 13 + rank - 1
