"""The load generator's bots: racers driven through real websocket clients, and what they measure.

Each room gets ``plan.per_room`` bots, each one a :class:`~client.lib.connection.RaceClient`
(its own connection and player). One bot creates the room, the others join, everyone
readies up, and after the countdown each bot loops: choose a move (by asking the server
for its legal moves, or, with ``plan.ask_legal`` off, by running the rules engine on its
own board as the server shows it), play it, sleep to keep the pace. The pace is shared
by a worker's bots (one :class:`server.connections.limits.Pacer`: a turn not taken is not
saved up, so bots that fall behind go on from now, never in a burst) and no bot moves
more than once per ``plan.bot_interval``. A bot resigns when it is stuck or has played
``plan.race_moves`` moves; when every racer of a room is done, the creator asks for a
rematch and the room races again, so the load stays steady.

Measured, per move: the time from sending it to its ``Ack``, and the time from sending it
to the moment each rival's client reads the ``Update`` that carries it (matched by
(room, version) in :class:`bench.lib.bot_results.Recorder`). A worker process
(:func:`worker_main`) runs one :class:`Plan` and sends back a
:class:`~bench.lib.bot_results.WorkerResult`; ``bench.lib.bot_fleet`` starts and stops them.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import gc
import multiprocessing.connection
import random
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from websockets.exceptions import InvalidHandshake

from bench.lib.bot_results import Recorder, Samples, WorkerResult
from bench.lib.sources import address_of, connect_from, from_own_addresses
from bench.lib.spawn import pin, raise_nofile_limit
from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    Ack,
    AskLegalMoves,
    BoardChanged,
    ClientMessage,
    CreateRoom,
    Joined,
    JoinRoom,
    Leave,
    LegalMoves,
    PlayMove,
    ProgressChanged,
    RacerFinished,
    RacerResigned,
    Ready,
    Rematch,
    Resign,
    RoomOptions,
    ServerMessage,
    Snapshot,
    StateChanged,
    Undo,
    Update,
    Variant,
)
from server.connections.limits import Pacer
from server.games import Game, Options, variant_class

# -- the bots -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Plan:
    """What one worker process does (sent to it, so plain picklable data)."""

    url: str
    rooms: Sequence[int]
    per_room: int
    rate: float  # this worker's moves a second, shared by its racing bots
    bot_interval: float  # the shortest time between two moves of one bot
    variant: Variant
    race_moves: int
    deal_after: int
    undo_share: float
    connect_concurrency: int
    seed: int
    #: Ask the server for the legal moves before each move; off: the bot's own rules engine
    #: on its board as the server shows it (the last list asked for when no board is shown).
    ask_legal: bool = True
    #: CPUs the worker process runs on (None: anywhere).
    cpus: tuple[int, ...] | None = None
    #: Name prefix of the bots' players (several fleets on one server keep theirs apart).
    name: str = "bot"
    #: The rooms' spectator delay in seconds (None: the server's default, 0 for private rooms).
    spectator_delay: float | None = None
    #: The bots wait for the parent's "go" before their first move (see :func:`run_worker`).
    paused: bool = False


def paced_pairs(url: str, rooms: int, rate: float, seed: int, cpus: tuple[int, ...] | None, name: str) -> Plan:
    """Two-racer Scorpion rooms paced to ``rate`` moves a second in all, with no spectator
    delay: the steady load that abuse and fan-out runs measure against."""
    return Plan(
        url=url,
        rooms=range(rooms),
        per_room=2,
        rate=rate,
        bot_interval=1 / 20,
        variant="scorpion",
        race_moves=1000,
        deal_after=40,
        undo_share=0.0,
        connect_concurrency=5,
        seed=seed,
        cpus=cpus,
        name=name,
        spectator_delay=0,
    )


def local_legal_moves(variant: type[Game], board: Sequence[Sequence[int | None]]) -> list[str]:
    """The legal moves of a public board (face-down cards as None), by the rules engine.

    Legality depends only on the cards a player sees, so the unseen ones are filled in with
    the cards missing from the board, in any order.
    """
    unseen = iter(sorted(set(range(52)) - {card for pile in board for card in pile if card is not None}))
    piles = [[next(unseen) if card is None else card for card in pile] for pile in board]
    hidden = [sum(card is None for card in pile) for pile in board]
    game = variant(None, Options(), piles, hidden)
    return [game.move_text(move) for move in game.legal_moves()]


def choose_move(moves: list[str], plays: int, deal_after: int, rng: random.Random) -> str:
    """A random legal move; ``deal`` only when it is the only one, or now and then late in the race."""
    others = [move for move in moves if move != "deal"]
    if len(others) < len(moves) and (not others or (plays >= deal_after and rng.random() < 0.25)):
        return "deal"
    return rng.choice(others)


class Bot:
    """One racer: a client, its seat, and the room state it follows.

    Not :class:`client.lib.bot.Bot` (plays to win at a level's pace): any legal move at the load's, replies timed."""

    def __init__(
        self, client: RaceClient, recorder: Recorder, pacer: Pacer, plan: Plan, rng: random.Random, going: asyncio.Event
    ) -> None:
        """``going``: the bot moves only while it is set."""
        self.client = client
        self.pacer = pacer
        self.going = going
        self.recorder = recorder
        self.plan = plan
        self.rng = rng
        self.room = ""
        self.seat = -1
        self.state = ""
        self.done = False  # finished or resigned in the current race
        self.version = 0  # the room version named by the last Ack
        self.variant = variant_class(plan.variant)
        self.changed = asyncio.Event()
        self._sent: dict[int, float] = {}
        client.listen(self._on_message)

    def _on_message(self, _room: str, message: ServerMessage) -> None:
        # Called by the client library as it dispatches each frame: the closest we get
        # to the moment the frame was read.
        now = time.monotonic()
        if isinstance(message, Ack):
            sent = self._sent.pop(message.id, None)
            if message.version is not None:
                self.version = message.version
            if sent is not None and message.version is not None and message.room is not None:
                self.recorder.acked(message.room, message.version, sent, now)
        elif isinstance(message, Update):
            for event in message.events:
                if isinstance(event, ProgressChanged | BoardChanged):
                    if event.seat != self.seat:
                        self.recorder.seen(message.room, message.version, now)
                elif isinstance(event, StateChanged):
                    self._set_state(event.state)
                elif isinstance(event, RacerFinished | RacerResigned) and event.seat == self.seat:
                    self.done = True
        elif isinstance(message, Snapshot):
            self._set_state(message.view.state)

    def _set_state(self, state: str) -> None:
        if state != self.state:
            self.state = state
            self.changed.set()

    async def wait_state(self, state: str, stop: asyncio.Event) -> bool:
        """Wait until the room is in ``state``; False if the run is stopping first."""
        while self.state != state:
            if stop.is_set():
                return False
            self.changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.changed.wait(), 0.5)
        return True

    async def call(self, build: Callable[[int], ClientMessage], timed: Samples | None = None) -> ServerMessage | None:
        """Send a request and return its reply; errors are counted, not raised."""
        sent = time.monotonic()
        try:
            reply = await self.client.request(build, timeout=30)
        except ServerError as error:
            self.recorder.error(error.code)
            return None
        except TimeoutError:
            self.recorder.error("timeout (client)")
            return None
        except ConnectionError:
            self.recorder.error("connection lost (client)")
            return None
        if timed is not None:
            timed.add(sent, time.monotonic() - sent)
        return reply

    async def resign(self, stop: asyncio.Event) -> None:
        """Resign, trying again if the server fails (else the room would never finish)."""
        for _ in range(10):
            if stop.is_set() or self.done or self.state != "racing":
                return
            if await self.call(lambda i: Resign(id=i, room=self.room)) is not None:
                return
            await asyncio.sleep(0.2)

    def _racing(self, stop: asyncio.Event) -> bool:
        if stop.is_set() or self.done or self.state != "racing":
            if self.done and not stop.is_set():
                self.recorder.result.endings["won"] += 1
            return False
        return True

    def _timed(self, message: PlayMove | Undo) -> PlayMove | Undo:
        """Note when a move goes out (called by the client library just before it sends)."""
        self._sent[message.id] = time.monotonic()
        return message

    def _play(self, room: str, move: str, request_id: int) -> PlayMove | Undo:
        return self._timed(PlayMove(id=request_id, room=room, move=move))

    async def race(self, stop: asyncio.Event) -> None:
        """Play the current race at the plan's pace until done, stuck, at the move cap or stopped."""
        self.done = False
        plays = 0
        room = self.room
        last = 0.0
        known: list[str] | None = None
        while self._racing(stop):
            # No faster than a brisk human (and the server's per-connection rate limit) ...
            delay = last + self.plan.bot_interval - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            # ... and in turn with the worker's other bots, at the worker's share of --rate.
            turn = self.pacer.delay(time.monotonic())
            if turn > 0:
                await asyncio.sleep(turn)
            if not self.going.is_set():
                await self.going.wait()  # another server's turn (bench.ab --turns)
            last = time.monotonic()
            if not self._racing(stop):
                break
            if plays > 0 and self.rng.random() < self.plan.undo_share:
                await self.call(lambda i: self._timed(Undo(id=i, room=room)))
                self.recorder.result.undos += 1
                continue
            moves = await self._legal_moves(room, known)
            if moves is None:
                self.recorder.result.endings["no legal-moves reply"] += 1
                break  # not racing any more (the race ended) or the connection went
            known = moves
            if not moves or plays >= self.plan.race_moves:
                self.recorder.result.endings["stuck" if not moves else "move cap"] += 1
                await self.resign(stop)
                return
            move = choose_move(moves, plays, self.plan.deal_after, self.rng)
            if await self.call(functools.partial(self._play, room, move)) is None:
                known = None  # refused (the bot's own rules disagreed?): ask next time
            plays += 1

    async def _legal_moves(self, room: str, known: list[str] | None) -> list[str] | None:
        """The moves to choose from: asked for, or worked out from the bot's own board."""
        if not self.plan.ask_legal:
            board = await self._own_board(room)
            if board is not None:
                return local_legal_moves(self.variant, board)
            if known is not None:
                return known  # the server shows no board (the relay): reuse the list asked for
        reply = await self.call(lambda i: AskLegalMoves(id=i, room=room), self.recorder.result.legal)
        return reply.moves if isinstance(reply, LegalMoves) else None

    async def _own_board(self, room: str) -> list[list[int | None]] | None:
        """The bot's board once its copy of the room has every update its last move caused."""
        try:
            mirror = await self.client.wait_room(room, lambda m: m.version >= self.version, timeout=2)
        except TimeoutError:
            return None
        return mirror.board(self.seat)


class Ramp:
    """Counts rooms that have settled (racing, or given up); says 'ready' to the parent once all have,
    with the codes of the rooms that race (so other tools can spectate them)."""

    def __init__(self, rooms: int, pipe: multiprocessing.connection.Connection) -> None:
        self.rooms = rooms
        self.pipe = pipe
        self.settled = 0
        self.racing = 0
        self.codes: list[str] = []
        self.started = time.monotonic()

    def settle(self, code: str | None) -> None:
        """One more room settled: racing as ``code``, or given up (None)."""
        self.settled += 1
        if code is not None:
            self.racing += 1
            self.codes.append(code)
        if self.settled == self.rooms:
            self.pipe.send(("ready", time.monotonic() - self.started, self.racing, self.codes))


async def run_room(
    index: int,
    plan: Plan,
    recorder: Recorder,
    pacer: Pacer,
    gate: asyncio.Semaphore,
    stop: asyncio.Event,
    ramp: Ramp,
    going: asyncio.Event,
) -> None:
    """Seat ``plan.per_room`` bots in a new room and race, rematch, race ... until ``stop``."""
    rng = random.Random(plan.seed * 1_000_003 + index)
    bots: list[Bot] = []
    settled = False
    code = ""
    try:
        async with gate:
            for n in range(plan.per_room):
                try:
                    # Each bot from an address of its own, as the server's per-address limits expect.
                    source = address_of(index * plan.per_room + n)
                    client = await connect_from(plan.url, f"{plan.name}{index}-{n}", source, reconnect=False)
                except (OSError, ServerError, TimeoutError, InvalidHandshake) as error:
                    recorder.error(f"connect failed ({type(error).__name__})")
                    return
                recorder.result.connections += 1
                bots.append(Bot(client, recorder, pacer, plan, rng, going))
            creator = bots[0]
            options = RoomOptions(max_racers=plan.per_room, spectator_delay=plan.spectator_delay)
            variant = plan.variant
            joined = await creator.call(lambda i: CreateRoom(id=i, variant=variant, options=options))
            if not isinstance(joined, Joined):
                return
            code = joined.room
            creator.seat = joined.seat if joined.seat is not None else 0
            for bot in bots[1:]:
                reply = await bot.call(lambda i: JoinRoom(id=i, room=code))
                if not isinstance(reply, Joined) or reply.seat is None:
                    return
                bot.seat = reply.seat
            for bot in bots:
                bot.room = code
        while not stop.is_set():
            await asyncio.gather(*(bot.call(lambda i: Ready(id=i, room=code)) for bot in bots))
            if not all([await bot.wait_state("racing", stop) for bot in bots]):
                break
            recorder.result.races += 1
            if not settled:
                settled = True
                ramp.settle(code)
            await asyncio.gather(*(bot.race(stop) for bot in bots))
            if not all([await bot.wait_state("finished", stop) for bot in bots]):
                break
            await creator.call(lambda i: Rematch(id=i, room=code))
            if not all([await bot.wait_state("waiting", stop) for bot in bots]):
                break
        # Tidy up: leaving a race counts as resigning, so the server's room finishes now
        # rather than after the grace period of a dropped connection.
        for bot in bots:
            with contextlib.suppress(ServerError, TimeoutError, ConnectionError):
                await bot.client.request(lambda i: Leave(id=i, room=code), timeout=5)
    finally:
        if not settled:
            ramp.settle(None)
        await asyncio.gather(*(bot.client.close() for bot in bots), return_exceptions=True)


async def run_worker(plan: Plan, pipe: multiprocessing.connection.Connection) -> WorkerResult:
    """Drive the plan's rooms until the parent says "stop"; say 'ready' once all race. The
    parent's "pause" holds every bot before its next move until "go" (a plan that starts
    ``paused`` waits for the first "go")."""
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    going = asyncio.Event()
    if not plan.paused:
        going.set()

    def on_pipe() -> None:
        word = pipe.recv()
        if word == "pause":
            going.clear()
            return
        going.set()  # "go", or "stop", which a paused bot must see too
        if word == "stop":
            stop.set()

    loop.add_reader(pipe.fileno(), on_pipe)
    recorder = Recorder()
    ramp = Ramp(len(plan.rooms), pipe)
    gate = asyncio.Semaphore(plan.connect_concurrency)
    pacer = Pacer(1 / plan.rate)
    tasks = [
        asyncio.create_task(run_room(index, plan, recorder, pacer, gate, stop, ramp, going)) for index in plan.rooms
    ]

    async def prune() -> None:
        while True:
            await asyncio.sleep(5)
            recorder.prune(time.monotonic() - 10)

    pruner = asyncio.create_task(prune())
    await stop.wait()
    finished, unfinished = await asyncio.wait(tasks, timeout=20)
    for task in unfinished:
        task.cancel()
    for task in finished:
        error = task.exception()
        if error is not None:
            recorder.error(f"bot crashed ({type(error).__name__}: {error})")
    pruner.cancel()
    loop.remove_reader(pipe.fileno())
    recorder.result.rooms_racing = ramp.racing
    return recorder.result


def worker_main(plan: Plan, pipe: multiprocessing.connection.Connection) -> None:
    """Entry point of a worker process."""
    raise_nofile_limit()
    pin(plan.cpus)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C and says stop
    # Full collections of the bots' many objects pause this process for 100 ms and more,
    # which would show up as server latency: collect rarely (memory is no concern here).
    gc.set_threshold(50_000, 50, 100)
    with from_own_addresses():
        result = asyncio.run(run_worker(plan, pipe))
    pipe.send(("result", result))
