"""Par: shorten a winning line by finding shortcuts along it.

From each position of the line, a breadth-first look one move deep (then two)
searches for a position further along the line than those moves would take it;
the line is cut there, and passes repeat until nothing shortens it or time is up.
Positions are matched exactly (same cards on the same piles), so the rest of the
line applies unchanged after a shortcut. The result is a short line, not a proven
optimum. Moves are counted as a player counts them: one push is one move, and
autoplay is free.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from server.games import Game, Move


def exact_key(game: Game) -> bytes:
    """The position exactly: every pile in order, and every face-down count."""
    return bytes(game.hidden) + b"\xfe" + b"\xff".join(map(bytes, game.piles))


def shorten(
    game: Game,
    line: tuple[Move, ...],
    seconds: float,
    depth: int = 2,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[Move, ...]:
    """A line from ``game``'s position that is never longer than ``line`` and still wins.

    ``line`` must win from ``game``; ``game`` is left unchanged.
    """
    deadline = clock() + seconds
    for look in range(1, depth + 1):
        changed = True
        while changed and clock() < deadline:
            line, changed = _one_pass(game, line, look, deadline, clock)
    return line


def _one_pass(
    game: Game, line: tuple[Move, ...], depth: int, deadline: float, clock: Callable[[], float]
) -> tuple[tuple[Move, ...], bool]:
    """Walk the line once, taking every shortcut of up to ``depth`` moves; say whether any was taken."""
    walker = game.copy(history=False)
    keys = [exact_key(walker)]
    for move in line:
        walker.push(move)
        keys.append(exact_key(walker))
    for _ in line:
        walker.pop()
    later = {key: i for i, key in enumerate(keys)}  # the last place each position occurs
    shorter: list[Move] = []
    changed = False
    i = 0
    while i < len(line):
        if clock() > deadline:
            shorter.extend(line[i:])
            break
        found = _look_ahead(walker, later, i, depth)
        if found is None:
            walker.push(line[i])
            shorter.append(line[i])
            i += 1
            continue
        detour, i = found  # the walker is now exactly where the line was at the new i
        for move in detour:
            walker.push(move)
        shorter.extend(detour)
        changed = True
    return tuple(shorter), changed


def _look_ahead(walker: Game, later: dict[bytes, int], i: int, depth: int) -> tuple[list[Move], int] | None:
    """Moves from position ``i`` reaching a position ``j`` of the line with fewer than
    ``j - i`` moves, saving the most; ``walker`` is left unchanged."""
    best: tuple[list[Move], int] | None = None
    frontier: list[list[Move]] = [[]]
    for length in range(1, depth + 1):
        next_frontier = []
        for prefix in frontier:
            for move in prefix:
                walker.push(move)
            for move in walker.legal_moves():
                walker.push(move)
                j = later.get(exact_key(walker), -1)
                if j - i > length and (best is None or j - length > best[1] - len(best[0])):
                    best = ([*prefix, move], j)
                elif length < depth:
                    next_frontier.append([*prefix, move])
                walker.pop()
            for _ in prefix:
                walker.pop()
        if best is not None:
            return best
        frontier = next_frontier
    return None
