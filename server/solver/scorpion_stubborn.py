"""Partial-order reduction for the Scorpion search: stubborn sets after the stock deal.

Once the stock is dealt, the search may try only a *stubborn* subset of a position's moves
and still finds a win whenever one exists. This module picks that subset.

**Moves as events.** After the deal there are two kinds of move: ``M(x)``, the group led by
the face-up card ``x`` onto ``x + 1`` (its successor, the top card of another column), and
``K(k)``, the group led by the King ``k`` into an empty column (never a whole column: that
changes nothing). Say a card *departs* when it leads a move or goes home in its suit.

**The position is a function of the set of departures.** Take the position ``S`` the
search is at. A card that has not departed since ``S`` still lies on the card it lay on in
``S`` (the card directly on a card changes only when that card departs; a group led lower
carries both). After ``M(x)`` it lies on ``x + 1`` for good (nothing else can move it off),
so ``M(x)`` happens at most once; after ``K(k)`` the King lies at the bottom of a column,
which it never leaves but home, so ``K(k)`` happens at most once too. A face-down card is
face up exactly when the card that lay on it has departed, and a suit is home exactly when
its cards lie in order, King to Ace, with nothing left on the Ace. So the set of departures
made since ``S`` decides every column (their order on the table aside, which the search's
keys ignore): **two orders of the same moves that both can be played reach the same
position.** This is the commutation that partial-order reduction needs, for free.

**Every M(x) is needed.** A suit goes home only with each of its cards lying on its
successor, so a win plays ``M(x)`` for every non-King card ``x`` that does not lie on
``x + 1`` in ``S`` (Kings have no ``M``).

**The reduction.** A set ``T`` of moves (enabled or not) is stubborn when:

1. ``T`` holds an enabled ``M(y)``;
2. for every enabled ``t`` in ``T``, every move that can disable ``t``, played after any
   moves outside ``T``, is in ``T``, and ``t`` disables no move outside ``T``;
3. for every disabled ``t`` in ``T``, some move of ``T`` must be played before ``t`` can
   become enabled (a *necessary enabling set*).

Then the search may play only the enabled moves of ``T``. Proof: let ``w`` be a winning line
from ``S``. It holds ``M(y)`` (1), so it holds a move of ``T``; let ``t`` be the first,
``w = u t v`` with ``u`` outside ``T``. ``t`` is enabled in ``S``: were it disabled, a move of
``T`` would come before it (3). Nothing in ``u`` disables ``t`` and ``t`` disables nothing in
``u`` (2), so ``t u v`` can be played too, and it holds the same moves, so it reaches the
same won position. By induction on the length of ``w``, the reduced search finds a win
(the transposition table, column symmetry and the lost-position test prune only positions
already searched, their mirror images, or positions without a win; see the search).

**What disables what.** ``M(y)``, with ``y`` in column ``A`` and ``y + 1`` the top of ``B``,
needs ``y`` face up (never undone), ``y + 1`` a top card (only ``y`` is ever put on it) and
the two in different columns. Groups only ever land on top cards, so they come together
only when the group holding ``y + 1`` lands on the top of the column holding ``y``: an
``M(z)`` led by a card ``z`` at or below ``y + 1``, with ``z + 1`` the top of ``y``'s column
(a King's group lands only in empty columns). Either set below holds a move of every
sequence that ends so (its first step), and each stays true as long as none of its moves is
played:

- *cut 1*, the cards that can move ``y + 1``: every face-up non-King card of ``B`` that does
  not lie on its successor (until one of them moves, ``y + 1`` stays above the same cards;
  a King's group taking it to an empty column brings no new card below it);
- *cut 2*, the moves that can change the top of ``y``'s column: a departure of a card above
  ``y`` that can lead, and ``M(g - 1)`` onto the top ``g`` (a group led lower than ``y``
  carries ``y``'s whole group, top included); until one is played the top stays ``g``, and
  ``M(g - 1)`` is the only move that lands on it.

``M(y)`` itself disables such landings (it brings ``y + 1``'s column under ``y``'s group),
so either cut serves condition 2 both ways; the closure takes the one adding fewer new
moves. It may also complete a suit on ``B``, taking that suit's King home: the ``K`` of each
face-up King of ``B`` joins too. ``K(k)`` needs an empty column, ``k`` face up and not at
home: every other King on the table may fill an empty column, and a change above ``k`` (a
departure there, or a move onto its column's top) may lead to its suit going home; all of
those join. ``K(k)`` disables only other Kings' moves (it fills an empty column).

**Necessary enabling sets.** A disabled ``M(x)``: if ``x`` is face down, or ``x + 1`` is
covered, the card ``c`` directly on it must depart first (a card that lies on its own
successor there never can; a King departs by ``K``, or home after a change above it); if
``x + 1`` is the top of ``x``'s own column, a card above ``x`` must depart; if ``x`` lies on
``x + 1`` or ``x + 1`` is home, it never becomes enabled. A disabled ``K(k)``:
if ``k`` is face down, the card on it must depart; with no empty column, some column's
bottom card must depart (the move of a non-King bottom card empties its column; a King at
the bottom leaves only home, after a change above it).

The cuts and enabling sets are over-approximations, which only makes ``T`` larger.
"""

from __future__ import annotations

from typing import Final

FACE_DOWN_BASE: Final = 100
#: ``K(k)`` is ``k + KING_MOVE`` among the move ids; ``M(x)`` is ``x``.
KING_MOVE: Final = 52
_IDS: Final = 2 * KING_MOVE + 1
#: A move id that stops a closure: a set holding it is given up.
_UNKNOWN: Final = 2 * KING_MOVE
_KINGS: Final = (12, 25, 38, 51)
#: Column numbers in the column-of table, above every card (a card off the table maps to itself).
_COLUMN_BASE: Final = 200
_COLUMN_MARKS: Final = tuple(bytes((_COLUMN_BASE + i,)) for i in range(7))
_INDEXES: Final = bytes(range(256))

FastMove = tuple[int, int, int]


def stubborn_moves(columns: tuple[bytes, ...], moves: list[FastMove]) -> list[FastMove]:
    """The moves of a stubborn set of the position (see the module docstring), in the
    order of ``moves``; ``moves`` itself when no set is smaller.

    ``columns`` are the search's columns, after the stock deal; ``moves`` all the legal
    moves, as the search makes them: ``(source, index of the lead card, target)``.
    """
    cards = b"".join([column[1:] for column in columns])
    column_of = bytes.maketrans(cards, b"".join([_COLUMN_MARKS[i] * (len(c) - 1) for i, c in enumerate(columns)]))
    index_of = bytes.maketrans(cards, b"".join([_INDEXES[1 : len(c)] for c in columns]))
    # The enabled moves by id: the index in ``moves`` plus one, 0 for disabled.
    enabled = [0] * _IDS
    seeds: list[int] = []
    empty_column = False
    for n, (s, k, t) in enumerate(moves):
        lead = columns[s][k]
        if len(columns[t]) == 1:
            enabled[lead + KING_MOVE] = n + 1
            empty_column = True
        else:
            enabled[lead] = n + 1
            seeds.append(lead)
    best: list[int] | None = None
    for seed in seeds:
        limit = len(moves) if best is None else len(best)
        members = _closure(columns, column_of, index_of, enabled, empty_column, seed, limit)
        if members is not None:
            best = members
            if len(best) == 1:
                break
    if best is None:
        return moves
    best.sort()
    return [moves[n - 1] for n in best]


def _closure(
    columns: tuple[bytes, ...],
    column_of: bytes,
    index_of: bytes,
    enabled: list[int],
    empty_column: bool,
    seed: int,
    limit: int,
) -> list[int] | None:
    """The enabled moves (indexes plus one) of the stubborn set grown from ``seed``, or
    None once it holds ``limit`` enabled moves (no better than what is known)."""
    member = [False] * _IDS
    member[seed] = True
    work = [seed]
    found: list[int] = []
    while work:
        x = work.pop()
        if enabled[x]:
            found.append(enabled[x])
            if len(found) >= limit:
                return None
        if x == _UNKNOWN:
            return None
        needs = _needs(columns, column_of, index_of, enabled, empty_column, member, x)
        for e in needs:
            if not member[e]:
                member[e] = True
                work.append(e)
    return found


def _needs(
    columns: tuple[bytes, ...],
    column_of: bytes,
    index_of: bytes,
    enabled: list[int],
    empty_column: bool,
    member: list[bool],
    x: int,
) -> list[int]:
    """The moves that must join a stubborn set holding move ``x``: its cut if enabled, a
    necessary enabling set if not (see the module docstring)."""
    if x >= KING_MOVE:
        king = x - KING_MOVE
        if column_of[king] < _COLUMN_BASE:
            return []  # home: never moves again
        column = columns[column_of[king] - _COLUMN_BASE]
        i = index_of[king]
        if i <= column[0] - FACE_DOWN_BASE:
            return _departures(columns, column_of, index_of, column[i + 1])
        if enabled[x]:
            # Other Kings fill empty columns; the King goes home after a change above it.
            kings = [k + KING_MOVE for k in _KINGS if k != king and column_of[k] >= _COLUMN_BASE]
            return kings + _leaders_above(column, i) + _landing(column)
        if empty_column:
            return []  # an empty column and k face up: k is at the bottom, a whole column
        needs: list[int] = []
        for other in columns:
            # A column empties when its bottom card leaves: a non-King by its M, a King only
            # home, after a change above it.
            bottom = other[1]
            needs += _leaders_above(other, 1) + _landing(other) if bottom % 13 == 12 else [bottom]
        return needs
    if column_of[x] < _COLUMN_BASE or x % 13 == 12 or column_of[x + 1] < _COLUMN_BASE:
        return []  # at home; a King has no M; a successor at home is never a top card again
    source = column_of[x] - _COLUMN_BASE
    a = columns[source]
    i = index_of[x]
    target = column_of[x + 1] - _COLUMN_BASE
    b = columns[target]
    j = index_of[x + 1]
    if i <= a[0] - FACE_DOWN_BASE:
        return _departures(columns, column_of, index_of, a[i + 1])
    if enabled[x]:
        low = b[0] - FACE_DOWN_BASE + 1
        cut1 = [b[n] for n in range(low, len(b)) if b[n] % 13 != 12 and (n == low or b[n - 1] != b[n] + 1)]
        cut2 = _leaders_above(a, i) + _landing(a)
        new1 = sum(1 for e in cut1 if not member[e])
        new2 = sum(1 for e in cut2 if not member[e])
        # The move may complete a suit on b, which would take a King of b home: its K joins.
        kings = [b[n] + KING_MOVE for n in range(max(low, 2), len(b)) if b[n] % 13 == 12]
        return kings + (cut1 if new1 <= new2 else cut2)
    if source == target:
        if j == i - 1:
            return []  # x lies on its successor, for good
        if j == len(b) - 1:
            return _leaders_above(a, i)  # x + 1 is the top of x's own column
    elif j == len(b) - 1:
        return [_UNKNOWN]  # enabled, but not among the moves given: no reduction from here
    return _departures(columns, column_of, index_of, b[j + 1])


def _departures(columns: tuple[bytes, ...], column_of: bytes, index_of: bytes, card: int) -> list[int]:
    """The moves one of which must be played before ``card`` leaves the card it lies on."""
    column = columns[column_of[card] - _COLUMN_BASE]
    i = index_of[card]
    if card % 13 == 12:
        # By its K, or home after a change above it.
        return ([] if i == 1 else [card + KING_MOVE]) + _leaders_above(column, i) + _landing(column)
    if column[i - 1] == card + 1 and i > column[0] - FACE_DOWN_BASE + 1:
        return []  # it lies on its successor (face up): it leaves only with its suit, never alone
    return [card]


def _leaders_above(column: bytes, i: int) -> list[int]:
    """The moves that take a card above ``column[i]`` away: led by the cards above it that
    do not lie on their successor (Kings by their K)."""
    needs: list[int] = []
    for n in range(i + 1, len(column)):
        card = column[n]
        if card % 13 == 12:
            needs.append(card + KING_MOVE)
        elif column[n - 1] != card + 1:
            needs.append(card)
    return needs


def _landing(column: bytes) -> list[int]:
    """The move that lands on the column's top card (none onto an Ace or a card whose
    predecessor is home: the move stays impossible)."""
    top = column[-1]
    return [top - 1] if len(column) > 1 and top % 13 else []
