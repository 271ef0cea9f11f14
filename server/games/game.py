"""The board model shared by both games: piles, moves, undo, views and patches.

A :class:`Game` is a mutable position plus the list of moves that led to it,
in the manner of python-chess's ``Board``:

- :meth:`Game.legal_moves` lists every distinct legal move in a fixed order;
- :meth:`Game.apply` checks a move, plays it and returns the pile patches a
  client needs; :meth:`Game.undo` takes the last move back the same way;
- :meth:`Game.push` and :meth:`Game.pop` do the same without checks or patches,
  for the solver and for replays of moves already known to be legal.

Every pile, whatever its kind, is a list of cards from the bottom up, with
``hidden[i]`` face-down cards at its bottom. Each player move is recorded as a
list of primitive operations (move cards, turn a card, remove a suit, deal the
stock) so that undo reverts exactly what the move caused, automatic effects
included.
"""

from __future__ import annotations

import enum
import itertools
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Final, NamedTuple

from server.games.cards import CARD_TEXTS, Card, card_text, parse_card, suit_of
from server.games.deals import Deal
from server.games.errors import IllegalMove, InvalidNotation, NothingToUndo, quoted
from server.games.options import Options

#: What may stand around and between the parts of a move's text: ASCII space and tab only.
_BLANKS: Final = " \t"
#: What separates the card from the target in a move's text.
_SEPARATORS: Final = re.compile(f"[{_BLANKS}>]+")
#: Cards by their text in a move (cleaned): parse_card's common case; it reads the rest.
_CARDS_BY_TEXT: Final = {text.lower(): card for card, text in enumerate(CARD_TEXTS)}


class PileKind(enum.Enum):
    """What a pile is, which decides what it accepts and what leaves it."""

    SCORPION = "scorpion"  # tableau pile built down in suit
    FREECELL = "freecell"  # tableau pile built down in alternate colours
    CELL = "cell"
    FOUNDATION = "foundation"
    STOCK = "stock"


def builds_on(kind: PileKind, lower: Card, upper: Card) -> bool:
    """Whether ``upper`` lying on ``lower`` follows the building rule of a pile of ``kind``:
    one rank lower, and the same suit (Scorpion piles) or the other colour (FreeCell piles)."""
    if upper % 13 + 1 != lower % 13:
        return False
    if kind is PileKind.FREECELL:
        return (lower >= 26) != (upper >= 26)
    return lower // 13 == upper // 13


@dataclass(frozen=True, slots=True)
class PileSpec:
    """A pile's name in the move notation and its kind."""

    name: str
    kind: PileKind


class Move(NamedTuple):
    """Take the top ``count`` cards of pile ``source`` to pile ``target``.

    Pile numbers index :attr:`Game.PILES`. The stock deal is the one move with
    ``source == target`` (the stock pile); build it with :meth:`Game.deal_move`.
    A move means nothing without a position: its text form names the card it
    takes, see :meth:`Game.move_text`.

    Immutable, hashable and ordered field by field, as a frozen ordered dataclass would
    be (and with the same hash), but a named tuple: :meth:`Game.legal_moves` builds one
    per legal move, and a tuple is built in a third of the time.
    """

    source: int
    count: int  # type: ignore[assignment]  # the field hides tuple.count(), which no move needs
    target: int

    @property
    def is_deal(self) -> bool:
        return self.source == self.target


class PilePatch(NamedTuple):
    """Pile ``pile`` keeps its first ``keep`` cards, then ``add`` is laid on them.

    Cards are in public form: ``None`` stands for a face-down card. A named tuple, like
    :class:`Move`: every move and undo a race plays builds some.
    """

    pile: int
    keep: int
    add: tuple[Card | None, ...]


class Progress(NamedTuple):
    """How far a game is: what a race shows of a rival's board.

    ``home`` counts cards on the foundations; ``ordered`` counts face-up tableau
    cards lying on the face-up card of their own suit one rank higher, on every kind
    of tableau pile (an alternating-colour pair on an Antares FreeCell pile does not
    count: seeds/antares.md, decision 14): a finer
    figure that grows before any card goes home; ``moves`` is the number of moves in
    the current line of play (an undone move no longer counts). A named tuple: every move
    a race shows builds one.
    """

    home: int
    ordered: int
    moves: int
    won: bool


PublicPiles = tuple[tuple[Card | None, ...], ...]


@dataclass(frozen=True, slots=True)
class FullView:
    """Everything about a position, face-down cards included. Never sent to clients."""

    piles: tuple[tuple[Card, ...], ...]
    hidden: tuple[int, ...]


# Primitive operations of a recorded move: (code, a, b, n).
OP_MOVE: Final = 0  # n cards from pile a onto pile b, order kept
OP_FLIP: Final = 1  # turn the top face-down card of pile a face up
OP_SUIT_HOME: Final = 2  # the top 13 cards of pile a onto foundation b, order reversed
OP_DEAL: Final = 3  # one stock card (pile a) onto each of piles 0 .. n-1

Op = tuple[int, int, int, int]


class Game(ABC):
    """A game in progress: the position and the moves that led to it."""

    VARIANT: ClassVar[str]
    PILES: ClassVar[tuple[PileSpec, ...]]
    #: Pile number of the stock, or -1 for games without one.
    STOCK: ClassVar[int] = -1
    #: Pile number of the first foundation; foundation ``FOUNDATION + suit`` holds that suit.
    FOUNDATION: ClassVar[int]
    #: Whether the game deals cards face down.
    HAS_FACE_DOWN_CARDS: ClassVar[bool]
    #: Whether players build the foundations card by card (Antares), or whole suits go
    #: home by themselves (Scorpion).
    BUILDS_FOUNDATIONS: ClassVar[bool]

    #: Pile numbers of the tableau piles (either kind): derived from ``PILES`` once per
    #: variant (:meth:`__init_subclass__`).
    _TABLEAU: ClassVar[tuple[int, ...]] = ()
    #: What follows the card in a move's text, by target pile: ``>h`` for a foundation.
    _TARGET_TEXTS: ClassVar[tuple[str, ...]] = ()
    #: Pile numbers by name, and the piles a move can take a card from (all but the stock).
    _PILE_NUMBERS: ClassVar[dict[str, int]] = {}
    _SOURCES: ClassVar[tuple[int, ...]] = ()

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        piles = getattr(cls, "PILES", ())
        tableau = (PileKind.SCORPION, PileKind.FREECELL)
        cls._TABLEAU = tuple(i for i, spec in enumerate(piles) if spec.kind in tableau)
        cls._TARGET_TEXTS = tuple(">h" if spec.kind is PileKind.FOUNDATION else ">" + spec.name for spec in piles)
        cls._PILE_NUMBERS = {spec.name: i for i, spec in enumerate(piles)}
        cls._SOURCES = tuple(i for i, spec in enumerate(piles) if spec.kind is not PileKind.STOCK)

    def __init__(self, deal: Deal | None, options: Options, piles: list[list[Card]], hidden: list[int]) -> None:
        """Start from a given position; use :meth:`new` for a dealt game."""
        if len(piles) != len(self.PILES) or len(hidden) != len(self.PILES):
            raise ValueError(f"{self.VARIANT} has {len(self.PILES)} piles")
        self.deal = deal
        self.options = options
        self.piles = piles
        self.hidden = hidden
        self._history: list[tuple[Move, list[Op]]] = []
        # Moves never add or remove cards: the game is won when all of them are home.
        self._cards = sum(map(len, piles))

    @classmethod
    def new(cls, deal: Deal | int | str, options: Options | None = None) -> Game:
        """The starting position of ``deal`` (a :class:`Deal`, a number or ``"msN"``)."""
        if isinstance(deal, int):
            deal = Deal(deal)
        elif isinstance(deal, str):
            deal = Deal.parse(deal)
        piles, hidden = cls.layout(deal)
        return cls(deal, options or Options(), piles, hidden)

    @classmethod
    def replay(cls, deal: Deal | int | str, options: Options | None, moves: Iterable[str]) -> Game:
        """Rebuild a game from its deal, options and move list in text form.

        Raises :class:`InvalidNotation` or :class:`IllegalMove` at the first bad move.
        """
        game = cls.new(deal, options)
        for text in moves:
            game.apply(game.parse_move(text))
        return game

    @classmethod
    @abstractmethod
    def layout(cls, deal: Deal) -> tuple[list[list[Card]], list[int]]:
        """The piles and face-down counts of ``deal``'s starting position."""

    # -- rules, provided by each variant -------------------------------------------

    @abstractmethod
    def legal_moves(self) -> list[Move]:
        """Every distinct legal move, in a fixed order.

        Of several empty piles (or cells) that are interchangeable, only the first
        is listed as a target; :meth:`apply` accepts the others too. Moves that would
        only carry a whole pile onto an empty pile of the same role are not moves.
        """

    @abstractmethod
    def check(self, move: Move) -> None:
        """Raise :class:`IllegalMove`, naming the rule, unless ``move`` is legal here."""

    @abstractmethod
    def _play(self, move: Move, ops: list[Op]) -> None:
        """Carry out a legal ``move`` and its automatic effects, recording each in ``ops``."""

    # -- playing -------------------------------------------------------------------

    def push(self, move: Move) -> None:
        """Play ``move``, which must be legal here (unchecked: for solvers and replays)."""
        ops: list[Op] = []
        self._play(move, ops)
        self._history.append((move, ops))

    def pop(self) -> Move:
        """Take back the last move with everything it caused; return that move."""
        if not self._history:
            raise NothingToUndo("there is no move to undo")
        move, ops = self._history.pop()
        piles = self.piles
        for code, a, b, n in reversed(ops):
            if code == OP_MOVE:
                source = piles[b]
                piles[a].extend(source[-n:])
                del source[-n:]
            elif code == OP_FLIP:
                self.hidden[a] += 1
            elif code == OP_SUIT_HOME:
                home = piles[b]
                run = home[-13:]
                del home[-13:]
                run.reverse()
                piles[a].extend(run)
            else:  # OP_DEAL
                stock = piles[a]
                for column in range(n - 1, -1, -1):
                    stock.append(piles[column].pop())
                self.hidden[a] = n
        return move

    def apply(self, move: Move) -> tuple[PilePatch, ...]:
        """Check and play ``move``; return the patches that turn the old public view into the new.

        Raises :class:`IllegalMove` (naming the rule) and changes nothing if the
        move is not legal.
        """
        self.check(move)
        lengths = list(map(len, self.piles))
        hidden = self.hidden[:]
        self.push(move)
        return self._patches(lengths, hidden, self._history[-1][1], forward=True)

    def undo(self) -> tuple[PilePatch, ...]:
        """Take back the last move (:class:`NothingToUndo` at the deal); return the patches."""
        if not self._history:
            raise NothingToUndo("there is no move to undo")
        ops = self._history[-1][1]
        lengths = list(map(len, self.piles))
        hidden = self.hidden[:]
        self.pop()
        return self._patches(lengths, hidden, ops, forward=False)

    def _patches(self, lengths: list[int], hidden: list[int], ops: list[Op], forward: bool) -> tuple[PilePatch, ...]:
        """The patches for ``ops`` played forward (a move) or backward (its undo), from the
        pile ``lengths`` and ``hidden`` counts before. Each touched pile keeps the cards below
        the lowest position any operation changed, and gets the rest of its public form."""
        before = lengths[:]
        keep: dict[int, int] = {}  # pile -> the lowest position an operation changed
        get = keep.get
        # ``touch(pile, position)`` is inlined below as ``if position < get(pile, 52)``: this
        # runs for every move and undo a race plays.
        for code, a, b, n in ops if forward else reversed(ops):
            if code == OP_FLIP:
                # Forward a card turns up, backward it turns down: either way it changes.
                if forward:
                    hidden[a] -= 1
                    position = hidden[a]
                else:
                    position = hidden[a]
                    hidden[a] += 1
                if position < get(a, 52):
                    keep[a] = position
            elif code == OP_DEAL:
                columns = range(n)
                if forward:
                    lengths[a] -= n
                    if lengths[a] < get(a, 52):
                        keep[a] = lengths[a]
                    for column in columns:
                        if lengths[column] < get(column, 52):
                            keep[column] = lengths[column]
                        lengths[column] += 1
                else:
                    for column in columns:
                        lengths[column] -= 1
                        if lengths[column] < get(column, 52):
                            keep[column] = lengths[column]
                    if lengths[a] < get(a, 52):
                        keep[a] = lengths[a]
                    lengths[a] += n
            else:  # OP_MOVE, OP_SUIT_HOME
                source, target = (a, b) if forward else (b, a)
                lengths[source] -= n
                if lengths[source] < get(source, 52):
                    keep[source] = lengths[source]
                if lengths[target] < get(target, 52):
                    keep[target] = lengths[target]
                lengths[target] += n
        patches = []
        piles, now_hidden = self.piles, self.hidden
        for pile in sorted(keep):
            position = keep[pile]
            cards = piles[pile]
            if position == before[pile] == len(cards):
                continue  # cards came and went again (autoplay): nothing to tell
            # The public form of the pile from ``position`` up (face-down cards as None).
            down = now_hidden[pile]
            if position >= down:
                add: tuple[Card | None, ...] = tuple(cards[position:])
            else:
                add = (None,) * (down - position) + tuple(cards[down:])
            patches.append(PilePatch(pile, position, add))
        return tuple(patches)

    # -- reading the position --------------------------------------------------------

    @property
    def moves(self) -> list[Move]:
        """The moves of the current line of play, oldest first (a copy)."""
        return [move for move, _ in self._history]

    @property
    def move_count(self) -> int:
        return len(self._history)

    def is_won(self) -> bool:
        """Won when every card is home: no card is left in the tableau, cells or stock."""
        piles, foundation = self.piles, self.FOUNDATION
        home = len(piles[foundation]) + len(piles[foundation + 1]) + len(piles[foundation + 2])
        return home + len(piles[foundation + 3]) == self._cards

    def is_stuck(self) -> bool:
        """True when the game is not won and no legal move remains."""
        return not self.is_won() and not self.legal_moves()

    def progress(self) -> Progress:
        piles, hidden = self.piles, self.hidden
        foundation = self.FOUNDATION
        home = len(piles[foundation]) + len(piles[foundation + 1]) + len(piles[foundation + 2])
        home += len(piles[foundation + 3])
        ordered = 0
        for i in self._TABLEAU:
            # Both cards of a pair must be face up, or progress would leak a hidden card.
            face = piles[i][hidden[i] :]
            # builds_on(SCORPION, lower, upper), inlined (this runs for every move a race
            # shows): the same suit one rank higher is the next card number, unless that
            # number is an Ace (a King's number plus one is the next suit's Ace).
            for lower, upper in itertools.pairwise(face):
                if lower == upper + 1 and lower % 13:
                    ordered += 1
        return Progress(home, ordered, len(self._history), home == self._cards)

    def _public_pile(self, pile: int) -> tuple[Card | None, ...]:
        cards = self.piles[pile]
        hidden = self.hidden[pile]
        if not hidden:
            return tuple(cards)
        return (None,) * hidden + tuple(cards[hidden:])

    def public_piles(self) -> PublicPiles:
        """Every pile from the bottom up, each face-down card replaced by ``None``."""
        return tuple(self._public_pile(i) for i in range(len(self.piles)))

    def full_view(self) -> FullView:
        """Every pile with every card, and how many lie face down at its bottom."""
        return FullView(tuple(tuple(pile) for pile in self.piles), tuple(self.hidden))

    def copy(self, history: bool = True) -> Game:
        """An independent game with the same position and, unless ``history`` is False,
        the same moves to undo."""
        twin = type(self)(self.deal, self.options, [list(p) for p in self.piles], list(self.hidden))
        if history:
            twin._history = [(move, list(ops)) for move, ops in self._history]
        return twin

    def face_up(self, pile: int) -> Sequence[Card]:
        return self.piles[pile][self.hidden[pile] :]

    # -- notation -------------------------------------------------------------------

    def deal_move(self) -> Move:
        """The stock deal: every stock card at once (only for games with a stock)."""
        if self.STOCK < 0:
            raise IllegalMove("no-stock", f"{self.VARIANT.capitalize()} has no stock to deal")
        return Move(self.STOCK, len(self.piles[self.STOCK]), self.STOCK)

    def move_text(self, move: Move) -> str:
        """The canonical text of ``move`` in this position: ``deal``, or card ``>`` target.

        Examples: ``"QS>5"``, ``"7H>c1"``, ``"AS>h"``.
        """
        source, count, target = move
        if source == target:
            return "deal"
        return CARD_TEXTS[self.piles[source][-count]] + self._TARGET_TEXTS[target]

    def parse_move(self, text: str) -> Move:
        """Read a move in this position. Raises :class:`InvalidNotation` or :class:`IllegalMove`.

        Accepted: ``deal`` (or ``d``); ``CARD>TARGET`` or ``CARD TARGET`` where CARD
        is a face-up card (it moves with every card on top of it) or a pile name
        (its top card), and TARGET a pile name, ``h`` for the card's foundation, or
        a pile kind letter (``c``, ``s``, ``f``) for the first empty pile of that kind.
        The result is checked only as far as reading needs; :meth:`apply` checks the rules.
        """
        if not text.isascii():
            # Only ASCII: str.lower() and split() would read the Kelvin sign as k, a long s
            # as s and a no-break space as a separator.
            raise InvalidNotation(f"{quoted(text)} is not a move: write it in plain ASCII letters, like 'QS>5'")
        cleaned = text.strip(_BLANKS).lower()
        if cleaned in ("deal", "d"):
            return self.deal_move()
        parts = [part for part in _SEPARATORS.split(cleaned) if part]
        if len(parts) != 2:
            raise InvalidNotation(f"{quoted(text)} is not a move: write 'deal' or a card and a target, like 'QS>5'")
        source, count = self._read_source(parts[0])
        return Move(source, count, self._read_target(parts[1], self.piles[source][-count]))

    def _read_source(self, token: str) -> tuple[int, int]:
        pile = self._PILE_NUMBERS.get(token)
        if pile is not None:
            if not self.face_up(pile) or self.PILES[pile].kind is PileKind.STOCK:
                raise IllegalMove("empty-source", f"pile {token} has no face-up card to move")
            return pile, 1
        card = _CARDS_BY_TEXT.get(token)
        if card is None:
            card = parse_card(token)
        piles, hidden = self.piles, self.hidden
        for i in self._SOURCES:
            cards = piles[i]
            if card in cards:  # each card lies in one place
                k = cards.index(card)
                if k >= hidden[i]:
                    return i, len(cards) - k
                break
        # The same words whether the card is face down, in the stock or absent:
        # an error must not tell where a hidden card is.
        raise IllegalMove("no-such-card", f"{card_text(card)} is not face up on the table")

    def _read_target(self, token: str, card: Card) -> int:
        pile = self._PILE_NUMBERS.get(token)
        if pile is not None:
            return pile
        if token == "h":
            return self.FOUNDATION + suit_of(card)
        kinds = {"c": PileKind.CELL, "s": PileKind.SCORPION, "f": PileKind.FREECELL}
        kind = kinds.get(token)
        if kind is not None and any(spec.kind is kind for spec in self.PILES):
            same_kind = [i for i, spec in enumerate(self.PILES) if spec.kind is kind]
            for i in same_kind:
                if not self.piles[i]:
                    return i
            what = "column" if self.STOCK >= 0 else f"{kind.value} pile"
            raise IllegalMove("no-empty-pile", f"there is no empty {what}")
        names = ", ".join(spec.name for spec in self.PILES if spec.kind is not PileKind.STOCK)
        raise InvalidNotation(f"{quoted(token)} is not a pile: use one of {names}, or h for the foundation")


def pile_numbers(specs: Sequence[PileSpec], kind: PileKind) -> tuple[int, ...]:
    """The numbers of the piles of ``kind``, in order."""
    return tuple(i for i, spec in enumerate(specs) if spec.kind is kind)
