"""A sound test that a Scorpion position is lost: some card can never leave its place.

Every card must go home for a win, and a card goes home only by *departing*: leading a
move (being the lowest card of a moved group) or riding home in a completed suit. This
module finds cards that can never depart, from facts that hold for the rest of the game.

**Facts.** Cards are numbered so that the successor of card ``x`` (same suit, one rank
up) is ``x + 1`` (see :mod:`server.games.cards`).

1. *A card lying on its successor stays there until its suit goes home.* Such a card
   ``x`` could only be moved onto ``x + 1``, which lies under it. A group led by a lower
   card carries both. So natural runs never split.
2. *The card directly on a card changes only when that card departs.* Cards are only
   ever added onto a column's top card, and a group led by a lower card carries both.
3. *Nothing but the stock deal adds cards to columns, and it adds them on top.*
4. *A face-down card with its predecessor directly on it never turns up.* The
   predecessor lies on its successor, so it never leads (fact 1); it could only ride
   home in its completed suit, whose thirteen cards must all be face up, the card under
   it too; and that card turns up only once the card on it departs. Neither ever
   departs: the position is lost. Only the deal can make such a pair (the card directly
   on a face-down one never changes, by fact 2), so the test over every card checks it
   and the test from one card does not.

**Enablers.** For each card ``x`` on the table we name a set ``E(x)`` of cards, one of
which must depart before ``x`` can depart (for as long as none of them has):

- ``x`` face down: it departs only after it turns up, which needs the card directly on
  it to depart (fact 2). ``E(x) = {card on x}``.
- ``x`` a face-up non-King not lying on its successor: it can go home only after it has
  led a move onto ``x + 1``, which needs ``x + 1`` to be the top card of another column.
  If a card ``a`` lies directly on ``x + 1``: ``E(x) = {a}`` (fact 2; ``a`` is not
  ``x``'s own predecessor, so it cannot ride home in a suit while on ``x + 1``). If ``x + 1``
  is the top card of ``x``'s own column (above ``x``), ``x`` must first be parted from
  it, which only a group led strictly above ``x`` and not above ``x + 1`` does:
  ``E(x)`` = the cards there that can lead at all (those not lying on their successor).
  If ``x + 1`` is another column's top card or still in the stock: no set (``x`` may
  depart).
- ``x`` a face-up King: it departs by moving to an empty column, or in its completed
  suit. With an empty column, or no card of its suit under it in its column: no set.
  Otherwise, with ``y`` the closest such card under it, the suit cannot complete on the
  King while ``y`` lies under it, which only a group led strictly between ``y`` and the
  King can change; and a column can only become empty after its bottom card departs.
  ``E(x)`` = the bottom cards of all columns and the face-up cards strictly between
  ``y`` and the King that can lead.
- A face-up card lying on its successor never leads (fact 1) and appears in no set.

**The proof.** Let ``S`` be the largest set of cards that all have enablers, all inside
``S``. Suppose some card of ``S`` departs, and take the first one to do so, at some time:
one of its enablers departed before it, and that enabler is in ``S``, a contradiction.
(The stock deal changes none of the sets' facts: it covers top cards, it never uncovers
or separates any.) So the cards of ``S`` never depart, and if ``S`` is not empty the
position cannot be won. The test is conservative: it says nothing about the cards it
gives no set.
"""

from __future__ import annotations

from typing import Final

FACE_DOWN_BASE: Final = 100
_IDENTITY: Final = bytes(range(256))
#: Column numbers in the column-of table (a card not on the table maps to itself).
_COLUMN_IDS: Final = tuple(bytes((i,)) for i in range(7))
#: Column numbers above every card, for a column-of table that tells cards off the table.
_COLUMN_BASE: Final = 200
_COLUMN_MARKS: Final = tuple(bytes((_COLUMN_BASE + i,)) for i in range(7))


def is_lost(columns: tuple[bytes, ...], stock: bytes, start: int = -1) -> bool:
    """True when some card of the position can never depart (see the module docstring).

    ``columns`` are :mod:`server.solver.scorpion_search` columns: a marker byte holding
    ``FACE_DOWN_BASE`` + the number of face-down cards, then the cards bottom first;
    ``stock`` the cards still in the stock. With a face-up ``start`` card, only the cards
    whose fate decides that card's are looked at (its enablers, theirs, and so on), which
    is cheaper and finds every set holding it; without, all cards are.

    Face-down cards are left out of the sets for speed: a face-down card's enablers lead,
    one card at a time, up to the lowest face-up card of its column, so it can never depart
    when that card never can. An enabler that is face down is replaced by that card. What
    that misses, a face-down card stuck under its own predecessor (fact 4), the test over
    every card looks for first.
    """
    if start < 0 and _sealed_pair(columns):
        return True
    if start >= 0:
        found = _lost_from(columns, stock, start)
        if found is not None:
            return found
    return _lost_with_tables(columns, stock, start)


def _sealed_pair(columns: tuple[bytes, ...]) -> bool:
    """Whether some face-down card has its predecessor directly on it (fact 4)."""
    for column in columns:
        for j in range(1, column[0] - FACE_DOWN_BASE + 1):  # the face-down cards (the top one never is)
            if column[j] % 13 and column[j + 1] == column[j] - 1:
                return True
    return False


def _lost_with_tables(columns: tuple[bytes, ...], stock: bytes, start: int) -> bool:
    """:func:`is_lost`, from tables of the whole position: what each card lies under, the
    lowest face-up card for each face-down one, and the columns' bottom cards."""
    # above[c]: the card directly on c (a face-down one replaced as said above); c itself
    # when c is a top card or off the table. (max(1, ...): compiled by mypyc, a bytes slice
    # whose end lies before its start raises instead of giving b"".)
    above = bytes.maketrans(b"".join([c[1 : max(1, len(c) - 1)] for c in columns]), b"".join([c[2:] for c in columns]))
    if any(c[0] > FACE_DOWN_BASE for c in columns):
        down = [c[0] - FACE_DOWN_BASE for c in columns]
        lowest_up = bytes.maketrans(
            b"".join([c[1 : h + 1] for c, h in zip(columns, down, strict=True)]),
            b"".join([c[h + 1 : h + 2] * h for c, h in zip(columns, down, strict=True)]),
        )
        above = above.translate(lowest_up)
    else:
        lowest_up = _IDENTITY
    bottoms = bytes([c[1] for c in columns if len(c) > 1])
    kings_free = len(bottoms) < len(columns)
    bottoms = bottoms.translate(lowest_up)
    enablers: dict[int, bytes] = {}
    if start >= 0:
        column_of = bytes.maketrans(
            b"".join([c[1:] for c in columns]), b"".join([_COLUMN_IDS[i] * (len(c) - 1) for i, c in enumerate(columns)])
        )
        todo = [start]
        looked = {start}
        while todo:
            x = todo.pop()
            column = columns[column_of[x]]
            i = column.find(x, 1)
            lowest = column[0] - FACE_DOWN_BASE + 1
            needs = _enablers(column, i, lowest, above, stock, lowest_up, bottoms, kings_free)
            if needs is not None:
                enablers[x] = needs
                for e in needs:
                    if e not in looked:
                        looked.add(e)
                        todo.append(e)
    else:
        for column in columns:
            lowest = column[0] - FACE_DOWN_BASE + 1  # index of the lowest face-up card
            for i in range(lowest, len(column)):
                needs = _enablers(column, i, lowest, above, stock, lowest_up, bottoms, kings_free)
                if needs is not None:
                    enablers[column[i]] = needs
    return _closed_set(enablers)


def _lost_from(columns: tuple[bytes, ...], stock: bytes, start: int) -> bool | None:
    """:func:`is_lost` from the face-up card ``start``, finding each card's set without the
    whole position's tables (most such searches look at a few cards only); None when it
    meets a King whose set needs them (the caller then builds them)."""
    cards = b"".join([c[1:] for c in columns])
    where = bytes.maketrans(cards, b"".join([_COLUMN_MARKS[i] * (len(c) - 1) for i, c in enumerate(columns)]))
    kings_free = any(len(c) == 1 for c in columns)
    enablers: dict[int, bytes] = {}
    todo = [start]
    looked = {start}
    while todo:
        x = todo.pop()
        column = columns[where[x] - _COLUMN_BASE]
        i = column.find(x, 1)
        lowest = column[0] - FACE_DOWN_BASE + 1
        if x % 13 == 12:
            if not kings_free:
                return None
            continue  # free
        if i > lowest and column[i - 1] == x + 1:
            continue  # on its successor: no set (see _enablers)
        on_successor = _above(columns, where, x + 1)
        if on_successor != x + 1:
            needs = bytes((on_successor,))
        elif column.find(x + 1, i) > 0:
            needs = _leaders(column, i + 1, len(column), lowest)
        else:
            continue
        enablers[x] = needs
        for e in needs:
            if e not in looked:
                looked.add(e)
                todo.append(e)
    return _closed_set(enablers)


def _above(columns: tuple[bytes, ...], where: bytes, card: int) -> int:
    """The card directly on ``card``, the lowest face-up card of its column for a face-down
    one; ``card`` itself for a top card or one off the table (the ``above`` table's entry)."""
    if where[card] < _COLUMN_BASE:
        return card
    column = columns[where[card] - _COLUMN_BASE]
    j = column.find(card, 1)
    if j == len(column) - 1:
        return card
    if j + 1 <= column[0] - FACE_DOWN_BASE:
        return column[column[0] - FACE_DOWN_BASE + 1]
    return column[j + 1]


def _closed_set(enablers: dict[int, bytes]) -> bool:
    """Whether some cards with sets have all their enablers among themselves (none of them
    can ever depart), given each card's set."""
    if not enablers:
        return False
    # The largest closed set: free every card with an enabler outside it, then whatever waits on a freed card.
    waiting: dict[int, list[int]] = {}
    free: list[int] = []
    for x, needs in enablers.items():
        for e in needs:
            if e not in enablers:
                free.append(x)
                break
        else:
            for e in needs:
                if e in waiting:
                    waiting[e].append(x)
                else:
                    waiting[e] = [x]
    if not waiting:
        return False
    freed: set[int] = set()
    while free:
        x = free.pop()
        if x not in freed:
            freed.add(x)
            free.extend(waiting.get(x, ()))
    return len(freed) < len(enablers)


def _enablers(
    column: bytes,
    i: int,
    lowest: int,
    above: bytes,
    stock: bytes,
    lowest_up: bytes,
    bottoms: bytes,
    kings_free: bool,
) -> bytes | None:
    """The set of the face-up card ``column[i]`` (see the module docstring), or None."""
    x = column[i]
    if x % 13 == 12:
        if kings_free:
            return None
        home = _home_enablers(column, i, stock, lowest_up, lowest)
        return None if home is None else bottoms.replace(bytes((x,)), b"") + home
    if i > lowest and column[i - 1] == x + 1:
        return None  # on its successor, which it never leaves: it never leads
    on_successor = above[x + 1]
    if on_successor != x + 1:
        return bytes((on_successor,))
    if column.find(x + 1, i) > 0:
        return _leaders(column, i + 1, len(column), lowest)
    return None  # its successor is another column's top card, or in the stock


def _home_enablers(column: bytes, i: int, stock: bytes, lowest_up: bytes, lowest: int) -> bytes | None:
    """Cards one of which must depart before the King at ``column[i]`` can go home in its
    suit, or None when none is known: the card lying on the end of the King's natural run,
    else the card that must be put there (it must lead, unless it is in the stock); failing
    that, the cards that could part the King from a card of its suit under it."""
    end = i
    while end + 1 < len(column) and column[end + 1] == column[end] - 1:
        end += 1
    if end + 1 < len(column):
        return column[end + 1 : end + 2]
    missing = column[end] - 1
    if missing not in stock:
        return bytes((missing,)).translate(lowest_up)
    suit = column[i] - 12
    for y in range(i - 1, 0, -1):
        if suit <= column[y] < column[i]:
            return _leaders(column, max(y + 1, lowest), i, lowest)
    return None


def _leaders(column: bytes, start: int, stop: int, lowest: int) -> bytes:
    """The face-up cards of ``column[start:stop]`` that can lead a move: those not lying on
    their successor (the lowest face-up card always can)."""
    return bytes(
        [column[j] for j in range(start, stop) if j == lowest or column[j - 1] != column[j] + 1 or column[j] % 13 == 12]
    )
