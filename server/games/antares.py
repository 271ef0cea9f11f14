"""Antares: Scorpion piles on the left, FreeCell piles on the right, four cells.

The rules as implemented are stated in seeds/antares.md; this module is their
only implementation. Piles: Scorpion piles ``s1``-``s4`` (numbers 0-3),
FreeCell piles ``f1``-``f4`` (4-7), cells ``c1``-``c4`` (8-11), foundations
``hc hs hh hd`` (12-15, one per suit, built Ace to King). Everything is face up.

What may be picked up depends on the source pile, where it may go on the
target pile and the group's first card.
"""

from __future__ import annotations

from typing import ClassVar, Final

from server.games.cards import card_of, card_text, rank_of, suit_of
from server.games.deals import Deal, talon
from server.games.errors import IllegalMove
from server.games.game import OP_MOVE, Game, Move, Op, PileKind, PileSpec
from server.games.options import Autoplay

SCORPION_PILES: Final = range(4)
FREECELL_PILES: Final = range(4, 8)
CELLS: Final = range(8, 12)
FOUNDATION: Final = 12
#: Where autoplay looks for cards: every tableau pile, then the cells.
_AUTOPLAY_SOURCES: Final = range(12)
#: For each suit, the two suits of the other colour.
_OTHER_COLOUR: Final = ((2, 3), (2, 3), (0, 1), (0, 1))


def _alternate_run_length(pile: list[int], limit: int) -> int:
    """How many cards from the top of a non-empty ``pile`` form a run down in
    alternate colours, counting at most ``limit``."""
    run = 1
    size = len(pile)
    while run < size and run < limit:
        lower, upper = pile[-run - 1], pile[-run]
        if lower % 13 != upper % 13 + 1 or (lower >= 26) == (upper >= 26):
            break
        run += 1
    return run


class Antares(Game):
    VARIANT: ClassVar[str] = "antares"
    PILES: ClassVar[tuple[PileSpec, ...]] = (
        *(PileSpec(f"s{i + 1}", PileKind.SCORPION) for i in range(4)),
        *(PileSpec(f"f{i + 1}", PileKind.FREECELL) for i in range(4)),
        *(PileSpec(f"c{i + 1}", PileKind.CELL) for i in range(4)),
        *(PileSpec("h" + suit.lower(), PileKind.FOUNDATION) for suit in "CSHD"),
    )
    FOUNDATION: ClassVar[int] = FOUNDATION
    HAS_FACE_DOWN_CARDS: ClassVar[bool] = False
    BUILDS_FOUNDATIONS: ClassVar[bool] = True

    @classmethod
    def layout(cls, deal: Deal) -> tuple[list[list[int]], list[int]]:
        """PySolFC's deal (6 rows to its 8 piles, a 7th to its piles 1-4), mirrored:
        its piles 5-8 become our Scorpion piles, its piles 1-4 our FreeCell piles."""
        piles = pysol_piles(deal)
        ours = [*piles[4:], *piles[:4], *([] for _ in range(8))]
        return ours, [0] * 16

    def _free_cells(self) -> list[int]:
        return [c for c in CELLS if not self.piles[c]]

    def legal_moves(self) -> list[Move]:
        # tuple.__new__ skips the named tuple's Python-level __new__: a third of the cost
        # of each move built here.
        new = tuple.__new__
        piles = self.piles
        free_cells = self._free_cells()
        limit = len(free_cells) + 1
        wanted: dict[int, list[int]] = {}  # card -> tableau piles it may be put on
        empty_scorpion = empty_freecell = -1
        for t in SCORPION_PILES:
            pile = piles[t]
            if not pile:
                if empty_scorpion < 0:
                    empty_scorpion = t
            elif pile[-1] % 13:
                wanted.setdefault(pile[-1] - 1, []).append(t)
        for t in FREECELL_PILES:
            pile = piles[t]
            if not pile:
                if empty_freecell < 0:
                    empty_freecell = t
            elif pile[-1] % 13:
                rank0 = pile[-1] % 13 - 1
                for suit in _OTHER_COLOUR[pile[-1] // 13]:
                    wanted.setdefault(suit * 13 + rank0, []).append(t)

        moves: list[Move] = []
        for s in range(12):
            pile = piles[s]
            if not pile:
                continue
            size = len(pile)
            if s < 4:
                deepest = size
            elif s < 8:
                deepest = _alternate_run_length(pile, limit)
            else:
                deepest = 1
            for count in range(deepest, 0, -1):
                card = pile[-count]
                for target in wanted.get(card, ()):
                    if target != s:
                        moves.append(new(Move, (s, count, target)))
                whole = count == size
                if empty_scorpion >= 0 and card % 13 == 12 and not (whole and s < 4):
                    moves.append(new(Move, (s, count, empty_scorpion)))
                if empty_freecell >= 0 and not (whole and 4 <= s < 8):
                    moves.append(new(Move, (s, count, empty_freecell)))
            top = pile[-1]
            if len(piles[FOUNDATION + top // 13]) == top % 13:
                moves.append(new(Move, (s, 1, FOUNDATION + top // 13)))
            if free_cells and s < 8:
                moves.append(new(Move, (s, 1, free_cells[0])))
        return moves

    def check(self, move: Move) -> None:
        s, count, t = move.source, move.count, move.target
        if not (0 <= s < 16 and 0 <= t < 16):
            raise IllegalMove("no-such-pile", "Antares has piles s1-s4, f1-f4, cells c1-c4 and four foundations")
        if s == t:
            raise IllegalMove("same-pile", "cards cannot move onto the pile they are on")
        source_kind = self.PILES[s].kind
        target_kind = self.PILES[t].kind
        pile = self.piles[s]
        name = self.PILES[s].name
        if source_kind is PileKind.FOUNDATION:
            raise IllegalMove("foundation-final", "cards never leave the foundations")
        if not pile:
            raise IllegalMove("empty-source", f"{name} is empty")
        if not 1 <= count <= len(pile):
            raise IllegalMove("no-such-cards", f"{name} holds {len(pile)} cards, so {count} cannot move")
        if source_kind is PileKind.FREECELL and count > 1:
            if _alternate_run_length(pile, count) < count:
                raise IllegalMove(
                    "freecell-run", "from a FreeCell pile, only a run down in alternate colours moves together"
                )
            free = len(self._free_cells())
            if count > free + 1:
                raise IllegalMove(
                    "cell-limit",
                    f"moving {count} cards from a FreeCell pile needs {count - 1} free cells, and {free} of 4 are free",
                )
        lead = pile[-count]
        destination = self.piles[t]
        whole = count == len(pile)
        if target_kind is PileKind.CELL:
            if destination:
                raise IllegalMove("cell-occupied", f"cell {self.PILES[t].name} already holds a card")
            if count != 1:
                raise IllegalMove("one-card-per-cell", "a cell holds one card")
            if source_kind is PileKind.CELL:
                raise IllegalMove("pointless", "moving a card from cell to cell changes nothing")
        elif target_kind is PileKind.FOUNDATION:
            self._check_foundation(lead, count, t)
        elif target_kind is PileKind.SCORPION:
            if not destination:
                if rank_of(lead) != 13:
                    raise IllegalMove("empty-needs-king", "an empty Scorpion pile takes only a King-led group")
                if whole and source_kind is PileKind.SCORPION:
                    raise IllegalMove("pointless", "moving a whole pile to an empty pile of its kind changes nothing")
            elif destination[-1] != lead + 1 or rank_of(lead) == 13:
                raise IllegalMove(
                    "build-in-suit",
                    f"on a Scorpion pile, {card_text(lead)} needs the card of its suit one rank higher,"
                    f" not {card_text(destination[-1])}",
                )
        else:  # FreeCell pile
            if not destination:
                if whole and source_kind is PileKind.FREECELL:
                    raise IllegalMove("pointless", "moving a whole pile to an empty pile of its kind changes nothing")
            else:
                top = destination[-1]
                if rank_of(top) != rank_of(lead) + 1 or (top >= 26) == (lead >= 26):
                    raise IllegalMove(
                        "build-alternate",
                        f"on a FreeCell pile, {card_text(lead)} needs a card of the other colour one rank higher,"
                        f" not {card_text(top)}",
                    )

    def _check_foundation(self, card: int, count: int, target: int) -> None:
        if count != 1:
            raise IllegalMove("foundation-one-card", "cards go to a foundation one at a time")
        suit = suit_of(card)
        if target != FOUNDATION + suit:
            home = self.PILES[FOUNDATION + suit].name
            raise IllegalMove("foundation-suit", f"{card_text(card)} belongs on the {home} foundation")
        built = len(self.piles[target])
        if built != rank_of(card) - 1:
            needed = "its Ace" if built == 0 else card_text(card_of(built + 1, suit))
            raise IllegalMove("foundation-order", f"{card_text(card)} cannot go home yet: first {needed}")

    def _play(self, move: Move, ops: list[Op]) -> None:
        piles = self.piles
        s, count, t = move.source, move.count, move.target
        source = piles[s]
        if count == 1:
            piles[t].append(source.pop())
        else:
            piles[t].extend(source[-count:])
            del source[-count:]
        ops.append((OP_MOVE, s, t, count))
        if self.options.autoplay is not Autoplay.OFF:
            self._autoplay(ops)

    def _autoplay(self, ops: list[Op]) -> None:
        """Send cards home until none qualifies: any that fits ("all"), or only safe ones."""
        piles = self.piles
        safe = self.options.autoplay is Autoplay.SAFE
        played = True
        while played:
            played = False
            for p in _AUTOPLAY_SOURCES:
                pile = piles[p]
                if not pile:
                    continue
                card = pile[-1]
                suit = card // 13
                rank0 = card % 13  # rank - 1
                home = piles[FOUNDATION + suit]
                if len(home) != rank0:
                    continue
                if safe and rank0 >= 2:
                    # Rank r is safe once both other-colour foundations hold r-1 cards.
                    first, second = _OTHER_COLOUR[suit]
                    if len(piles[FOUNDATION + first]) < rank0 or len(piles[FOUNDATION + second]) < rank0:
                        continue
                home.append(pile.pop())
                ops.append((OP_MOVE, p, FOUNDATION + suit, 1))
                played = True


def pysol_piles(deal: Deal) -> list[list[int]]:
    """The eight tableau piles of ``deal`` in PySolFC's order (its piles 1-4 hold 7 cards)."""
    cards = talon(deal)
    piles: list[list[int]] = [[] for _ in range(8)]
    for _row in range(6):
        for pile in piles:
            pile.append(cards.pop())
    for pile in piles[:4]:
        pile.append(cards.pop())
    return piles
