"""A small text notation for whole positions, for tests, logs and bug reports.

One line per non-empty pile, ``name: cards``, cards bottom first::

    1: <JD> <5H> KH AS 4H
    5: KS QS
    stock: 9C 2H 6H
    home: KC

- ``<XX>`` is a face-down card; face-down cards lie at the bottom of a pile.
- ``stock:`` lists the stock in the order it is dealt (the first card goes to column 1).
- ``home:`` lists the top card of each non-empty foundation; the foundation holds
  its suit from the Ace up to that card. In Scorpion only Kings can stand there.
- Piles not named are empty. Blank lines and ``#`` comments are ignored.

A position need not hold all 52 cards (tests build small ones), but a card
appears at most once.
"""

from __future__ import annotations

from server.games.cards import card_of, card_text, parse_card, rank_of, suit_of
from server.games.errors import InvalidNotation, InvalidPosition, quoted
from server.games.game import Game, PileKind
from server.games.options import Options


def parse_position(variant: type[Game], text: str, options: Options | None = None) -> Game:
    """The position ``text`` describes, as a game of ``variant`` with no deal and no history."""
    names = {spec.name: i for i, spec in enumerate(variant.PILES)}
    piles: list[list[int]] = [[] for _ in variant.PILES]
    hidden = [0] * len(variant.PILES)
    seen: set[int] = set()

    def take(token: str) -> int:
        try:
            card = parse_card(token)
        except InvalidNotation as error:
            raise InvalidPosition(str(error)) from None
        if card in seen:
            raise InvalidPosition(f"{card_text(card)} appears twice")
        seen.add(card)
        return card

    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        name, colon, rest = line.partition(":")
        name = name.strip().lower()
        if not colon:
            raise InvalidPosition(f"line {number}: write 'pile: cards', not {quoted(raw.strip())}")
        tokens = rest.split()
        if name == "home":
            _fill_foundations(variant, piles, [take(t) for t in tokens], seen)
            continue
        if name not in names:
            raise InvalidPosition(f"line {number}: no pile called {quoted(name)} in {variant.VARIANT}")
        pile = names[name]
        kind = variant.PILES[pile].kind
        if kind is PileKind.FOUNDATION:
            raise InvalidPosition(f"line {number}: give foundations as 'home: <top cards>'")
        if kind is PileKind.STOCK:
            piles[pile] = [take(t) for t in reversed(tokens)]
            hidden[pile] = len(tokens)
            continue
        for token in tokens:
            down = token.startswith("<") and token.endswith(">")
            if down and not variant.HAS_FACE_DOWN_CARDS:
                raise InvalidPosition(f"line {number}: {variant.VARIANT.capitalize()} has no face-down cards")
            if down and len(piles[pile]) > hidden[pile]:
                raise InvalidPosition(f"line {number}: a face-down card lies on a face-up one in {name}")
            piles[pile].append(take(token[1:-1] if down else token))
            hidden[pile] += down
        if kind is PileKind.CELL and len(piles[pile]) > 1:
            raise InvalidPosition(f"line {number}: a cell holds one card")
        if piles[pile] and hidden[pile] == len(piles[pile]):
            raise InvalidPosition(f"line {number}: the top card of {name} must be face up")
    return variant(None, options or Options(), piles, hidden)


def _fill_foundations(variant: type[Game], piles: list[list[int]], tops: list[int], seen: set[int]) -> None:
    for top in tops:
        suit = suit_of(top)
        home = piles[variant.FOUNDATION + suit]
        if home:
            raise InvalidPosition(f"two cards of one suit in 'home': {card_text(top)}")
        if variant.STOCK >= 0 and rank_of(top) != 13:
            raise InvalidPosition(f"Scorpion foundations hold whole suits: write the King, not {card_text(top)}")
        below = [card_of(rank, suit) for rank in range(1, rank_of(top))]
        if seen.intersection(below):
            raise InvalidPosition(f"a card under {card_text(top)} in 'home' also lies elsewhere")
        seen.update(below)
        home.extend([*below, top])


def position_text(game: Game) -> str:
    """The position of ``game`` in the notation above, face-down cards shown (a full view)."""
    lines = []
    tops = []
    for i, spec in enumerate(game.PILES):
        cards = game.piles[i]
        if spec.kind is PileKind.FOUNDATION:
            if cards:
                tops.append(card_text(cards[-1]))
            continue
        if not cards:
            continue
        if spec.kind is PileKind.STOCK:
            words = [card_text(c) for c in reversed(cards)]
        else:
            words = [card_text(c) for c in cards]
            words[: game.hidden[i]] = [f"<{w}>" for w in words[: game.hidden[i]]]
        lines.append(f"{spec.name}: {' '.join(words)}")
    if tops:
        lines.append(f"home: {' '.join(tops)}")
    return "\n".join(lines) + "\n"
