"""Cards as small integers, and their two-character text form.

A card is an ``int`` from 0 to 51 in PySolFC's order: suit-major in the suit
order Clubs, Spades, Hearts, Diamonds, and within a suit Ace (0) to King (12).
So ``card // 13`` is the suit, ``card % 13 + 1`` the rank, and index 0 is the
Ace of Clubs, index 51 the King of Diamonds. Integers keep the engine and the
solver fast; :func:`card_text` and :func:`parse_card` convert at the edges.

Text form: rank ``A 2 3 4 5 6 7 8 9 T J Q K`` then suit ``C S H D``
(``"TH"`` is the ten of hearts). Parsing also accepts lower case and ``10``.
"""

from __future__ import annotations

from typing import Final

from server.games.errors import InvalidNotation, quoted

Card = int

CLUBS: Final = 0
SPADES: Final = 1
HEARTS: Final = 2
DIAMONDS: Final = 3

SUIT_LETTERS: Final = "CSHD"
RANK_LETTERS: Final = "A23456789TJQK"
ACE: Final = 1
KING: Final = 13
DECK_SIZE: Final = 52


def card_of(rank: int, suit: int) -> Card:
    """The card of ``rank`` (1 = Ace .. 13 = King) and ``suit`` (0..3)."""
    return suit * 13 + rank - 1


def suit_of(card: Card) -> int:
    return card // 13


def rank_of(card: Card) -> int:
    """1 for an Ace up to 13 for a King."""
    return card % 13 + 1


def is_red(card: Card) -> bool:
    """Hearts and Diamonds are red; Clubs and Spades black."""
    return card >= 26


def card_text(card: Card) -> str:
    return RANK_LETTERS[card % 13] + SUIT_LETTERS[card // 13]


#: :func:`card_text` of every card, by card number (for the engine's hot paths).
CARD_TEXTS: Final = tuple(card_text(card) for card in range(DECK_SIZE))


def parse_card(text: str) -> Card:
    """Parse ``"TH"``, ``"th"`` or ``"10h"``; raise :class:`InvalidNotation` otherwise."""
    if not text.isascii():  # str.upper() would read a long s as S, the Kelvin sign as K
        raise InvalidNotation(f"{quoted(text)} is not a card: write it in plain ASCII, like 'TH'")
    cleaned = text.strip().upper()
    if cleaned.startswith("10"):
        cleaned = "T" + cleaned[2:]
    if len(cleaned) != 2 or cleaned[0] not in RANK_LETTERS or cleaned[1] not in SUIT_LETTERS:
        raise InvalidNotation(
            f"{quoted(text)} is not a card: write a rank (A 2-9 T J Q K) and a suit (C S H D), like 'TH'"
        )
    return card_of(RANK_LETTERS.index(cleaned[0]) + 1, SUIT_LETTERS.index(cleaned[1]))


def suit_run(suit: int) -> tuple[Card, ...]:
    """King down to Ace of ``suit``: a completed Scorpion run as it lies in a column."""
    return tuple(suit * 13 + rank for rank in range(12, -1, -1))
