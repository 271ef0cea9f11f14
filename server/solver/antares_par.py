"""Antares par: shorten a winning line by shortcuts, on compact positions.

The line is walked as compact positions (:mod:`server.solver.antares_core`). From
each position, every move (then every pair of moves) is tried, looking for a
position further along the line than those moves would take it; positions match
up to interchangeable piles (canonical keys), which finds more shortcuts than an
exact match. Moves are then carried across as *what* they move and *where to*
(the lead card, and the target's top card, or the kind of empty pile), which
means the same in any two positions with the same key. Passes repeat until none
shortens the line or time is up; the result is short, not a proven optimum, and
:func:`server.solver.solve.solve_position` still replays it through the engine.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from server.games import Game, Move
from server.games.antares import FOUNDATION
from server.solver.antares_core import AUTOPLAY_CODE, CELL, HOME, FastMove, Position, encode, key, moves, play

#: A move said position-free: (lead card, target) where target is HOME, CELL, a top
#: card + 100 (onto that card), or -1 / -2 (the first empty Scorpion / FreeCell pile).
CardMove = tuple[int, int]
_ONTO: int = 100


def card_move(position: Position, move: FastMove) -> CardMove:
    piles = position[0]
    s, k, t = move
    card = k if s == CELL else piles[s][k]
    if t in (HOME, CELL):
        return card, t
    if piles[t]:
        return card, _ONTO + piles[t][-1]
    return card, -1 if t < 4 else -2


def fast_move(position: Position, move: CardMove) -> FastMove:
    """The move of ``position`` that ``move`` describes (it must be legal there)."""
    piles, cells, _ = position
    card, target = move
    if card in cells:
        s, k = CELL, card
    else:
        s = next(i for i in range(8) if card in piles[i])
        k = piles[s].index(card)
    if target in (HOME, CELL):
        return s, k, target
    if target >= _ONTO:
        top = target - _ONTO
        return s, k, next(i for i in range(8) if piles[i] and piles[i][-1] == top)
    kinds = range(4) if target == -1 else range(4, 8)
    return s, k, next(i for i in kinds if not piles[i])


def engine_moves(game: Game, line: list[CardMove]) -> tuple[Move, ...]:
    """The engine moves of ``line`` from ``game``'s position (left unchanged)."""
    walker = game.copy(history=False)
    result = []
    for card, target in line:
        piles = walker.piles
        source = next(i for i in range(12) if card in piles[i])
        count = len(piles[source]) - piles[source].index(card)
        if target == HOME:
            destination = FOUNDATION + card // 13
        elif target == CELL:
            destination = next(i for i in range(8, 12) if not piles[i])
        elif target >= _ONTO:
            top = target - _ONTO
            destination = next(i for i in range(8) if piles[i] and piles[i][-1] == top)
        else:
            kinds = range(4) if target == -1 else range(4, 8)
            destination = next(i for i in kinds if not piles[i])
        move = Move(source, count, destination)
        walker.push(move)
        result.append(move)
    return tuple(result)


def shorten_antares(
    game: Game,
    line: tuple[Move, ...],
    seconds: float,
    depth: int = 2,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[Move, ...]:
    """A winning line from ``game``'s position never longer than ``line`` (which must win)."""
    deadline = clock() + seconds
    mode = AUTOPLAY_CODE[game.options.autoplay]
    walker = game.copy(history=False)
    root = encode(walker)
    cards: list[CardMove] = []
    position = root
    for move in line:
        if move.source >= 8:
            fast = (CELL, walker.piles[move.source][0], _target(move))
        else:
            fast = (move.source, len(walker.piles[move.source]) - move.count, _target(move))
        cards.append(card_move(position, fast))
        position = play(position, fast, mode, settled=bool(cards[:-1]))
        walker.push(move)
    for look in range(1, depth + 1):
        changed = True
        while changed and clock() < deadline:
            cards, changed = _one_pass(root, cards, mode, look, deadline, clock)
    return engine_moves(game, cards)


def _target(move: Move) -> int:
    if move.target >= FOUNDATION:
        return HOME
    if move.target >= 8:
        return CELL
    return move.target


def _one_pass(
    root: Position, line: list[CardMove], mode: int, depth: int, deadline: float, clock: Callable[[], float]
) -> tuple[list[CardMove], bool]:
    """Walk the line once taking every shortcut of up to ``depth`` moves."""
    positions = [root]
    for move in line:
        positions.append(play(positions[-1], fast_move(positions[-1], move), mode, len(positions) > 1))
    later = {key(p[0], p[1]): i for i, p in enumerate(positions)}  # the last place of each position
    shorter: list[CardMove] = []
    changed = False
    i = 0
    position = root
    while i < len(line):
        if clock() > deadline:
            # ``position`` matches positions[i] up to interchangeable piles: card moves carry over.
            shorter.extend(line[i:])
            break
        settled = position is not root  # autoplay never ran on the deal
        found = _look_ahead(position, later, i, depth, mode, settled)
        if found is None:
            shorter.append(line[i])
            position = play(position, fast_move(position, line[i]), mode, settled)
            i += 1
            continue
        detour, i, position = found
        shorter.extend(detour)
        changed = True
    return shorter, changed


def _look_ahead(
    start: Position, later: dict[bytes, int], i: int, depth: int, mode: int, settled: bool
) -> tuple[list[CardMove], int, Position] | None:
    """Card moves from ``start`` (line position ``i``) to a line position ``j`` in fewer
    than ``j - i`` moves, saving the most, with the position reached."""
    best: tuple[list[CardMove], int, Position] | None = None
    frontier: list[tuple[list[CardMove], Position, bool]] = [([], start, settled)]
    for length in range(1, depth + 1):
        next_frontier = []
        for prefix, position, is_settled in frontier:
            for move in moves(*position):
                child = play(position, move, mode, is_settled)
                j = later.get(key(child[0], child[1]), -1)
                if j - i > length and (best is None or j - length > best[1] - len(best[0])):
                    best = ([*prefix, card_move(position, move)], j, child)
                elif length < depth:
                    next_frontier.append(([*prefix, card_move(position, move)], child, True))
        if best is not None:
            return best
        frontier = next_frontier
    return None
