"""A bot racer: plays by the server's hints (``hint``; ``legal_moves`` when hints are
off or exhausted). It knows no rules. It searches depth first over the boards it sees:
it remembers which moves it tried from each board, takes a move back (``undo``, when
the room allows it) at a dead end or on a board it has already explored, and resigns
when it has tried everything or played ``max_moves`` moves. Used by ``python -m client bot`` for
demos and load, and by the tests as a rival.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from client.connection import RaceClient, ServerError
from protocol.messages import AskHint, AskLegalMoves, Hints, LegalMoves, PlayMove, Ready, Resign, Undo
from protocol.mirror import RoomMirror

BoardKey = tuple[tuple[int | None, ...], ...]


@dataclass
class BotResult:
    won: bool
    moves: int
    resigned: bool


def _seat(client: RaceClient, mirror: RoomMirror) -> int | None:
    return next((r.seat for r in mirror.view().racers if r.player == client.player), None)


def _done(client: RaceClient, mirror: RoomMirror) -> bool:
    view = mirror.view()
    if view.state == "finished":
        return True
    me = next((r for r in view.racers if r.player == client.player), None)
    return me is None or me.finished_ms is not None or bool(me.resigned)


class Bot:
    """Plays its seat of ``room`` on ``client`` (already seated there)."""

    def __init__(self, client: RaceClient, room: str, delay: float = 0.3, max_moves: int = 600, seed: int = 0):
        self.client = client
        self.room = room
        self.delay = delay
        self.max_moves = max_moves
        self.random = random.Random(seed)
        self._hints = True

    async def ready(self) -> None:
        await self.client.request(lambda i: Ready(id=i, room=self.room))

    async def _candidates(self, tried: set[str]) -> list[str]:
        """Moves not yet tried from this board: the server's hints, best first; when none
        is left, every legal move (shuffled)."""
        room = self.room
        if self._hints:
            try:
                hints = await self.client.request(lambda i: AskHint(id=i, room=room))
            except ServerError as error:
                if error.code != "hints-disabled":
                    raise
                self._hints = False
            else:
                if isinstance(hints, Hints):
                    fresh = [hint.move for hint in hints.hints if hint.move not in tried]
                    if fresh:
                        return fresh
        legal = await self.client.request(lambda i: AskLegalMoves(id=i, room=room))
        moves = [move for move in legal.moves if move not in tried] if isinstance(legal, LegalMoves) else []
        self.random.shuffle(moves)
        return moves

    async def _play(self, move: str) -> None:
        """Play ``move`` and wait until the copy of the room shows it."""
        ack = await self.client.request(lambda i: PlayMove(id=i, room=self.room, move=move))
        version = getattr(ack, "version", None) or 0
        await self.client.wait_room(self.room, lambda m: m.version >= version)

    async def _undo(self) -> None:
        ack = await self.client.request(lambda i: Undo(id=i, room=self.room))
        version = getattr(ack, "version", None) or 0
        await self.client.wait_room(self.room, lambda m: m.version >= version)

    async def play(self, start_timeout: float = 120.0) -> BotResult:
        """Wait for the race, then play until this racer is done (won, resigned, or the race
        ended)."""
        client, room = self.client, self.room
        mirror = await client.wait_room(room, lambda m: m.view().state in ("racing", "finished"), timeout=start_timeout)
        seat = _seat(client, mirror)
        assert seat is not None, "the bot has no seat in this room"
        await client.wait_room(room, lambda m: m.board(seat) is not None or _done(client, m))
        undo = client.rooms[room].view().options.undo
        tried: dict[BoardKey, set[str]] = {}
        played = depth = 0
        moved = False  # whether the last step was a move (not an undo)
        while not _done(client, client.rooms[room]):
            board = client.rooms[room].board(seat)
            assert board is not None
            key: BoardKey = tuple(tuple(pile) for pile in board)
            revisit = moved and key in tried and undo
            done_here = tried.setdefault(key, set())
            try:
                candidates = [] if revisit else await self._candidates(done_here)
                if not candidates and depth > 0 and undo and played < self.max_moves:
                    # A dead end, or a board already explored: take the move back, try another.
                    await self._undo()
                    depth, moved = depth - 1, False
                    continue
                if not candidates or played >= self.max_moves:
                    await client.request(lambda i: Resign(id=i, room=room))
                    break
                move = candidates[0]
                done_here.add(move)
                await self._play(move)
            except ServerError as error:
                if error.code == "not-racing":
                    break  # the race ended meanwhile
                if error.code in ("illegal-move", "invalid-move"):
                    continue  # a stale hint: try the next candidate
                raise
            played, depth, moved = played + 1, depth + 1, True
            if self.delay:
                await asyncio.sleep(self.delay * (0.5 + self.random.random()))
        view = client.rooms[room].view()
        me = next(r for r in view.racers if r.seat == seat)
        return BotResult(won=me.finished_ms is not None, moves=me.progress.moves, resigned=bool(me.resigned))
