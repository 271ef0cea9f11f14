"""The Antares search: obvious lines first, on compact positions.

Six scans of the same position space (and three more late in a long search) run
interleaved, a slice of nodes at a time (Freecell Solver's "soft threads"), and the first
to finish gives the verdict:

- **depth-first, children best first**: from each position, the moves are played
  and the resulting positions tried in order of :class:`~server.solver.antares_core.Estimator`
  (lowest first). Foundation moves, moves that free a cell or empty a pile and
  builds that tidy a pile lower the estimate, so they come first; a move that only
  undoes the previous one leads back to a position already seen and is skipped by
  the transposition table. Most deals fall to this scan within a few hundred positions.
  Two more, with other weights (:data:`TIDY`, :data:`CELLS_FREE`), take their turns:
  their early choices differ, and so do the deals where they go astray.
- **best-first** over all positions found (ties to the deeper one, then the smaller key),
  twice, weighted by :data:`HOMEWARD` and by :data:`CELLS_FREE`: where the depth-first
  scans commit early to a region without a win, these escape it.
- a short **depth-first** scan weighted by :data:`UNBURYING`, which retires after
  :data:`UNBURYING_NODES`: it solved the two deals of 1-10,000 the five others left unknown
  (3913, 9302) within 4,500 positions, and a scan limited so costs any other deal at most
  those 8,192 positions (a scan with no limit in its place cost two other deals their verdict).
- **late scans**, only past :data:`LATE_NODES` in all: best-first weighted by :data:`ORDERLY`
  and by :data:`UNBURYING`, and depth-first weighted by :data:`UNBURYING_UNORDERED`. They
  take turns alone until each has run :data:`LATE_SCAN_NODES` (or one wins), then all the
  scans take turns. Each solves within 50,000 positions of its own one of the three deals
  of 1-32,000 the six scans need more than 600,000 positions for (23625, 31759, 25760;
  they were found by running variants of the six weightings alone on those deals); every
  other deal of 1-32,000 is decided before they begin, so in the same turns as without them.

:data:`CELLS_FREE` was found on the 17 deals of 1-10,000 that the three scans before it
(the first two depth-first ones and the :data:`HOMEWARD` best-first one, with two
turns) left unknown within 10 s: its depth-first scan solved 15 of them within 5,000
positions, and its best-first scan the other two within 1,000. Every scan added costs
the deals the others solve a turn: of the portfolios tried on all 10,000 deals (this one;
one with a fourth weighting in place of :data:`TIDY`; six full scans with both), this one
leaves the fewest unknown (``seeds/winnability.md``).

Autoplay is part of every move as the engine plays it (a compound move: the move and
the cards it sends home); with autoplay off, a safe foundation move is played first
and alone (:func:`server.solver.pruning.forced_home` proves this sound). Each scan
keeps its own transposition table on canonical positions (:mod:`server.solver.keys`):
a scan that runs out of positions has searched them all, so :class:`Unwinnable` is
a proof.
"""

from __future__ import annotations

import gc
import heapq
import operator
import time
from collections.abc import Callable, Iterator
from typing import Final

from server.games import Game, Move
from server.solver.antares_core import (
    AUTOPLAY_CODE,
    Estimator,
    FastMove,
    Position,
    Weights,
    encode,
    engine_move,
    forced_move,
    is_won,
    key,
    moves,
    play,
)
from server.solver.pruning import POLL_EVERY, spent
from server.solver.results import Budget, Result, Solved, Stats, Unknown, Unwinnable

#: Nodes a scan runs before the next one has its turn (and the budget is looked at).
SLICE: Final = 256
#: Points a move from the deal counts in :func:`short_line` (a card not home counts 2).
PAR_DEPTH_WEIGHT: Final = 1
#: Nodes the first depth-first scan runs alone before the others join in.
FIRST_SLICE: Final = POLL_EVERY
#: The weights of the first depth-first scan, of a best-first one and of the search for
#: par: progress home first.
HOMEWARD: Final = Weights()
#: The second depth-first scan: order and free cells first.
TIDY: Final = Weights(not_home=1, burying=3, disorder=3, cell=2)
#: The third depth-first scan and the other best-first one: keep the cells free (the deals
#: that mislead the first two are mostly deals where they spend the cells early).
CELLS_FREE: Final = Weights(not_home=3, burying=2, disorder=2, cell=4)
#: A sixth, short depth-first scan: the cards burying the next ones home first.
UNBURYING: Final = Weights(not_home=2, burying=6, disorder=1, cell=2)
#: Nodes the :data:`UNBURYING` scan runs before it retires: where it solves a deal the
#: others miss, it does so early, and a short scan costs the other deals little.
UNBURYING_NODES: Final = 4 * POLL_EVERY
#: A late best-first scan: cards built in order first.
ORDERLY: Final = Weights(not_home=1, burying=3, disorder=4, cell=2)
#: A late depth-first scan: the cards burying the next ones home first, whatever the order
#: of the cards above them.
UNBURYING_UNORDERED: Final = Weights(not_home=2, burying=6, disorder=0, cell=2)
#: Nodes in all after which the late scans begin: the searches that need more are the few
#: where the six scans are stuck, so the late scans run alone for a while.
LATE_NODES: Final = 480_000
#: Nodes each late scan runs alone before all the scans take turns.
LATE_SCAN_NODES: Final = 32 * POLL_EVERY

Child = tuple[int, FastMove, Position, bytes]
#: A child's estimate (its first item), for sorting children.
_ESTIMATE: Final = operator.itemgetter(0)


class _Scan:
    """One search of the position space, run a slice at a time by :meth:`step`.

    After a step, ``solution`` holds the winning moves if one was found, and
    ``exhausted`` says that every reachable position was searched without one.
    """

    def __init__(self, root: Position, mode: int, estimate: Estimator) -> None:
        self.mode = mode
        self.estimate = estimate
        self.nodes = 0
        self.solution: list[FastMove] | None = None
        self.exhausted = False

    @property
    def positions(self) -> int:
        raise NotImplementedError

    def step(self, nodes: int) -> None:
        raise NotImplementedError

    def _moves(self, position: Position) -> list[FastMove]:
        piles, cells, home = position
        if self.mode == 0:
            forced = forced_move(piles, cells, home)
            if forced is not None:
                return [forced]
        return moves(piles, cells, home)


class DepthFirst(_Scan):
    """Depth-first search, the children of each position tried lowest estimate first."""

    def __init__(self, root: Position, mode: int, estimate: Estimator) -> None:
        super().__init__(root, mode, estimate)
        self.seen = {key(root[0], root[1])}
        self.path: list[FastMove] = []
        # Each frame: the children still to try, the next one last.
        self.stack: list[list[Child]] = [self._children(root, settled=False)]

    @property
    def positions(self) -> int:
        return len(self.seen)

    def _children(self, position: Position, settled: bool = True) -> list[Child]:
        seen, estimate, mode = self.seen, self.estimate, self.mode
        children = []
        for move in self._moves(position):
            child = play(position, move, mode, settled)
            child_key = key(child[0], child[1])
            if child_key not in seen:
                children.append((estimate(child), move, child, child_key))
        children.sort(key=_ESTIMATE, reverse=True)  # stable: equal estimates keep the moves' order
        return children

    def step(self, nodes: int) -> None:
        stack, path, seen = self.stack, self.path, self.seen
        done = 0
        while done < nodes:
            if not stack:
                self.exhausted = True
                return
            frame = stack[-1]
            if not frame:
                stack.pop()
                if path:
                    path.pop()
                continue
            _, move, child, child_key = frame.pop()
            if child_key in seen:
                continue  # reached by another line since this frame was made
            seen.add(child_key)
            done += 1
            path.append(move)
            if is_won(child[2]):
                self.solution = list(path)
                break
            stack.append(self._children(child))
        self.nodes += done


class BestFirst(_Scan):
    """Best-first search over every position found, lowest estimate first (ties: deepest).

    With a ``depth_weight``, the priority is the estimate plus that many points a move
    from the deal (a weighted A*): slower to find a win, but its lines are short.
    """

    def __init__(self, root: Position, mode: int, estimate: Estimator, depth_weight: int = 0) -> None:
        super().__init__(root, mode, estimate)
        self.depth_weight = depth_weight
        root_key = key(root[0], root[1])
        self.parents: dict[bytes, tuple[bytes, FastMove] | None] = {root_key: None}
        self.queue: list[tuple[int, int, bytes, Position]] = [(estimate(root), 0, root_key, root)]
        self.root_key = root_key

    @property
    def positions(self) -> int:
        return len(self.parents)

    def step(self, nodes: int) -> None:
        parents, queue, estimate, mode = self.parents, self.queue, self.estimate, self.mode
        done = 0
        while done < nodes:
            if not queue:
                self.exhausted = True
                return
            _, minus_depth, position_key, position = heapq.heappop(queue)
            settled = position_key != self.root_key  # autoplay never ran on the deal
            for move in self._moves(position):
                child = play(position, move, mode, settled)
                child_key = key(child[0], child[1])
                if child_key in parents:
                    continue
                parents[child_key] = (position_key, move)
                done += 1
                if is_won(child[2]):
                    self.solution = self._line(child_key)
                    self.nodes += done
                    return
                priority = estimate(child) + self.depth_weight * (1 - minus_depth)
                # Ties: the deeper position, then the smaller key (keys are unique, so states never compare).
                heapq.heappush(queue, (priority, minus_depth - 1, child_key, child))
        self.nodes += done

    def _line(self, last: bytes) -> list[FastMove]:
        line = []
        link = self.parents[last]
        while link is not None:
            line.append(link[1])
            link = self.parents[link[0]]
        return line[::-1]


def search_antares(game: Game, budget: Budget) -> Result:
    """Search from ``game``'s Antares position (left unchanged) for a winning line of engine moves.

    Python's cyclic garbage collector is paused during the search (and resumed after, if it
    was on): the scans make millions of small tuples and lists, none in a reference cycle,
    which reference counting frees, so the collector's passes over the ones alive are pure
    cost (measured in seeds/winnability.md).
    """
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _search(game, budget)
    finally:
        if collecting:
            gc.enable()


def _search(game: Game, budget: Budget) -> Result:
    start = budget.clock()
    deadline = start + budget.seconds
    root = encode(game)
    mode = AUTOPLAY_CODE[game.options.autoplay]
    if is_won(root[2]):
        return Solved((), 0, Stats(0, budget.clock() - start))
    # Each scan with the nodes it may run in all (None: no limit).
    scans: list[tuple[_Scan, int | None]] = [
        (DepthFirst(root, mode, Estimator(HOMEWARD)), None),
        (DepthFirst(root, mode, Estimator(TIDY)), None),
        (DepthFirst(root, mode, Estimator(CELLS_FREE)), None),
        (BestFirst(root, mode, Estimator(HOMEWARD)), None),
        (BestFirst(root, mode, Estimator(CELLS_FREE)), None),
        (DepthFirst(root, mode, Estimator(UNBURYING)), UNBURYING_NODES),
    ]
    late: list[_Scan] = [
        BestFirst(root, mode, Estimator(ORDERLY)),
        BestFirst(root, mode, Estimator(UNBURYING)),
        DepthFirst(root, mode, Estimator(UNBURYING_UNORDERED)),
    ]
    every = [scan for scan, _ in scans] + late
    for scan, slice_nodes in _turns(scans, late):
        scan.step(slice_nodes)
        nodes = sum(s.nodes for s in every)
        if scan.solution is not None:
            line = engine_line(game, scan.solution)
            return Solved(line, len(line), Stats(nodes, budget.clock() - start))
        if scan.exhausted:
            return Unwinnable(Stats(nodes, budget.clock() - start))
        reason = spent(budget, nodes, deadline, sum(s.positions for s in every))
        if reason:
            # Timed after spent() read the clock: a search stopped for time reports at least its budget.
            return Unknown(reason, Stats(nodes, budget.clock() - start))
    raise AssertionError("the turns never end")


def _turns(scans: list[tuple[_Scan, int | None]], late: list[_Scan]) -> Iterator[tuple[_Scan, int]]:
    """Whose turn it is, and for how many nodes: the first scan alone first (most deals
    fall to it within a few hundred positions, and the others would only multiply the
    work on those), then each scan in order, a slice each, but for a scan past its limit.
    Once they have run :data:`LATE_NODES` in all, the ``late`` scans take turns alone up to
    :data:`LATE_SCAN_NODES` each, then all the scans."""

    def nodes() -> int:
        return sum(scan.nodes for scan, _ in scans)

    yield scans[0][0], FIRST_SLICE
    while nodes() < LATE_NODES:
        for scan, limit in scans:
            if nodes() >= LATE_NODES:
                break
            if limit is None or scan.nodes < limit:
                yield scan, SLICE
    while any(scan.nodes < LATE_SCAN_NODES for scan in late):
        for scan in late:
            if scan.nodes < LATE_SCAN_NODES:
                yield scan, SLICE
    every = scans + [(scan, None) for scan in late]
    while True:
        for scan, limit in every:
            if limit is None or scan.nodes < limit:
                yield scan, SLICE


def short_line(game: Game, seconds: float, clock: Callable[[], float] = time.perf_counter) -> tuple[Move, ...] | None:
    """A winning line found by weighted A* (:class:`BestFirst` with a depth weight) within
    ``seconds``, or None: slower than :func:`search_antares`, but its lines are short, so
    par spends part of its time on it."""
    deadline = clock() + seconds
    root = encode(game)
    scan = BestFirst(root, AUTOPLAY_CODE[game.options.autoplay], Estimator(HOMEWARD), depth_weight=PAR_DEPTH_WEIGHT)
    while clock() < deadline:
        scan.step(SLICE)
        if scan.solution is not None:
            return engine_line(game, scan.solution)
        if scan.exhausted:
            return None
    return None


def engine_line(game: Game, line: list[FastMove]) -> tuple[Move, ...]:
    """The engine moves of ``line``, played from ``game``'s position (left unchanged)."""
    walker = game.copy(history=False)
    result = []
    for fast in line:
        move = engine_move(walker, fast)
        walker.push(move)
        result.append(move)
    return tuple(result)
