"""Winning lines for hints: the solver's first-found line, shortened before anyone follows it.

The search (:func:`server.solver.solve.solve_position` with ``par_seconds=0``) returns the
first winning line it finds, and that line wanders: cards go back and forth between the same
piles while nothing goes home, for dozens of moves (Antares deal ms8589934591 with safe
autoplay: 135 moves, 78 in a row with no card going home, where par is 74). Hints that
follow it look like a loop (issue 31). :func:`hint_line` makes a line to follow, within a
small budget:

1. **candidates**: the first-found line and, in Antares, a line of weighted A*
   (:func:`server.solver.antares_search.short_line`, for up to :data:`SHORT_SHARE` of the
   budget): short, and it sends cards home as it goes, but slower to find;
2. **repeats**: where a position recurs along a line (up to interchangeable piles), the
   moves between its two visits go (:func:`drop_repeats`);
3. **undone moves**: where a card moves and its next move takes it back, or on, the two
   moves become one, or none, if every move between stays legal and the line is back at
   its position after the second (:func:`drop_undone`; a few milliseconds on a line of
   150 moves, 0.1 s on one of 2,000);
4. the candidate that costs a player least (:func:`_cost`: its moves, and twice its longest
   stretch without a card going home) gets **shortcuts** for the rest of the budget:
   :func:`server.solver.antares_par.shorten_antares` (Antares) or
   :func:`server.solver.par.shorten` (Scorpion), one or two moves that reach a position
   further along the line; then steps 2-3 again, while the line gets shorter.

Moves carry over between positions as what they move and where to (:data:`CardMove`),
which means the same in every position with the same key (:mod:`server.solver.keys`). The
result is never longer than the first-found line, and it is replayed through the engine's
checks: if it did not win (never expected), the first-found line is returned.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Final

from server.games import Antares, Game, Move, PileKind
from server.games.errors import IllegalMove
from server.solver.antares_par import shorten_antares
from server.solver.antares_search import short_line
from server.solver.keys import key_function
from server.solver.par import shorten

#: A move said without pile numbers: (lead card, target). Targets: :data:`HOME`,
#: :data:`CELL`, :data:`DEAL` (with card -1), a top card + :data:`ONTO` (onto that card),
#: :data:`EMPTY` + the number of the first pile of the empty pile's kind (the first empty
#: pile of that kind), or :data:`COLUMN` + a column (a Scorpion column that gets a stock
#: card: before the deal, columns 1-3 each get their own).
CardMove = tuple[int, int]
HOME: Final = -1
CELL: Final = -2
DEAL: Final = -3
ONTO: Final = 100
EMPTY: Final = 200
COLUMN: Final = 300
_TABLEAU: Final = (PileKind.SCORPION, PileKind.FREECELL)
#: The share of :func:`hint_line`'s time that weighted A* may take.
SHORT_SHARE: Final = 0.5
#: Of two lines, the one with fewer moves plus this many times its longest stretch without
#: a card going home is kept.
STRETCH_WEIGHT: Final = 2


def card_move(game: Game, move: Move) -> CardMove:
    """``move`` (legal in ``game``) as what it moves and where to."""
    if move.is_deal:
        return -1, DEAL
    card = game.piles[move.source][-move.count]
    kind = game.PILES[move.target].kind
    if kind is PileKind.FOUNDATION:
        return card, HOME
    if kind is PileKind.CELL:
        return card, CELL
    target = game.piles[move.target]
    if target:
        return card, ONTO + target[-1]
    if game.STOCK >= 0 and game.piles[game.STOCK] and move.target < len(game.piles[game.STOCK]):
        return card, COLUMN + move.target
    return card, EMPTY + _first_of_kind(game, kind)


def _first_of_kind(game: Game, kind: PileKind) -> int:
    return next(i for i, spec in enumerate(game.PILES) if spec.kind is kind)


def engine_move(game: Game, move: CardMove) -> Move | None:
    """The legal move of ``game`` that ``move`` describes, or None: the card is not face up,
    there is no such target, or the rules forbid the move."""
    card, target = move
    if target == DEAL:
        return game.deal_move() if game.STOCK >= 0 and game.piles[game.STOCK] else None
    piles, hidden, specs = game.piles, game.hidden, game.PILES
    source = count = -1
    for i, pile in enumerate(piles):
        if specs[i].kind in (PileKind.STOCK, PileKind.FOUNDATION):
            continue
        if card in pile:
            at = pile.index(card)
            if at < hidden[i]:
                return None
            source, count = i, len(pile) - at
            break
    if source < 0:
        return None
    if target == HOME:
        destination = game.FOUNDATION + card // 13
    elif target == CELL:
        destination = next((i for i, spec in enumerate(specs) if spec.kind is PileKind.CELL and not piles[i]), -1)
    elif target >= COLUMN:
        destination = target - COLUMN
    elif target >= EMPTY:
        kind = specs[target - EMPTY].kind
        low = len(piles[game.STOCK]) if game.STOCK >= 0 else 0
        destination = next((i for i, spec in enumerate(specs) if spec.kind is kind and not piles[i] and i >= low), -1)
    else:
        top = target - ONTO
        destination = next((i for i, spec in enumerate(specs) if spec.kind in _TABLEAU and piles[i][-1:] == [top]), -1)
    if destination < 0:
        return None
    found = Move(source, count, destination)
    try:
        game.check(found)
    except IllegalMove:
        return None
    return found


def card_moves(game: Game, line: Sequence[Move]) -> tuple[list[CardMove], list[bytes]]:
    """``line`` from ``game`` as card moves, and the key of every position along it (the
    first is ``game``'s, the last the one after the whole line)."""
    key_of = key_function(type(game))
    walker = game.copy(history=False)
    cards: list[CardMove] = []
    keys = [key_of(walker)]
    for move in line:
        cards.append(card_move(walker, move))
        walker.push(move)
        keys.append(key_of(walker))
    return cards, keys


def engine_line(game: Game, line: Sequence[CardMove]) -> tuple[Move, ...] | None:
    """The engine moves of ``line`` from ``game``, or None if one of them is not legal."""
    walker = game.copy(history=False)
    moves = []
    for card in line:
        move = engine_move(walker, card)
        if move is None:
            return None
        walker.push(move)
        moves.append(move)
    return tuple(moves)


def drop_repeats(line: Sequence[CardMove], keys: Sequence[bytes]) -> tuple[list[CardMove], list[bytes]]:
    """``line`` without the moves between two visits of the same position (``keys``: the
    positions along it, as :func:`card_moves` gives them), with its positions."""
    last = {key: i for i, key in enumerate(keys)}
    kept: list[CardMove] = []
    kept_keys = [keys[0]]
    i = 0
    while i < len(line):
        later = last[keys[i]]
        if later > i:
            i = later  # the same position: the moves between lead back to it
            continue
        kept.append(line[i])
        kept_keys.append(keys[i + 1])
        i += 1
    return kept, kept_keys


def drop_undone(
    game: Game,
    line: Sequence[CardMove],
    keys: Sequence[bytes],
    deadline: float,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[list[CardMove], list[bytes]]:
    """``line`` (winning from ``game``; ``keys``: its positions) with moves of a card merged
    into the next move of the same card where that keeps the line legal and brings it back
    to its position after the second move: the card stays where it is until then, or goes
    there at once, or neither move is left when the second one took it back. The new
    line's positions come with it. Stops early (leaving the rest as it was) at ``deadline``."""
    key_of = key_function(type(game))
    line, keys = list(line), list(keys)
    walker = game.copy(history=False)
    i = 0
    while i < len(line):
        if clock() > deadline:
            break
        merged = _merge_at(walker, line, keys, i, key_of)
        if merged is not None:
            line, keys = merged
            continue  # the move now at i may merge too
        move = engine_move(walker, line[i])
        if move is None:
            break  # never expected: the line was legal
        walker.push(move)
        i += 1
    return line, keys


def _merge_at(
    walker: Game, line: list[CardMove], keys: list[bytes], i: int, key_of: Callable[[Game], bytes]
) -> tuple[list[CardMove], list[bytes]] | None:
    """``line`` and ``keys`` with move ``i`` (played from ``walker``) merged into the next
    move of the same card, or None."""
    card = line[i][0]
    if line[i][1] == DEAL:
        return None
    j = next((j for j in range(i + 1, len(line)) if line[j][0] == card), -1)
    if j < 0:
        return None
    between = line[i + 1 : j]
    # Both moves gone; the card stays until move j; the card goes where move j takes it at once.
    for candidate in (between, [*between, line[j]], [line[j], *between]):
        reached = _walk(walker, candidate, key_of)
        if reached is not None and reached[-1] == keys[j + 1]:
            return [*line[:i], *candidate, *line[j + 1 :]], [*keys[: i + 1], *reached[1:], *keys[j + 2 :]]
    return None


def _walk(walker: Game, line: Sequence[CardMove], key_of: Callable[[Game], bytes]) -> list[bytes] | None:
    """The positions ``line`` goes through from ``walker`` (left unchanged), its start
    included, or None if a move of it is not legal."""
    game = walker.copy(history=False)
    keys = [key_of(game)]
    for step in line:
        move = engine_move(game, step)
        if move is None:
            return None
        game.push(move)
        keys.append(key_of(game))
    return keys


def hint_line(
    game: Game, line: tuple[Move, ...], seconds: float, clock: Callable[[], float] = time.perf_counter
) -> tuple[Move, ...]:
    """A winning line from ``game`` (left unchanged) for hints, never longer than ``line``
    (which must win from ``game``), made within about ``seconds`` (see the module)."""
    if not line:
        return line
    deadline = clock() + seconds
    candidates = [line]
    if isinstance(game, Antares):
        short = short_line(game, seconds * SHORT_SHARE, clock)
        if short is not None and len(short) <= len(line):
            candidates.insert(0, short)  # the short one first: its passes are quick
    best: tuple[Move, ...] | None = None
    for candidate in candidates:
        candidate = _tidied(game, candidate, deadline, clock)
        if best is None or _cost(game, candidate) < _cost(game, best):
            best = candidate
    assert best is not None
    while clock() < deadline:
        shorter = _tidied(game, _shortcuts(game, best, deadline - clock(), clock), deadline, clock)
        if len(shorter) >= len(best):
            break
        best = shorter
    return best if _wins(game, best) else line


def _cost(game: Game, line: Sequence[Move]) -> int:
    """What a line costs a player who follows it: its moves, and its longest stretch without
    a card going home counted :data:`STRETCH_WEIGHT` times."""
    return len(line) + STRETCH_WEIGHT * longest_stretch_without_home(game, line)


def _tidied(game: Game, line: tuple[Move, ...], deadline: float, clock: Callable[[], float]) -> tuple[Move, ...]:
    """``line`` without its repeats and undone moves (:func:`drop_repeats`,
    :func:`drop_undone`), passes repeated while one shortens it and time is left."""
    while True:
        cards, keys = drop_repeats(*card_moves(game, line))
        cards, _ = drop_undone(game, cards, keys, deadline, clock)
        moves = engine_line(game, cards)
        if moves is None or len(moves) >= len(line) or not _wins(game, moves):
            return line
        line = moves
        if clock() >= deadline:
            return line


def _shortcuts(game: Game, line: tuple[Move, ...], seconds: float, clock: Callable[[], float]) -> tuple[Move, ...]:
    if isinstance(game, Antares):
        return shorten_antares(game, line, seconds, clock=clock)
    return shorten(game, line, seconds, clock=clock)


def _wins(game: Game, line: Sequence[Move]) -> bool:
    """Whether ``line`` is legal move by move from ``game`` and wins."""
    walker = game.copy(history=False)
    for move in line:
        try:
            walker.check(move)
        except IllegalMove:
            return False
        walker.push(move)
    return walker.is_won()


def longest_stretch_without_home(game: Game, line: Sequence[Move]) -> int:
    """The most moves in a row along ``line`` from ``game`` that send no card home (a suit
    going home counts, and so do cards autoplay sends)."""
    walker = game.copy(history=False)
    foundations = range(game.FOUNDATION, game.FOUNDATION + 4)
    home = sum(len(walker.piles[f]) for f in foundations)
    longest = run = 0
    for move in line:
        walker.push(move)
        now = sum(len(walker.piles[f]) for f in foundations)
        run = 0 if now > home else run + 1
        longest = max(longest, run)
        home = now
    return longest
