"""A depth-first Scorpion solver on a compact, immutable position.

Scorpion's state spaces run to a million positions, so this search trades the
engine's general ``push``/``pop`` for positions made of seven ``bytes`` columns,
where finding a card, cutting a group and spotting a completed suit are single
C-level calls (``find``, slicing, ``endswith``). Column ``i`` here is column ``i``
of the engine, so a line found here is a line of engine moves; :func:`solve`
still replays it through the engine before reporting it.

Each column is ``bytes((FACE_DOWN_BASE + hidden, *cards))``: a marker byte holding
the number of face-down cards, then the cards bottom first. The marker makes a
column's bytes its full description, so a canonical key is the columns joined,
sorted where columns are interchangeable (see :mod:`server.solver.keys`).
"""

from __future__ import annotations

import bisect
import itertools
from collections.abc import Sequence
from typing import Final

from server.games import Game, Move
from server.games.cards import suit_run
from server.games.scorpion import COLUMNS, STOCK, STOCK_COLUMNS
from server.solver.compiled import native_core
from server.solver.pruning import POLL_EVERY, spent
from server.solver.results import Budget, Result, Solved, Stats, Unknown, Unwinnable
from server.solver.scorpion_dead import is_lost
from server.solver.scorpion_stubborn import stubborn_moves

FACE_DOWN_BASE: Final = 100
_SEPARATOR: Final = b"\xff"
_KINGS: Final = (12, 25, 38, 51)
_KING_BITS: Final = sum(1 << king for king in _KINGS)
#: King-to-Ace of each suit, as the cards lie in a column.
_RUNS: Final = tuple(bytes(suit_run(suit)) for suit in range(4))

Columns = tuple[bytes, ...]
#: A fast move: (source column, index of the lead card in the column bytes, target column);
#: the stock deal is (-1, 0, -1).
FastMove = tuple[int, int, int]
_DEAL: Final[FastMove] = (-1, 0, -1)


def _encode(game: Game) -> tuple[Columns, bytes]:
    columns = tuple(bytes((FACE_DOWN_BASE + game.hidden[i], *game.piles[i])) for i in range(COLUMNS))
    return columns, bytes(game.piles[STOCK])


def _key(columns: Columns, stock: bytes) -> bytes:
    if stock:
        return _SEPARATOR.join((*columns[:STOCK_COLUMNS], *sorted(columns[STOCK_COLUMNS:]), stock))
    return _SEPARATOR.join(sorted(columns))


def _settle(column: bytes) -> bytes:
    """Turn up an exposed face-down card and send completed suits home, repeatedly."""
    while True:
        hidden = column[0] - FACE_DOWN_BASE
        if hidden and len(column) == hidden + 1:
            column = bytes((column[0] - 1,)) + column[1:]
        if len(column) - 1 - (column[0] - FACE_DOWN_BASE) >= 13 and column.endswith(_RUNS[column[-1] // 13]):
            column = column[:-13]
            continue
        return column


def _moves(columns: Columns, stock: bytes, lone: bool = True) -> list[FastMove]:
    """Legal moves, the most promising first (completing or uncovering moves, then builds,
    then Kings to empty columns, the stock deal last); only a safe one when there is one
    (see _is_king_run and, unless ``lone`` is off, _lone_move)."""
    # One bytes.find over all columns locates a card (marker bytes are above every card).
    table = b"".join(columns)
    starts = list(itertools.accumulate((len(column) for column in columns[:-1]), initial=0))
    first: list[FastMove] = []
    builds: list[FastMove] = []
    later: list[FastMove] = []
    for t in range(COLUMNS):
        target = columns[t]
        top = target[-1]
        if len(target) == 1 or not top % 13:
            continue  # an empty column, or an Ace: nothing goes onto either
        at = table.find(top - 1)
        if at < 0:
            continue  # in the stock or at home
        s = bisect.bisect_right(starts, at) - 1
        k = at - starts[s]
        source = columns[s]
        hidden = source[0] - FACE_DOWN_BASE
        if s != t and k > hidden:
            if not stock and (_is_king_run(target) or _RUNS[top // 13].endswith(source[k:])):
                # Safe moves, played alone (see _is_king_run). A group that is a natural run down to its
                # Ace is safe too: nothing can ever go onto an Ace, so no group holding the target card
                # can land on it, and the rest of _is_king_run's argument holds as written. These two
                # are cheap to see; _lone_move finds the rest. A build is not safe alone when a group
                # holding its target card may later land on the mover's group (played alone after the
                # deal, every build loses the wins of 21 of deals 1-3,000, 343, 747 and 1129 among them).
                return [(s, k, t)]
            (first if k == 1 or (hidden and k == hidden + 1) else builds).append((s, k, t))
    empty = [i for i in range(COLUMNS) if len(columns[i]) == 1]
    if empty:
        # One empty column per class of interchangeable ones (see Scorpion._empty_targets).
        targets = [i for i in empty if i < STOCK_COLUMNS] + [i for i in empty if i >= STOCK_COLUMNS][:1]
        if not stock:
            targets = empty[:1]
        for king in _KINGS:
            at = table.find(king)
            if at < 0:
                continue
            s = bisect.bisect_right(starts, at) - 1
            k = at - starts[s]
            if k <= columns[s][0] - FACE_DOWN_BASE:
                continue
            for e in targets:
                if k == 1 and not (stock and (s < STOCK_COLUMNS or e < STOCK_COLUMNS)):
                    continue  # a whole column onto an empty one changes nothing
                later.append((s, k, e))
    if stock:
        later.append(_DEAL)
    moves = first + builds + later
    if lone and not stock and len(moves) > 1:
        alone = _lone_move(columns, moves)
        if alone >= 0:
            return [moves[alone]]
    return moves


def _is_king_run(column: bytes) -> bool:
    """Whether the face-up cards of ``column`` are a natural run from a King (any number
    of face-down cards may lie under it).

    Once the stock is dealt, the move of a card onto the end of such a run can be made
    first and alone: it is a persistent set of one move, so a search that tries only it
    still reaches a win whenever one exists (a won position has no move, and a persistent
    set always holds a move of every path to such a position, which commutes to the
    front). Persistent, because until the move is made: the run's last card stays the
    top of its column (only the mover can go on it); the only card that can lead a group
    holding it is the King (the rest of the run lies on successors, the cards under the
    King are face down until the King has gone), and a King goes only into an empty
    column, so the mover never shares a column with the run and the move stays legal;
    and every other move commutes with it: it moves a group above the mover, or one
    holding the mover, or the King's run into an empty column, or acts on other columns,
    and the result is the same in either order (completed suits included).
    """
    lowest = column[0] - FACE_DOWN_BASE + 1
    return len(column) > lowest and _RUNS[column[lowest] // 13].startswith(column[lowest:])


def _lone_move(columns: Columns, moves: list[FastMove]) -> int:
    """Once the stock is dealt, the index in ``moves`` (the position's legal moves, in the
    search's order) of a move that is a persistent set on its own, or -1: the first build
    whose group stays clear of every card that may ever lead or carry its target card, else
    the first King move into an empty column that no other King can take from it, by a
    King that must move before its suit can go home.

    Cards are bits of an int. A build M(x) moves x's group G onto x + 1, the top card of
    another column. Let A be the smallest set holding x + 1, the face-up cards under any
    card of A, and the successor (on the table) of any non-King of A. The cards that can
    ever lead a group holding x + 1 are in A: they lie at or under x + 1, and what lies
    under a card changes only when it leads a move onto its successor (a King into an empty
    column: nothing), which then lies under it with what lies under that; a face-down card
    turns up only once the card on it has left, taking what lies above with it. Such a
    group lands on its lead's successor, in A; so while A holds no card of G, no card of A
    comes to lie in G (it would have to land there), and x + 1 never lands on G. Nothing
    else stops M(x) until it is played: only x goes onto x + 1; x stays face up; a group
    carrying x lands on the successor of a card under x, which is not x + 1 (a top card,
    not under x). And every other move commutes with it, as for the King runs of
    _is_king_run (the core's independence relation, scorpion_core.c, holds them
    independent: its one dependent pair of builds lands one's target on the other's group).
    So {M(x)} is a persistent set, and trying only it loses no win.

    K(k) moves the group of the face-up King k, which lies on a card, into an empty column.
    With a card of k's suit under k, the suit cannot go home while k lies there, so k stays
    on the table, face up, on that card, until K(k) is played. Only a King lying on a card
    ever fills an empty column (and then lies at the bottom for good); with no more such
    Kings on the table, face up or down, than empty columns, one is left for k whatever
    the others do, and K moves into different empty columns commute. Every other move
    commutes with K(k) (it moves a group above k, or one holding k, or acts elsewhere). So
    {K(k)} is a persistent set too.
    """
    down = [0] * 52  # a face-up card's column's face-up cards from the lowest up to it
    faceup = on_table = 0
    for column in columns:
        hidden = column[0] - FACE_DOWN_BASE
        run = 0
        for i, card in enumerate(column[1:]):
            bit = 1 << card
            on_table |= bit
            if i >= hidden:
                run |= bit
                down[card] = run
        faceup |= run
    for i, (s, k, t) in enumerate(moves):
        if s < 0 or len(columns[t]) == 1:
            continue
        source = columns[s]
        lead = source[k]
        group = (down[source[-1]] & ~down[lead]) | 1 << lead
        reach = frontier = down[columns[t][-1]]
        while frontier:
            following = ((frontier & ~_KING_BITS) << 1) & on_table & ~reach
            if following & group:
                break
            added = following
            face_up = following & faceup
            while face_up:
                low = face_up & -face_up
                added |= down[low.bit_length() - 1]
                face_up ^= low
            frontier = added & ~reach
            reach |= added
        else:
            return i
    empty = sum(len(column) == 1 for column in columns)
    if not empty or sum(card in _KINGS for column in columns for card in column[2:]) > empty:
        return -1
    for i, (s, k, t) in enumerate(moves):
        if s >= 0 and len(columns[t]) == 1:
            source = columns[s]
            suit = source[k] // 13
            if any(card // 13 == suit for card in source[1:k]):
                return i
    return -1


def _play(columns: Columns, stock: bytes, move: FastMove) -> tuple[Columns, bytes]:
    if move is _DEAL or move[0] < 0:
        dealt = list(columns)
        for i in range(len(stock)):
            dealt[i] = _settle(dealt[i] + stock[-1 - i : len(stock) - i])
        return tuple(dealt), b""
    s, k, t = move
    moved = list(columns)
    source = columns[s]
    target = columns[t] + source[k:]
    # Only an Ace on top can complete a suit, and only an emptied face-up part turns a card:
    # most moves need no settling at all.
    moved[t] = _settle(target) if target[-1] % 13 == 0 else target
    rest = source[:k]
    if k > 1 and (rest[-1] % 13 == 0 or k - 1 == rest[0] - FACE_DOWN_BASE):
        rest = _settle(rest)
    moved[s] = rest
    return tuple(moved), stock


def _search_moves(columns: Columns, stock: bytes, stubborn: bool) -> list[FastMove]:
    """The moves the search tries, the next one last: after the deal, a stubborn set's
    (:mod:`server.solver.scorpion_stubborn`) when ``stubborn`` is on."""
    moves = _moves(columns, stock)
    if stubborn and not stock and len(moves) > 1:
        moves = stubborn_moves(columns, moves)
    moves.reverse()
    return moves


def depth_first_scorpion(
    game: Game, budget: Budget, *, stubborn: bool = False, native: bool = True, sleep_sets: bool = True
) -> Result:
    """Search from ``game``'s position (left unchanged) for a winning line of engine moves.

    The loop runs in the C core (``scorpion_core.c``, a port of this one) where it is built
    and current, unless ``native=False``: the same moves in the same order, about seven
    times as fast. The core also keeps sleep sets after the deal (a move already tried from
    an earlier position, and independent of the moves since, is not tried again; proved in
    ``scorpion_core.c``), and with them tries only a stubborn set's moves where three or
    more are awake (``scorpion_core_stubborn.c``), which the Python loop does not: the same
    verdicts from fewer positions (seeds/winnability.md measures how many). With
    ``sleep_sets=False`` the core searches exactly as this loop does: the same verdicts,
    lines and position counts.

    ``stubborn=True`` runs this loop (never the core) with stubborn sets after the deal
    (partial-order reduction, :mod:`server.solver.scorpion_stubborn`): the same verdicts from
    fewer positions, but in Python each costs more to expand than the reduction saves
    (measured in seeds/winnability.md).
    """
    start = budget.clock()
    deadline = start + budget.seconds
    columns, stock = _encode(game)
    seen = {_key(columns, stock)}
    nodes = 0
    # Each frame: the position and its moves still to try, the next one last.
    stack: list[tuple[Columns, bytes, list[FastMove]]] = [(columns, stock, _search_moves(columns, stock, stubborn))]
    path: list[FastMove] = []
    positions = [(columns, stock)]

    def stats() -> Stats:
        return Stats(nodes, budget.clock() - start)

    if all(len(column) == 1 for column in columns) and not stock:
        return Solved((), 0, stats())
    if is_lost(columns, stock):
        return Unwinnable(stats())
    core = native_core() if native and not stubborn else None
    if core is not None:

        def poll(searched: int, stored: int) -> str:
            return spent(budget, searched, deadline, stored)

        outcome, nodes, found = core.search(columns, stock, poll, sleep_sets)
        if outcome == "solved":
            line = tuple(Move(source, count, target) for source, count, target in found)
            return Solved(line, len(line), stats())
        return Unwinnable(stats()) if outcome == "unwinnable" else Unknown(outcome, stats())
    while stack:
        columns, stock, moves = stack[-1]
        if not moves:
            stack.pop()
            positions.pop()
            if path:
                path.pop()
            continue
        move = moves.pop()
        child, child_stock = _play(columns, stock, move)
        key = _key(child, child_stock)
        if key in seen:
            continue
        seen.add(key)
        nodes += 1
        if not child_stock and all(len(column) == 1 for column in child):
            line = _engine_line(positions, (*path, move))
            return Solved(line, len(line), stats())
        if nodes % POLL_EVERY == 0:
            reason = spent(budget, nodes, deadline, len(seen))
            if reason:
                return Unknown(reason, stats())
        check = _lost_check(columns, child, move)
        if check is not None and is_lost(child, child_stock, check):
            continue  # counted, never expanded: every position after a lost one is lost
        path.append(move)
        positions.append((child, child_stock))
        stack.append((child, child_stock, _search_moves(child, child_stock, stubborn)))
    return Unwinnable(stats())


def _lost_check(columns: Columns, child: Columns, move: FastMove) -> int | None:
    """How to test the position ``move`` made from ``columns`` with :func:`is_lost`: None
    for not at all, -1 for in full, a card for from that card.

    The moves measured to make almost all of the lost positions a search meets (99%) are
    checked: one that turns a card up (from that card, which is where a new set must
    start), the stock deal, and one that uncovers a card whose predecessor lies under it
    (in full). :func:`is_lost` costs a few nodes' time; a lost position left unchecked is
    still found lost when the search exhausts it, or at a later check.
    """
    s, _, t = move
    if s < 0:
        return -1
    source = child[s]
    if source[0] != columns[s][0]:
        return source[source[0] - FACE_DOWN_BASE + 1] if len(source) > 1 else -1
    if child[t][0] != columns[t][0]:
        return -1
    top = source[-1]
    return -1 if len(source) > 2 and top % 13 > 0 and source.find(top - 1, 1) > 0 else None


def _engine_line(positions: list[tuple[Columns, bytes]], path: Sequence[FastMove]) -> tuple[Move, ...]:
    line = []
    for (columns, stock), (s, k, t) in zip(positions, path, strict=True):
        if s < 0:
            line.append(Move(STOCK, len(stock), STOCK))
        else:
            line.append(Move(s, len(columns[s]) - k, t))
    return tuple(line)
