"""Canonical position keys for the transposition table.

Two positions get the same key exactly when they are the same position up to
piles that the rules cannot tell apart, so a search that has exhausted one may
skip the other (sound pruning):

- Antares: the four Scorpion piles are interchangeable, so are the four FreeCell
  piles, and so are the cells.
- Scorpion: all seven columns are interchangeable once the stock is dealt; before
  that, columns 1, 2 and 3 each receive their own stock card, so only columns 4-7
  are.

Foundations need no place in a key: each card is somewhere, so the cards not on
the table are exactly the cards at home. Face-down cards keep their identity (a
full-knowledge solver knows what it will turn up).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from server.games import Antares, Game, Move, PileKind, Scorpion

_SEPARATOR: Final = b"\xff"
_FACE_DOWN_MARK: Final = 100  # above every card number


def scorpion_key(game: Game) -> bytes:
    piles, hidden = game.piles, game.hidden
    columns = [bytes((_FACE_DOWN_MARK + hidden[i], *piles[i])) for i in range(7)]
    if piles[7]:
        return _SEPARATOR.join((*columns[:3], *sorted(columns[3:]), bytes(piles[7])))
    columns.sort()
    return _SEPARATOR.join(columns)


def antares_key(game: Game) -> bytes:
    piles = game.piles
    scorpion = sorted(bytes(piles[i]) for i in range(4))
    freecell = sorted(bytes(piles[i]) for i in range(4, 8))
    cells = bytes(sorted(piles[i][0] for i in range(8, 12) if piles[i]))
    return _SEPARATOR.join((*scorpion, b"", *freecell, b"", cells))


def key_function(variant: type[Game]) -> Callable[[Game], bytes]:
    """The key function for ``variant``."""
    if variant is Scorpion:
        return scorpion_key
    if variant is Antares:
        return antares_key
    raise ValueError(f"no position key for {variant.VARIANT}")


def rebuild_scorpion(key: bytes, game: Game) -> Game:
    """The position a :func:`scorpion_key` stands for (columns in key order)."""
    segments = key.split(_SEPARATOR)
    piles: list[list[int]] = [list(segment[1:]) for segment in segments[:7]]
    hidden = [segment[0] - _FACE_DOWN_MARK for segment in segments[:7]]
    stock = list(segments[7]) if len(segments) > 7 else []
    on_table = {card for pile in piles for card in pile} | set(stock)
    homes = [[card for card in range(suit * 13, suit * 13 + 13) if card not in on_table] for suit in range(4)]
    return Scorpion(game.deal, game.options, [*piles, stock, *homes], [*hidden, len(stock), 0, 0, 0, 0])


def rebuild_antares(key: bytes, game: Game) -> Game:
    """The position an :func:`antares_key` stands for (piles and cells in key order)."""
    segments = key.split(_SEPARATOR)
    tableau = [list(segment) for segment in (*segments[:4], *segments[5:9])]
    cells: list[list[int]] = [[card] for card in segments[10]]
    cells += [[] for _ in range(4 - len(cells))]
    on_table = {card for pile in tableau for card in pile} | set(segments[10])
    homes = [[card for card in range(suit * 13, suit * 13 + 13) if card not in on_table] for suit in range(4)]
    return Antares(game.deal, game.options, [*tableau, *cells, *homes], [0] * 16)


def translate(move: Move, position: Game, twin: Game) -> Move:
    """The move of ``twin`` that does what ``move`` does in ``position``.

    The two positions must have the same key: the same piles up to interchangeable
    ones. The moved card and the target's top card (or, for an empty target, its
    role) identify the move whatever the order of the piles.
    """
    if move.is_deal:
        return twin.deal_move()
    card = position.piles[move.source][-move.count]
    source = next(i for i, pile in enumerate(twin.piles) if card in pile)
    count = len(twin.piles[source]) - twin.piles[source].index(card)
    kind = position.PILES[move.target].kind
    target_pile = position.piles[move.target]
    if kind is PileKind.FOUNDATION:
        return Move(source, count, move.target)  # foundations belong to suits, in every position
    if target_pile:
        top = target_pile[-1]
        target = next(i for i, pile in enumerate(twin.piles) if pile and pile[-1] == top)
        return Move(source, count, target)
    if isinstance(twin, Scorpion) and twin.piles[7] and move.target < 3:
        return Move(source, count, move.target)  # before the deal, columns 1-3 keep their places
    low = 3 if isinstance(twin, Scorpion) and twin.piles[7] else 0
    target = next(i for i, spec in enumerate(twin.PILES) if spec.kind is kind and not twin.piles[i] and i >= low)
    return Move(source, count, target)
