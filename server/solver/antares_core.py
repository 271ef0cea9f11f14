"""A compact Antares position for the search: moves, play and estimate without the engine.

A position is ``(piles, cells, home)``: the eight tableau piles as ``bytes`` in the
engine's pile order (``s1``-``s4`` then ``f1``-``f4``, cards bottom first), the cell
cards as sorted ``bytes`` (cells are interchangeable) and the four foundation counts
as ``bytes``. Slicing, ``find`` and joining are C-level calls on these, which is
what makes the search several times cheaper per position than ``push``/``pop`` on
the engine. The rules are those of :mod:`server.games.antares` (seeds/antares.md);
``tests/solver/test_antares_search.py`` checks the moves listed here against
``Antares.legal_moves`` and the positions played here against ``Antares.push`` on
thousands of positions.

:func:`moves`, :func:`play` and the :class:`Estimator` run in C (``antares_core.c``, a
line-for-line port: the same moves in the same order, positions and estimates) where it is
built and current, several times cheaper a position; :func:`python_moves` and
:func:`python_play` are the reference it is tested against.

A move is ``(source, lead, target)``: ``source`` a tableau pile (0-7) with ``lead``
the index of the group's first card in it, or :data:`CELL` with ``lead`` the card;
``target`` a tableau pile, :data:`CELL` (any free cell) or :data:`HOME`.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from server.games import Autoplay, Game, Move
from server.games.antares import FOUNDATION
from server.solver.compiled import native_antares

CELL: Final = 8
HOME: Final = 9
#: Autoplay as a number: 0 off, 1 safe, 2 all.
AUTOPLAY_CODE: Final = {Autoplay.OFF: 0, Autoplay.SAFE: 1, Autoplay.ALL: 2}
_OTHER_COLOUR: Final = ((2, 3), (2, 3), (0, 1), (0, 1))
_KINGS: Final = (12, 25, 38, 51)
#: Piles whose disorder an :class:`Estimator` remembers, per kind of pile.
_MEMO_LIMIT: Final = 200_000

Piles = tuple[bytes, ...]
Position = tuple[Piles, bytes, bytes]
FastMove = tuple[int, int, int]


def encode(game: Game) -> Position:
    """The compact form of an Antares ``game``'s position."""
    piles = tuple(bytes(game.piles[i]) for i in range(8))
    cells = bytes(sorted(game.piles[i][0] for i in range(8, 12) if game.piles[i]))
    home = bytes(len(game.piles[FOUNDATION + suit]) for suit in range(4))
    return piles, cells, home


def key(piles: Piles, cells: bytes) -> bytes:
    """The canonical key (see :mod:`server.solver.keys`): Scorpion piles sorted, FreeCell
    piles sorted, cells sorted; foundations are implied by the cards left on the table."""
    return b"\xfe".join((b"\xff".join(sorted(piles[:4])), b"\xff".join(sorted(piles[4:])), cells))


def is_won(home: bytes) -> bool:
    return home == b"\r\r\r\r"


def _run_length(pile: bytes, limit: int) -> int:
    """Cards on top of a non-empty FreeCell pile forming a run down in alternate colours, at most ``limit``."""
    run, size = 1, len(pile)
    while run < size and run < limit:
        lower, upper = pile[-run - 1], pile[-run]
        if lower % 13 != upper % 13 + 1 or (lower >= 26) == (upper >= 26):
            break
        run += 1
    return run


def _fits_safely(card: int, home: bytearray | bytes, mode: int) -> bool:
    """Whether autoplay of ``mode`` sends ``card`` home (it must fit its foundation)."""
    rank0 = card % 13
    if home[card // 13] != rank0:
        return False
    if mode == 2 or rank0 < 2:
        return True
    first, second = _OTHER_COLOUR[card // 13]
    return home[first] >= rank0 and home[second] >= rank0


def _autoplay(piles: list[bytes], cells: bytes, home: bytearray, mode: int) -> bytes:
    """Send cards home as the engine's autoplay does (its final position does not depend
    on the order); returns the cells left."""
    moved = True
    while moved:
        moved = False
        for i in range(8):
            pile = piles[i]
            while pile and _fits_safely(pile[-1], home, mode):
                home[pile[-1] // 13] += 1
                pile = pile[:-1]
                moved = True
            piles[i] = pile
        for card in cells:
            if _fits_safely(card, home, mode):
                home[card // 13] += 1
                cells = cells.replace(bytes((card,)), b"")
                moved = True
    return cells


def forced_move(piles: Piles, cells: bytes, home: bytes) -> FastMove | None:
    """With autoplay off, a safe foundation move to play first and alone, if there is one
    (sound: see :func:`server.solver.pruning.forced_home`)."""
    for s in range(8):
        if piles[s] and _fits_safely(piles[s][-1], home, 1):
            return (s, len(piles[s]) - 1, HOME)
    for card in cells:
        if _fits_safely(card, home, 1):
            return (CELL, card, HOME)
    return None


def python_moves(piles: Piles, cells: bytes, home: bytes) -> list[FastMove]:
    """Every legal move of the position, each once (the engine's ``legal_moves``, in another order)."""
    limit = 5 - len(cells)  # free cells + 1
    free = limit > 1
    table = b"\xfe".join(piles)
    find = table.find
    starts = []
    at = 0
    for pile in piles:
        starts.append(at)
        at += len(pile) + 1
    # The runs of the FreeCell piles (the longest group each may move), found when first asked for.
    runs = [0, 0, 0, 0, -1, -1, -1, -1]
    out: list[FastMove] = []
    last: list[FastMove] = []  # moves of top cards home and to a cell, listed after the others
    empty_scorpion = empty_freecell = -1
    for t in range(8):
        pile = piles[t]
        if not pile:
            if t < 4:
                if empty_scorpion < 0:
                    empty_scorpion = t
            elif empty_freecell < 0:
                empty_freecell = t
            continue
        top = pile[-1]
        rank0 = top % 13
        if home[top // 13] == rank0:
            last.append((t, len(pile) - 1, HOME))
        if free:
            last.append((t, len(pile) - 1, CELL))
        if not rank0:
            continue  # nothing goes onto an Ace
        if t < 4:
            wanted: tuple[int, ...] = (top - 1,)
        else:
            first, second = _OTHER_COLOUR[top // 13]
            wanted = (first * 13 + rank0 - 1, second * 13 + rank0 - 1)
        for card in wanted:
            if card in cells:
                out.append((CELL, card, t))
                continue
            at = find(card)
            if at < 0:
                continue  # at home
            s = bisect_right(starts, at) - 1
            if s == t:
                continue
            k = at - starts[s]
            if s >= 4:
                run = runs[s]
                if run < 0:
                    run = runs[s] = _run_length(piles[s], limit)
                if len(piles[s]) - k > run:
                    continue
            out.append((s, k, t))
    if empty_scorpion >= 0:
        for card in _KINGS:
            if card in cells:
                out.append((CELL, card, empty_scorpion))
                continue
            at = find(card)
            if at < 0:
                continue
            s = bisect_right(starts, at) - 1
            k = at - starts[s]
            if s < 4:
                if k:  # a whole Scorpion pile would change nothing
                    out.append((s, k, empty_scorpion))
                continue
            run = runs[s]
            if run < 0:
                run = runs[s] = _run_length(piles[s], limit)
            if len(piles[s]) - k <= run:
                out.append((s, k, empty_scorpion))
    if empty_freecell >= 0:
        for s in range(8):
            size = len(piles[s])
            if size:
                # Any group of a Scorpion pile; a run of a FreeCell pile, but not all of it.
                if s < 4:
                    low = 0
                else:
                    run = runs[s]
                    if run < 0:
                        run = runs[s] = _run_length(piles[s], limit)
                    low = max(1, size - run)
                out.extend([(s, k, empty_freecell) for k in range(low, size)])
        out.extend([(CELL, card, empty_freecell) for card in cells])
    out.extend(last)
    for card in cells:
        if home[card // 13] == card % 13:
            out.append((CELL, card, HOME))
    return out


def python_play(position: Position, move: FastMove, mode: int, settled: bool = True) -> Position:
    """The position after ``move`` and the autoplay of ``mode`` it triggers.

    ``settled`` says that autoplay has nothing to send home in ``position`` (true of
    every position after a move; the deal itself may not be): then a move that sends
    no card home can only make autoplay play the two cards it leaves on top, and the
    full autoplay pass is skipped when neither fits.
    """
    piles_in, cells, home_in = position
    s, k, t = move
    piles = list(piles_in)
    if s == CELL:
        group = bytes((k,))
        cells = cells.replace(group, b"")
    else:
        pile = piles[s]
        group, piles[s] = pile[k:], pile[:k]
    if t == HOME:
        home = bytearray(home_in)
        home[group[0] // 13] += 1
        if mode:
            cells = _autoplay(piles, cells, home, mode)
        return tuple(piles), cells, bytes(home)
    if t == CELL:
        cells = bytes(sorted(cells + group))
    else:
        piles[t] += group
    # Most moves send nothing home: the foundations are then the position's own.
    if mode and (
        not settled
        or _fits_safely(group[-1], home_in, mode)
        or (s != CELL and k and _fits_safely(piles[s][-1], home_in, mode))
    ):
        home = bytearray(home_in)
        cells = _autoplay(piles, cells, home, mode)
        return tuple(piles), cells, bytes(home)
    return tuple(piles), cells, home_in


def engine_move(game: Game, move: FastMove) -> Move:
    """The engine's move for ``move`` in ``game``, whose position must be the one it was
    listed in (same piles in the same order; cells in any order)."""
    s, k, t = move
    piles = game.piles
    if s == CELL:
        source, count = next(i for i in range(8, 12) if piles[i] and piles[i][0] == k), 1
    else:
        source, count = s, len(piles[s]) - k
    if t == HOME:
        target = FOUNDATION + piles[source][-count] // 13
    elif t == CELL:
        target = next(i for i in range(8, 12) if not piles[i])
    else:
        target = t
    return Move(source, count, target)


@dataclass(frozen=True, slots=True)
class Weights:
    """What the estimate counts against a position (lower looks closer to a win)."""

    not_home: int = 2  # each card not yet home
    burying: int = 3  # each card lying above a card that could go home next
    disorder: int = 2  # each card not built on the card under it by its pile's rule
    cell: int = 1  # each occupied cell


class Estimator:
    """``estimate(position)``: the weighted count of :class:`Weights`.

    The disorder of a pile depends on its cards alone, so it is remembered per pile
    (piles recur across positions far more than positions do); the cards burying the
    next card of each suit take one ``find`` per suit.
    """

    def __init__(self, weights: Weights, native: bool = True) -> None:
        self.weights = weights
        self._weights = (weights.not_home, weights.burying, weights.disorder, weights.cell)
        self._disorder: list[dict[bytes, int]] = [{}, {}]
        #: The C port's estimate (the same figures), unless told not to or not built.
        self._native = _NATIVE if native else None

    def __call__(self, position: Position) -> int:
        if self._native is not None:
            return self._native.estimate(position, self._weights)  # type: ignore[no-any-return]
        piles, cells, home = position
        not_home, burying, disorder, cell = self._weights
        table = b"\xfe".join(piles)
        find = table.find
        size = len(table)
        buried = 0
        for card in (home[0], 13 + home[1], 26 + home[2], 39 + home[3]):  # the next of each suit
            at = find(card)
            if at >= 0:
                end = find(254, at)
                buried += (size if end < 0 else end) - at - 1
        disordered = 0
        for same_suit, memo, group in ((True, self._disorder[0], piles[:4]), (False, self._disorder[1], piles[4:])):
            for pile in group:
                count = memo.get(pile)
                if count is None:
                    if len(memo) > _MEMO_LIMIT:
                        memo.clear()  # a bound on memory; the figures are cheap to find again
                    count = memo[pile] = _disorder(pile, same_suit)
                disordered += count
        return not_home * (52 - sum(home)) + cell * len(cells) + burying * buried + disorder * disordered


def _disorder(pile: bytes, same_suit: bool) -> int:
    count = 0
    for k in range(1, len(pile)):
        under, card = pile[k - 1], pile[k]
        if under % 13 != card % 13 + 1 or (under // 13 != card // 13 if same_suit else (under >= 26) == (card >= 26)):
            count += 1
    return count


_NATIVE: Final = native_antares()
#: Every legal move of the position, each once (the engine's ``legal_moves``, in another
#: order): :func:`python_moves`, in C where built.
moves: Final[Callable[[Piles, bytes, bytes], list[FastMove]]] = python_moves if _NATIVE is None else _NATIVE.moves
#: The position after a move and the autoplay it triggers: :func:`python_play`, in C where built.
play: Final[Callable[..., Position]] = python_play if _NATIVE is None else _NATIVE.play
