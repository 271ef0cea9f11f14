"""Bot racers, at three levels. They know no rules: they play what the server offers.

Every level plays the same search (:mod:`client.lib.bot_search`): the server's hints best
first, taking moves back (``undo``) out of dead ends to try the next most promising choice,
and following the server's winning line once one shows (where every card is visible). The
levels differ in pace and in how well they choose (measured by ``python -m bench.bot_levels``,
which the top-level README's table comes from):

- ``easy``: a move every 3 s or so, and half the time another hint than the best (a
  mistake it takes back only once it meets a dead end);
- ``medium``: a move every 2 s (slower than a good player), another hint than the best one
  time in seven;
- ``hard``: no mistakes, a move every 0.3 s.

Moves played again on the way back to a known position, and undos, go three times faster.

A bot on a deal the server certified winnable (``view.certified``) never resigns while it
has a legal move: it plays on until it wins or the race ends (by its time limit). On any
other deal (which may have no win) it resigns when it has nothing left to try, no legal
move, after ``max_moves`` moves, or after its level's patience (60, 150, 300 moves) without
getting further. It says ``bot`` in its ``hello``, so the server
can mark its seat and results.

A bot survives its server going away: when the connection drops (a restart, a deploy) the
client reconnects with its resume token, and the bot waits for it (up to
:data:`RECONNECT_PATIENCE` seconds), reads its board afresh, finds out whether the move it
had sent counted, and plays on from there. :func:`stay` keeps a bot in its room across
rematches: it readies again after each race and leaves once it is alone. Used by
``python -m client bot``, the UI's "Race a bot", and the tests.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from client.lib.bot_search import LostTrack, Outcome, Search, Tactics
from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    AskHint,
    AskLegalMoves,
    AskSnapshot,
    ClientMessage,
    HintItem,
    Hints,
    Joined,
    JoinRoom,
    Leave,
    LegalMoves,
    PlayMove,
    Ready,
    Resign,
    ServerMessage,
    Undo,
)
from protocol.mirror import RoomMirror

Level = Literal["easy", "medium", "hard"]
LEVELS: Final[tuple[Level, ...]] = ("easy", "medium", "hard")

#: Seconds a bot waits for its server to come back after the connection dropped.
RECONNECT_PATIENCE: Final = 300.0
#: How much faster than a new move a bot undoes, or plays again a move it knows.
QUICK: Final = 3.0


@dataclass(frozen=True)
class Style:
    """How a level plays: ``delay`` seconds between its moves on average, ``tactics``, and
    on a deal not certified winnable, after how many moves without getting further (more
    cards home or in sight, or more in order) it gives up."""

    delay: float
    tactics: Tactics
    patience: int


STYLES: Final[dict[Level, Style]] = {
    "easy": Style(delay=3.0, tactics=Tactics(noise=0.5), patience=60),
    "medium": Style(delay=2.0, tactics=Tactics(noise=0.15), patience=150),
    "hard": Style(delay=0.3, tactics=Tactics(), patience=300),
}

#: How often each level strays from the best hint, in words (``Tactics.noise``: 0.5, 0.15, 0).
STRAYS: Final[dict[Level, str]] = {
    "easy": "often strays from the hints",
    "medium": "strays now and then",
    "hard": "never strays",
}


def level_text(level: Level) -> str:
    """A level in the words every client uses (the terminal's menu, the web's ``LEVELS`` in
    ``client/web/js/bot.js``): ``medium: a move every 2 s, strays now and then``."""
    return f"{level}: a move every {STYLES[level].delay:g} s, {STRAYS[level]}"


@dataclass(frozen=True)
class BotResult:
    """How a race went for a bot: won, its moves (undone ones included), whether it resigned,
    and why it stopped, in words."""

    won: bool
    moves: int
    resigned: bool
    ending: str = ""


class BotStopped(ConnectionError):
    """The bot cannot go on: its server did not come back, or ended the session."""


class SeatLost(BotStopped):
    """The room no longer has the bot's seat (it was away past the grace period, or the room
    is gone)."""


class RaceOver(Exception):
    """The race ended for the bot (its time ran out, or the room is gone) while it played."""


def _seat(client: RaceClient, mirror: RoomMirror) -> int | None:
    return next((r.seat for r in mirror.view().racers if r.player == client.player), None)


def _done(client: RaceClient, mirror: RoomMirror) -> bool:
    view = mirror.view()
    if view.state == "finished":
        return True
    me = next((r for r in view.racers if r.player == client.player), None)
    return me is None or me.finished_ms is not None or bool(me.resigned)


def _reached(version: int, mirror: RoomMirror) -> bool:
    return mirror.version >= version


def alone(client: RaceClient, mirror: RoomMirror) -> bool:
    """Whether every other racer has left the room."""
    return all(racer.player == client.player for racer in mirror.view().racers)


class Bot:
    """Plays its seat of ``room`` on ``client`` (already seated there) at ``level``;
    ``delay`` overrides the level's pace (0: as fast as the server answers). ``certified``
    overrides what the room says of its deal (a bench racing known winnable deals in
    practice rooms, which do not say)."""

    def __init__(
        self,
        client: RaceClient,
        room: str,
        level: Level = "hard",
        delay: float | None = None,
        max_moves: int = 600,
        seed: int | None = None,
        certified: bool | None = None,
        reconnect_patience: float = RECONNECT_PATIENCE,
    ) -> None:
        self.client = client
        self.room = room
        self.level = level
        self.style = STYLES[level]
        self.delay = self.style.delay if delay is None else delay
        self.max_moves = max_moves
        self.random = random.Random(seed)
        self.certified = certified
        self.reconnect_patience = reconnect_patience

    async def ready(self) -> None:
        await self.ask(lambda i: Ready(id=i, room=self.room))

    async def ask(self, build: Callable[[int], ClientMessage]) -> ServerMessage:
        """``client.request``, sent again once the connection is back if it dropped (only for
        requests that may safely be sent twice). While the connection is down the bot waits
        for it as :meth:`back` does (``reconnect_patience``), not for a request's timeout."""
        while True:
            if not self.client.connected.is_set():
                await self.back()
            try:
                return await self.client.request(build)
            except (ConnectionError, TimeoutError):
                await self.back()

    async def back(self) -> None:
        """The connection dropped, or the server did not answer: wait until the client is
        connected again and the copy of the room is fresh (a snapshot of it, asked for).
        Raises BotStopped if that takes longer than ``reconnect_patience`` or cannot happen,
        SeatLost if the room no longer has the bot's seat."""
        client, room = self.client, self.room
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.reconnect_patience
        while True:
            if client.ended is not None:
                raise BotStopped(f"the server ended the session ({client.ended.code} {client.ended.reason})".strip())
            if not client.reconnect and not client.connected.is_set():
                raise BotStopped("the connection to the server dropped")
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise BotStopped(f"the server did not come back within {self.reconnect_patience:.0f} s")
            try:
                await client.request(lambda i: AskSnapshot(id=i, room=room), timeout=min(remaining, 30.0))
                return
            except (ConnectionError, TimeoutError):
                await asyncio.sleep(min(0.5, max(remaining, 0.0)))
            except ServerError as error:
                raise SeatLost(f"the room no longer has this bot's seat ({error.code})") from error

    async def play(self, start_timeout: float = 120.0) -> BotResult:
        """Wait for the race, then play until this racer is done (won, resigned, or the race
        ended)."""
        client, room = self.client, self.room
        mirror = await client.wait_room(room, lambda m: m.view().state in ("racing", "finished"), timeout=start_timeout)
        seat = _seat(client, mirror)
        assert seat is not None, "the bot has no seat in this room"
        await client.wait_room(room, lambda m: m.board(seat) is not None or _done(client, m))
        view = mirror.view()
        certified = self.certified if self.certified is not None else bool(view.certified)
        table = _Seat(self, seat)
        try:
            ending = await self._race(table, certified, view.options.undo)
        except (RaceOver, SeatLost) as over:
            ending = str(over) or "the race ended"
        return self._result(seat, ending)

    async def _race(self, table: _Seat, certified: bool, undo: bool) -> str:
        """Search until done; resign where the rules above allow it. What happened, in words."""
        budget, patience = (None, None) if certified else (self.max_moves, self.style.patience)
        while not table.done():
            search = Search(table, self.style.tactics, self.random, undo=undo, budget=budget, patience=patience)
            outcome: Outcome = await search.run()
            if outcome == "won":
                break
            if outcome == "exhausted" and not await table.legal_moves():
                outcome = "stuck"
            if certified and outcome != "stuck":
                continue  # a winnable deal, and moves left: look again, from here
            reason = {
                "stuck": "no legal move left",
                "budget": f"no win within {self.max_moves} moves"
                if search.played >= self.max_moves
                else f"nothing gained in {self.style.patience} moves",
                "exhausted": "nothing left to try",
            }[outcome]
            await table.request(lambda i: Resign(id=i, room=self.room))
            return f"resigned: {reason}"
        me = next(r for r in table.mirror().view().racers if r.seat == table.seat)
        return "won" if me.finished_ms is not None else "the race ended"

    def _result(self, seat: int, ending: str) -> BotResult:
        mirror = self.client.rooms.get(self.room)
        me = None if mirror is None else next((r for r in mirror.view().racers if r.seat == seat), None)
        if me is None:
            return BotResult(won=False, moves=0, resigned=False, ending=ending)
        return BotResult(
            won=me.finished_ms is not None, moves=me.progress.moves, resigned=bool(me.resigned), ending=ending
        )

    async def pause(self, quick: bool) -> None:
        if self.delay:
            await asyncio.sleep(self.delay / (QUICK if quick else 1.0) * (0.5 + self.random.random()))


class _Seat:
    """The bot's seat as a :class:`~client.lib.bot_search.Table`: its board from the copy of
    the room, and requests that survive the connection dropping."""

    def __init__(self, bot: Bot, seat: int) -> None:
        self.bot = bot
        self.seat = seat

    def mirror(self) -> RoomMirror:
        mirror = self.bot.client.rooms.get(self.bot.room)
        if mirror is None:
            raise RaceOver("the bot is no longer in the room")
        return mirror

    def board(self) -> Sequence[Sequence[int | None]]:
        board = self.mirror().board(self.seat)
        if board is None:
            raise RaceOver("the bot's board is gone")
        return board

    def done(self) -> bool:
        return _done(self.bot.client, self.mirror())

    def progress(self) -> tuple[int, ...]:
        racer = next(r for r in self.mirror().view().racers if r.seat == self.seat)
        face_down = sum(card is None for pile in self.board() for card in pile)
        return racer.progress.home, -face_down, racer.progress.ordered

    async def request(self, build: Callable[[int], ClientMessage]) -> ServerMessage:
        """The bot's request; RaceOver once the race is over for the bot."""
        try:
            return await self.bot.ask(build)
        except ServerError as error:
            if error.code in ("not-racing", "not-in-room", "no-such-room"):
                raise RaceOver("the race ended") from error
            raise

    async def hints(self) -> Sequence[HintItem] | None:
        room = self.bot.room
        try:
            reply = await self.request(lambda i: AskHint(id=i, room=room))
        except ServerError as error:
            if error.code == "hints-disabled":
                return None
            # Hints failed here (a server fault): every legal move will do instead.
            return [HintItem(move, "a legal move") for move in await self.legal_moves()]
        return reply.hints if isinstance(reply, Hints) else []

    async def legal_moves(self) -> Sequence[str]:
        room = self.bot.room
        reply = await self.request(lambda i: AskLegalMoves(id=i, room=room))
        return reply.moves if isinstance(reply, LegalMoves) else []

    async def play(self, move: str, again: bool = False) -> bool:
        await self.bot.pause(quick=again)
        room = self.bot.room
        try:
            return await self._change(lambda i: PlayMove(id=i, room=room, move=move))
        except ServerError as error:
            if error.code in ("illegal-move", "invalid-move"):
                return False  # a stale hint
            raise

    async def undo(self) -> None:
        await self.bot.pause(quick=True)
        room = self.bot.room
        try:
            await self._change(lambda i: Undo(id=i, room=room))
        except ServerError as error:
            if error.code == "nothing-to-undo":
                raise LostTrack("the server has no move to undo") from error
            raise

    async def _change(self, build: Callable[[int], ClientMessage]) -> bool:
        """Send a move or an undo and wait until the copy of the room shows it. If the
        connection drops meanwhile, the fresh copy says whether it counted (the board
        changed) or must be sent again."""
        bot, room = self.bot, self.bot.room
        while True:
            if not bot.client.connected.is_set():
                await bot.back()  # the bot's patience, not a request's timeout
            before = [list(pile) for pile in self.board()]
            try:
                ack = await bot.client.request(build)
                await bot.client.wait_room(room, functools.partial(_reached, getattr(ack, "version", None) or 0))
                return True
            except (ConnectionError, TimeoutError):
                await bot.back()
            except ServerError as error:
                if error.code in ("not-racing", "not-in-room", "no-such-room"):
                    raise RaceOver("the race ended") from error
                raise
            if [list(pile) for pile in self.board()] != before:
                return True  # it counted before the drop


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
            with contextlib.suppress(ServerError):
                await bot.ask(lambda i: Leave(id=i, room=room))
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
    rematch after rematch (see :func:`stay`), reconnecting when its server restarts.
    ``on_ready(room)`` is called once it is seated, ``on_race`` after each of its races.
    Raises BotStopped (a ConnectionError, with the reason) if the server does not come back."""
    async with await RaceClient.connect(url, bot_name(level), bot=True) as client:
        joined = await client.request(lambda i: JoinRoom(id=i, room=code))
        assert isinstance(joined, Joined)
        if on_ready is not None:
            on_ready(joined.room)
        bot = Bot(client, joined.room, level, delay=delay, max_moves=max_moves)
        await stay(bot, races=races, on_race=on_race)
