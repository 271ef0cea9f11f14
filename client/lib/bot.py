"""Bot racers, at three levels. They know no rules: they play what the server offers.

- ``easy``: a random legal move (``legal_moves``), slowly, never taking a move back.
- ``medium``: the server's hints best first (every legal move once the hints run dry),
  searching depth first with ``undo`` out of dead ends, at a person's pace.
- ``hard``: the same search, fast. The solver's line is not sent to clients, so this is
  the best a client can do: the server's best hint first, every time.

A bot resigns when it is stuck: no move left to try (and none to take back), no progress
(cards home or in order) for ``patience`` moves, or ``max_moves`` moves played. It says
``bot`` in its ``hello``, so the server can mark its seat and results. :func:`stay`
keeps a bot in its room across rematches: it readies again after each race and leaves
once it is alone. Used by ``python -m client bot``, the UI's "Race a bot", and the tests.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Literal

from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    AskHint,
    AskLegalMoves,
    Hints,
    Joined,
    JoinRoom,
    Leave,
    LegalMoves,
    PlayMove,
    Ready,
    Resign,
    Undo,
)
from protocol.mirror import RoomMirror

BoardKey = tuple[tuple[int | None, ...], ...]

Level = Literal["easy", "medium", "hard"]
LEVELS: Final[tuple[Level, ...]] = ("easy", "medium", "hard")


@dataclass(frozen=True)
class Style:
    """How a level plays: ``delay`` seconds between moves on average, whether it follows
    the server's hints and takes moves back out of dead ends, and after how many moves
    without progress it gives up."""

    delay: float
    hints: bool
    search: bool
    patience: int


STYLES: Final[dict[Level, Style]] = {
    "easy": Style(delay=3.0, hints=False, search=False, patience=60),
    "medium": Style(delay=1.5, hints=True, search=True, patience=150),
    "hard": Style(delay=0.3, hints=True, search=True, patience=300),
}


@dataclass(frozen=True)
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


def alone(client: RaceClient, mirror: RoomMirror) -> bool:
    """Whether every other racer has left the room."""
    return all(racer.player == client.player for racer in mirror.view().racers)


class Bot:
    """Plays its seat of ``room`` on ``client`` (already seated there) at ``level``;
    ``delay`` overrides the level's pace (0: as fast as the server answers)."""

    def __init__(
        self,
        client: RaceClient,
        room: str,
        level: Level = "hard",
        delay: float | None = None,
        max_moves: int = 600,
        seed: int | None = None,
    ) -> None:
        self.client = client
        self.room = room
        self.style = STYLES[level]
        self.delay = self.style.delay if delay is None else delay
        self.max_moves = max_moves
        self.random = random.Random(seed)
        self._hints = self.style.hints

    async def ready(self) -> None:
        await self.client.request(lambda i: Ready(id=i, room=self.room))

    async def _candidates(self, tried: set[str]) -> list[str]:
        """Moves not yet tried from this board: the server's hints, best first; when none
        is left (or the level takes no hints), every legal move, shuffled."""
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

    async def _send(self, build: type[PlayMove] | type[Undo], move: str = "") -> None:
        """Play ``move`` (or undo) and wait until the copy of the room shows it."""
        room = self.room
        if build is PlayMove:
            ack = await self.client.request(lambda i: PlayMove(id=i, room=room, move=move))
        else:
            ack = await self.client.request(lambda i: Undo(id=i, room=room))
        version = getattr(ack, "version", None) or 0
        await self.client.wait_room(room, lambda m: m.version >= version)

    async def _pause(self) -> None:
        if self.delay:
            await asyncio.sleep(self.delay * (0.5 + self.random.random()))

    async def play(self, start_timeout: float = 120.0) -> BotResult:
        """Wait for the race, then play until this racer is done (won, resigned, or the race
        ended)."""
        client, room = self.client, self.room
        mirror = await client.wait_room(room, lambda m: m.view().state in ("racing", "finished"), timeout=start_timeout)
        seat = _seat(client, mirror)
        assert seat is not None, "the bot has no seat in this room"
        await client.wait_room(room, lambda m: m.board(seat) is not None or _done(client, m))
        undo = client.rooms[room].view().options.undo and self.style.search
        tried: dict[BoardKey, set[str]] = {}
        played = depth = since_progress = 0
        best = (-1, -1)
        moved = False  # whether the last step was a move (not an undo)
        while not _done(client, client.rooms[room]):
            view = client.rooms[room].view()
            board = client.rooms[room].board(seat)
            assert board is not None
            progress = next(r.progress for r in view.racers if r.seat == seat)
            if (progress.home, progress.ordered) > best:
                best, since_progress = (progress.home, progress.ordered), 0
            key: BoardKey = tuple(tuple(pile) for pile in board)
            revisit = moved and key in tried and undo
            done_here = tried.setdefault(key, set()) if self.style.search else set()
            try:
                stuck = played >= self.max_moves or since_progress >= self.style.patience
                candidates = [] if revisit or stuck else await self._candidates(done_here)
                if not candidates and depth > 0 and undo and not stuck:
                    # A dead end, or a board already explored: take the move back, try another.
                    await self._send(Undo)
                    depth, moved = depth - 1, False
                    since_progress += 1
                    continue
                if not candidates:
                    await client.request(lambda i: Resign(id=i, room=room))
                    break
                move = candidates[0]
                done_here.add(move)
                await self._send(PlayMove, move)
            except ServerError as error:
                if error.code == "not-racing":
                    break  # the race ended meanwhile
                if error.code in ("illegal-move", "invalid-move"):
                    continue  # a stale hint: try the next candidate
                raise
            played, depth, moved = played + 1, depth + 1, True
            since_progress += 1
            await self._pause()
        view = client.rooms[room].view()
        me = next(r for r in view.racers if r.seat == seat)
        return BotResult(won=me.finished_ms is not None, moves=me.progress.moves, resigned=bool(me.resigned))


async def stay(
    bot: Bot,
    races: int | None = None,
    linger: float = 600.0,
    start_timeout: float = 3600.0,
    on_race: Callable[[BotResult], None] | None = None,
) -> list[BotResult]:
    """Race in ``bot.room`` again and again: ready, race, then wait for a rematch and ready
    again. Stops after ``races`` races (None: no limit), when no rematch comes within
    ``linger`` seconds, or (leaving the room) when every other racer has left.
    ``on_race`` is called with the outcome of each race."""
    client, room = bot.client, bot.room
    outcomes: list[BotResult] = []
    while races is None or len(outcomes) < races:
        await bot.ready()
        try:
            mirror = await client.wait_room(
                room, lambda m: m.view().state != "waiting" or alone(client, m), timeout=start_timeout
            )
        except TimeoutError:
            break
        if mirror.view().state == "waiting":  # everyone else left before the race
            await client.request(lambda i: Leave(id=i, room=room))
            break
        outcomes.append(await bot.play(start_timeout=start_timeout))
        if on_race is not None:
            on_race(outcomes[-1])
        if races is not None and len(outcomes) >= races:
            break
        try:
            await client.wait_room(room, lambda m: m.view().state == "waiting", timeout=linger)
        except TimeoutError:
            break
    return outcomes


def bot_name(level: Level) -> str:
    return f"Bot ({level})"


async def join_and_stay(
    url: str,
    code: str,
    level: Level = "medium",
    delay: float | None = None,
    races: int | None = None,
    max_moves: int = 600,
    on_ready: Callable[[str], None] | None = None,
    on_race: Callable[[BotResult], None] | None = None,
) -> None:
    """A bot connects, joins room ``code`` (ServerError if it cannot) and races there,
    rematch after rematch (see :func:`stay`). ``on_ready(room)`` is called once it is
    seated, ``on_race`` after each of its races."""
    async with await RaceClient.connect(url, bot_name(level), bot=True) as client:
        joined = await client.request(lambda i: JoinRoom(id=i, room=code))
        assert isinstance(joined, Joined)
        if on_ready is not None:
            on_ready(joined.room)
        bot = Bot(client, joined.room, level, delay=delay, max_moves=max_moves)
        await stay(bot, races=races, on_race=on_race)
