"""How a bot finds its way through a deal: a search over the positions it has seen, played on
the server with ``move`` and ``undo``. It knows no rules: the moves it tries are the server's
hints and legal moves, and it judges a position only by what its board shows.

The search keeps a tree of the positions it reached (each one a board, as the bot sees it)
and a frontier of the moves it has not tried yet. It plays the best hint from each new
position until it meets a dead end, then goes back (``undo``, and the moves down again)
to the most promising untried move. "Most promising" is limited discrepancy search: the
fewest departures from the hints' first choices along the way (one in the first moves of a
line counts a third of one later: the mistakes that matter come early, while cards lie face
down), the deepest first among equals (the nearest to go back to). A dead end is a position with no hint left to try, a
position already seen (a transposition: the bot takes that move back at once), or one the
server's hints judge lost: where every card is visible, the server searches for a winning
line and gives its next move first ("... on a winning line"); a visible position without one
is probably lost, and its moves wait until everything else has been tried. Once a winning
line shows, the bot follows it to the end.

Alternatives come in two tiers. The first holds the hints' other choices. The second, tried
only when the first is exhausted, holds what the hints leave out (the other legal moves) and
the positions judged lost (a winning-line search may have run out of time or of the
server's allowance): with it the search is complete, so a bot on a winnable deal finds a win
if it plays long enough. :class:`Tactics` make a bot weaker: ``noise`` is the chance that it
takes another hint than the best from a new position (a mistake it will have to undo).

The search talks to a :class:`Table` (the seat it plays): :class:`client.lib.bot.Bot` plays
one on the server; a test or a bench can play one on anything that answers the same way.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, Protocol

from protocol.messages import HintItem

BoardKey = tuple[tuple[int | None, ...], ...]

#: What the server's hint says of a move on a winning line the solver found (every card
#: visible): "it is on a winning line".
WINNING: Final = "winning line"
#: The stock deal's move text (a Scorpion position's only move that no undo-free search can
#: take back cheaply: the hints rank it last, but a deal is often right early).
DEAL: Final = "deal"

Outcome = Literal["won", "exhausted", "budget", "stuck"]


class Table(Protocol):
    """The seat a search plays: its board as the bot sees it, and the server's answers."""

    def board(self) -> Sequence[Sequence[int | None]]:
        """The racer's board now (face-down cards are None)."""
        ...

    def done(self) -> bool:
        """Whether the racer is done: won, or the race is over."""
        ...

    def progress(self) -> tuple[int, ...]:
        """How far the racer has got (more is further: cards home, cards in sight, ...)."""
        ...

    async def hints(self) -> Sequence[HintItem] | None:
        """The server's hints, best first; None when the room has hints turned off."""
        ...

    async def legal_moves(self) -> Sequence[str]:
        """Every legal move now."""
        ...

    async def play(self, move: str, again: bool = False) -> bool:
        """Play ``move`` (``again``: one played before, on the way back to a known position);
        False if the server refused it."""
        ...

    async def undo(self) -> None:
        """Take the last move back."""
        ...


@dataclass(frozen=True)
class Tactics:
    """How well a bot chooses.

    ``noise``: the chance, at each new position, that it takes a random hint rather than the
    best (and comes back for the best when that fails). ``lookahead``: whether it goes back
    to earlier choices (with undo) at all; without it, it only goes on from where it is.
    ``early``: in the first this many moves of a
    line, a departure from the first choice counts as :data:`EARLY_COST`, later as
    :data:`LATE_COST` (the hints' mistakes are mostly early, before the cards are seen).
    ``deal_rank``: where the stock's deal goes among a position's choices (None: where the
    hints put it)."""

    noise: float = 0.0
    lookahead: bool = True
    early: int = 10
    deal_rank: int | None = 1


EARLY_COST: Final = 1
LATE_COST: Final = 3
#: Tiers of the frontier: the hints' other choices, then what comes only after all of them.
FIRST, LAST = 0, 1


def board_key(board: Sequence[Sequence[int | None]]) -> BoardKey:
    return tuple(tuple(pile) for pile in board)


def sees_everything(key: BoardKey) -> bool:
    return all(card is not None for pile in key for card in pile)


def winning(hints: Sequence[HintItem]) -> bool:
    """Whether the first hint is the next move of a winning line."""
    return bool(hints) and WINNING in hints[0].reason


class Node:
    """A position the bot reached: the move from its parent, the cost of its departures from
    the first choices on the way (``discrepancy``), and its choices once opened."""

    __slots__ = ("choices", "depth", "discrepancy", "key", "move", "parent", "serial", "widened")

    def __init__(self, parent: Node | None, move: str, key: BoardKey, discrepancy: int, serial: int) -> None:
        self.parent = parent
        self.move = move
        self.key = key
        self.depth: int = 0 if parent is None else parent.depth + 1
        self.discrepancy = discrepancy
        self.serial = serial
        self.choices: list[str] | None = None
        self.widened = False


#: A frontier entry: its priority (tier, discrepancy, then the order the level wants), the
#: node and the index of its choice to try, or :data:`WIDEN` (add the legal moves the hints
#: left out) or :data:`REOPEN` (ask the hints again).
Entry = tuple[tuple[int, int, int, int, int], Node, int]
WIDEN: Final = -1
REOPEN: Final = -2


class Search:
    """Plays ``table`` until the racer is done, the search has nothing left to try, or (with
    ``budget``) after that many moves, or (with ``patience``) that many moves without getting
    further than before (:meth:`Table.progress`). ``undo``: whether the room allows taking
    moves back."""

    def __init__(
        self,
        table: Table,
        tactics: Tactics | None = None,
        rng: random.Random | None = None,
        undo: bool = True,
        budget: int | None = None,
        patience: int | None = None,
    ) -> None:
        self.table = table
        self.tactics = tactics or Tactics()
        self.random = rng or random.Random()
        self.backtrack = undo and self.tactics.lookahead
        self.budget = budget
        self.patience = patience
        self._best = table.progress()
        self._since_best = 0
        #: Moves played (replayed and undone ones included, as the server counts them).
        self.played = 0
        self._serials = itertools.count()
        self._frontier: list[Entry] = []
        self._seen: set[BoardKey] = set()
        self._hints_off = False
        self.current = self._root()

    def _root(self) -> Node:
        key = board_key(self.table.board())
        self._seen.add(key)
        return Node(None, "", key, 0, next(self._serials))

    async def run(self) -> Outcome:
        """Play until the racer is done (``"won"``: won, or the race is over), nothing is
        left to try (``"exhausted"``; ``"stuck"`` without going back: no legal move), or
        its budget or its patience ran out (``"budget"``)."""
        while not self.table.done():
            if self.budget is not None and self.played >= self.budget:
                return "budget"
            try:
                if not await self._step():
                    return "exhausted" if self.backtrack else "stuck"
            except _Spent:
                return "budget"
            except LostTrack:
                # Start again from here, as if from a new deal.
                self._frontier.clear()
                self._seen.clear()
                self.current = self._root()
        return "won"

    async def _step(self) -> bool:
        """One move forward (or a jump back and one forward); False when nothing is left."""
        node = self.current
        if node.choices is None:
            await self._open(node)
            if node.choices and await self._try(node, 0):
                return True
        if not self.backtrack:
            return await self._wander(node)
        return await self._jump()

    async def _open(self, node: Node) -> None:
        """Ask for the position's choices; queue every one but the first."""
        hints = None if self._hints_off else await self.table.hints()
        if hints is None:
            self._hints_off = True
            moves = list(await self.table.legal_moves())
            self.random.shuffle(moves)
            node.choices, node.widened = moves, True
            self._queue(node, range(1, len(moves)), FIRST)
        elif winning(hints):
            # A winning line: the other hints are only a fallback (unless this is a mistake).
            moves = node.choices = [hint.move for hint in hints]
            best = 0
            if len(moves) > 1 and self.random.random() < self.tactics.noise:
                best = self.random.randrange(1, len(moves))
                moves[0], moves[best] = moves[best], moves[0]
                self._queue(node, [best], FIRST)
            self._queue(node, [*(i for i in range(1, len(moves)) if i != best), WIDEN], LAST)
        elif sees_everything(node.key) and self.backtrack:
            # Every card visible and no winning line: probably lost. Look again later.
            node.choices = []
            self._queue(node, [REOPEN], LAST)
        else:
            node.choices = self._ordered(hints)
            self._queue(node, range(1, len(node.choices)), FIRST)
            self._queue(node, [WIDEN], LAST)

    def _ordered(self, hints: Sequence[HintItem]) -> list[str]:
        """The hints' moves in the order the bot tries them."""
        moves = [hint.move for hint in hints]
        rank = self.tactics.deal_rank
        if rank is not None and DEAL in moves[rank + 1 :]:
            moves.remove(DEAL)
            moves.insert(rank, DEAL)
        if len(moves) > 1 and self.random.random() < self.tactics.noise:
            other = self.random.randrange(1, len(moves))
            moves[0], moves[other] = moves[other], moves[0]
        return moves

    def _cost(self, node: Node, index: int) -> int:
        """What taking choice ``index`` of ``node`` adds to the discrepancy."""
        if index == 0:
            return 0
        return EARLY_COST if node.depth < self.tactics.early else LATE_COST

    def _queue(self, node: Node, indexes: Sequence[int], tier: int) -> None:
        for index in indexes:
            priority = (tier, node.discrepancy + self._cost(node, index), -node.depth, node.serial, index)
            heapq.heappush(self._frontier, (priority, node, index))

    async def _try(self, node: Node, index: int) -> bool:
        """Play choice ``index`` of ``node`` (the current position); True if it led somewhere new."""
        assert node.choices is not None
        move = node.choices[index]
        if not await self._play(move):
            return False  # refused: a stale hint
        key = board_key(self.table.board())
        if key in self._seen and self.backtrack:
            await self.table.undo()  # reached before another way: nothing new down there
            return False
        self._seen.add(key)
        self.current = Node(node, move, key, node.discrepancy + self._cost(node, index), next(self._serials))
        return True

    async def _play(self, move: str, again: bool = False) -> bool:
        if self.budget is not None and self.played >= self.budget:
            raise _Spent
        if self.patience is not None and self._since_best >= self.patience:
            raise _Spent
        if not await self.table.play(move, again):
            return False
        self.played += 1
        progress = self.table.progress()
        if progress > self._best:
            self._best, self._since_best = progress, 0
        else:
            self._since_best += 1
        return True

    async def _jump(self) -> bool:
        """Go to the most promising untried choice and try it; False when none is left."""
        while self._frontier:
            _, node, index = heapq.heappop(self._frontier)
            await self._travel(node)
            if index == REOPEN:
                await self._reopen(node)
            elif index == WIDEN:
                await self._widen(node)
            elif await self._try(node, index):
                return True
        return False

    async def _reopen(self, node: Node) -> None:
        """A position judged lost, looked at again (the winning-line search may have run out
        of time or allowance): its hints, all of them untried."""
        hints = await self.table.hints() or []
        node.choices = [hint.move for hint in hints] if winning(hints) else self._ordered(hints)
        self._queue(node, range(len(node.choices)), FIRST)
        self._queue(node, [WIDEN], LAST)

    async def _widen(self, node: Node) -> None:
        """Add the legal moves the hints left out to ``node``'s choices."""
        if node.widened:
            return
        node.widened = True
        assert node.choices is not None
        known = set(node.choices)
        extra = [move for move in await self.table.legal_moves() if move not in known]
        start = len(node.choices)
        node.choices.extend(extra)
        self._queue(node, range(start, len(node.choices)), LAST)

    async def _travel(self, target: Node) -> None:
        """Undo back to the last position ``target`` shares with the current one, then play
        the moves down to ``target`` again."""
        here, there = self.current, target
        down: list[str] = []
        while here.depth > there.depth:
            assert here.parent is not None
            here = here.parent
        while there.depth > here.depth:
            down.append(there.move)
            assert there.parent is not None
            there = there.parent
        while here is not there:
            assert here.parent is not None
            assert there.parent is not None
            down.append(there.move)
            here, there = here.parent, there.parent
        for _ in range(self.current.depth - here.depth):
            await self.table.undo()
        for move in reversed(down):
            if not await self._play(move, again=True):
                raise LostTrack(f"the server refused {move} on the way back to a known position")
        if board_key(self.table.board()) != target.key:
            raise LostTrack("the board is not the one the bot saw there before")
        self.current = target

    async def _wander(self, node: Node) -> bool:
        """No going back, and the first choice here went nowhere: a random legal move.
        False when there is none (the racer is stuck)."""
        moves = list(await self.table.legal_moves())
        if not moves:
            return False
        move = self.random.choice(moves)
        if await self._play(move):
            key = board_key(self.table.board())
            self.current = Node(node, move, key, node.discrepancy + 1, next(self._serials))
        return True


class _Spent(Exception):
    """The budget of moves is spent."""


class LostTrack(Exception):
    """The board is not where the search thought it was (it starts again from there)."""
