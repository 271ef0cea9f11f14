"""The bots of :mod:`bench.arena`: players who race again and again, in an arena or in plain
quick matches by turns, in worker processes of their own.

Each bot is a guest on one node, connected from a loopback address of its own (the server
limits connections per address), with automatic reconnection: when its connection drops it
tries the next node that is not known dead, as a client behind a balancer would. It loops:
join (``join_arena`` in an arena window, ``quick_match`` in a plain one, as the
:class:`Schedule` says), race, join again. A race: moves worked out from its own board at
``rate`` a second (each bot at its own phase), a resignation after ``moves`` moves (or with no
legal move left, or when its window ends), then the wait for ``race_over``, and it leaves the
room. A sample of the bots, after each arena race, polls ``arena`` every 50 ms until their own
line counts that race.

The bots run in worker processes (:mod:`bench.lib.arena_workers`) and note what they saw in
a :class:`WorkerResult`. Times are ``time.monotonic()``, one clock for every process on
Linux, so the parent cuts the workers' samples by its own windows.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import random
import time
from array import array
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from bench.lib.bots import choose_move, local_legal_moves
from bench.lib.node_fleet import play
from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    Ack,
    ArenaStandings,
    AskArena,
    ClientMessage,
    JoinArena,
    Joined,
    LeaveArena,
    LeaveQueue,
    QuickMatch,
    RaceOver,
    Resign,
    Result,
    ServerMessage,
    Snapshot,
    Update,
    Variant,
)
from protocol.mirror import RoomMirror
from server.games import variant_class

Kind = Literal["arena", "plain"]
KINDS: Final[tuple[Kind, Kind]] = ("arena", "plain")
#: Seconds between two standings polls of a measuring bot, and how long it polls at most.
POLL, POLL_FOR = 0.05, 30.0
#: Seconds a bot waits by default for its race's end once it has resigned (a rival may be
#: reconnecting); past it the race counts as not seen to end.
OVER_WAIT: Final = 90.0
#: Moves before a bot deals now and then (Scorpion's stock) when other moves are left.
DEAL_AFTER: Final = 10


@dataclass(frozen=True, slots=True)
class Schedule:
    """The run's windows, alternated: arena, plain, arena, ... from ``start`` (monotonic) for
    ``seconds``; the parent measures each from ``settle`` seconds in; ``kill_at``: when a
    node is killed (None: none is)."""

    start: float
    seconds: float
    window: float
    settle: float
    kill_at: float | None

    @property
    def end(self) -> float:
        return self.start + self.seconds

    def index(self, at: float) -> int:
        return int((at - self.start) // self.window)

    def kind(self, at: float) -> Kind:
        return KINDS[self.index(at) % 2]

    def window_end(self, at: float) -> float:
        return min(self.end, self.start + (self.index(at) + 1) * self.window)


@dataclass(frozen=True, slots=True)
class Plan:
    """What one worker does (sent to it: plain picklable data)."""

    urls: tuple[str, ...]  # the nodes; bot n starts on urls[n % len(urls)]
    bots: Sequence[int]  # the bots' numbers (each its own address)
    arena: str
    variant: Variant
    rate: float  # moves a second of each bot
    moves: int  # moves before a bot resigns
    measure_every: int  # every n-th bot polls the standings (0: none)
    seed: int
    over_wait: float = OVER_WAIT  # seconds a bot waits for its race's end once it resigned


@dataclass
class RaceSeen:
    """One race as a bot lived it. ``places``: (seat, player, place) of every racer."""

    kind: Kind
    room: str
    player: str
    joined: float
    race: int = 0
    in_arena: bool = False  # the room's view named the arena
    over: float | None = None  # when the bot saw it end (race_over, or a finished snapshot)
    place: int | None = None
    places: list[tuple[int, str, int]] = field(default_factory=list)


@dataclass
class WorkerResult:
    acks: dict[str, array[float]] = field(default_factory=lambda: {kind: array("d") for kind in KINDS})
    #: (race_over seen, seconds until the bot's own line counted that race)
    standings: list[tuple[float, float]] = field(default_factory=list)
    standings_missed: int = 0  # not counted within POLL_FOR
    polls: int = 0
    races: list[RaceSeen] = field(default_factory=list)
    connected: int = 0
    errors: Counter[str] = field(default_factory=Counter)
    drops: dict[str, list[float]] = field(default_factory=dict)  # bot -> when its connection dropped
    back: int = 0  # bots connected at the end, of those whose connection dropped
    #: Races a bot found itself seated in without having waited for them, by player: it left them.
    untracked: Counter[str] = field(default_factory=Counter)
    players: dict[str, str] = field(default_factory=dict)  # bot -> its player id


class ArenaBot:
    """One player, racing by the schedule until its end."""

    def __init__(
        self, client: RaceClient, plan: Plan, schedule: Schedule, result: WorkerResult, measures: bool, dead: set[str]
    ) -> None:
        self.client, self.plan, self.schedule, self.result = client, plan, schedule, result
        self.name = client.name
        self.rng = random.Random(f"{plan.seed}/{client.name}")
        self.measures = measures
        self.dead = dead
        self.variant = variant_class(plan.variant)
        self.current: RaceSeen | None = None
        self.seat = 0
        self.over = asyncio.Event()
        self.arena_races = 0  # arena races this bot has seen end
        self.polls: set[asyncio.Task[None]] = set()
        self.tidying: set[asyncio.Task[None]] = set()
        self._joins: dict[int, asyncio.Future[Joined]] = {}
        self.rooms: set[str] = set()  # every room this bot was told it races in, strays included
        client.listen(self._on_message)
        client.listen_connection(self._on_connection)

    # -- what the connection says ----------------------------------------------------------

    def _on_message(self, room: str, message: ServerMessage) -> None:
        if isinstance(message, Joined):
            waiting = self._joins.pop(message.id, None)
            if waiting is not None and not waiting.done():
                self.rooms.add(message.room)
                waiting.set_result(message)
            elif message.role == "racer":
                self._stray(message.room)
        elif room and room not in self.rooms:
            self._stray(room)
        elif isinstance(message, Update):
            for event in message.events:
                if isinstance(event, RaceOver):
                    self._ended(room, event.results, live=True)
        elif isinstance(message, Snapshot) and message.view.state == "finished" and message.view.results:
            self._ended(room, message.view.results, live=False)  # ended while we were away

    def _stray(self, room: str) -> None:
        """A race this bot is seated in without having waited for it (paired after it stopped
        waiting, or its ``joined`` lost with a dropped connection): counted, and left, so that
        its rivals need not wait for it."""
        if room in self.rooms:
            return
        self.rooms.add(room)
        self.result.untracked[self.client.player or ""] += 1
        tidy = asyncio.ensure_future(self.client.leave(room))
        self.tidying.add(tidy)
        tidy.add_done_callback(_retrieved)
        tidy.add_done_callback(self.tidying.discard)

    def _ended(self, room: str, results: list[Result], live: bool) -> None:
        race, mirror = self.current, self.client.rooms.get(room)
        if race is None or race.room != room or race.over is not None or mirror is None:
            return
        view = mirror.view()
        players = {racer.seat: racer.player for racer in view.racers}
        race.over = time.monotonic()
        race.race, race.in_arena = view.race, view.arena == self.plan.arena
        race.places = [(r.seat, players.get(r.seat, ""), r.place) for r in results]
        race.place = next((r.place for r in results if r.seat == self.seat), None)
        self.over.set()
        if race.in_arena:
            self.arena_races += 1
            if live and self.measures:
                poll = asyncio.ensure_future(self._poll_standings(race.over, self.arena_races))
                self.polls.add(poll)
                poll.add_done_callback(self.polls.discard)

    def _on_connection(self, up: bool) -> None:
        if up:
            return
        self.result.drops.setdefault(self.name, []).append(time.monotonic())
        for waiting in self._joins.values():
            if not waiting.done():
                waiting.set_exception(ConnectionError("dropped while waiting to be paired"))
                waiting.exception()  # retrieved: the loop learns it from the connection
        self._joins.clear()
        # The reconnection goes to the next node not known dead, as a balancer would send it.
        urls = list(self.plan.urls)
        at = urls.index(self.client.url) if self.client.url in urls else -1
        for step in range(1, len(urls) + 1):
            candidate = urls[(at + step) % len(urls)]
            if candidate not in self.dead:
                self.client.url = candidate
                return

    async def _poll_standings(self, seen: float, races: int) -> None:
        """Ask for the standings every :data:`POLL` s until this bot's line counts ``races``."""
        tick = seen
        while time.monotonic() - seen < POLL_FOR:
            self.result.polls += 1
            with contextlib.suppress(ServerError, ConnectionError, TimeoutError):
                reply = await self.client.request(lambda i: AskArena(id=i, arena=self.plan.arena, limit=1, around=True))
                if isinstance(reply, ArenaStandings) and reply.me is not None and reply.me.races >= races:
                    self.result.standings.append((seen, time.monotonic() - seen))
                    return
            tick += POLL
            await asyncio.sleep(max(0.0, tick - time.monotonic()))
        self.result.standings_missed += 1

    # -- the loop ----------------------------------------------------------------------------

    async def run(self) -> None:
        schedule = self.schedule
        await asyncio.sleep(max(0.0, schedule.start - time.monotonic()))
        while time.monotonic() < schedule.end:
            now = time.monotonic()
            kind, ends = schedule.kind(now), schedule.window_end(now)
            joined = await self._join(kind, ends)
            if joined is not None and joined.seat is not None:
                await self._race(kind, joined.room, joined.seat, ends)
        if self.polls:
            await asyncio.wait(set(self.polls), timeout=POLL_FOR + 5)

    async def _join(self, kind: Kind, ends: float) -> Joined | None:
        """Wait in the line of ``kind`` until paired (the Joined) or its window ``ends`` (None)."""
        client = self.client
        paired: asyncio.Future[Joined] = asyncio.get_running_loop().create_future()

        def join(request_id: int) -> ClientMessage:
            self._joins[request_id] = paired
            if kind == "arena":
                return JoinArena(id=request_id, arena=self.plan.arena)
            return QuickMatch(id=request_id, variant=self.plan.variant)

        try:
            if not await self._ask(join, f"{kind} join"):
                return None
            try:
                return await asyncio.wait_for(asyncio.shield(paired), max(0.01, ends - time.monotonic()))
            except ConnectionError:
                return None  # dropped from the line with the connection: join again
            except TimeoutError:
                pass
            # The window is over: leave the line, unless a race formed meanwhile.
            with contextlib.suppress(ConnectionError, TimeoutError):
                try:
                    if kind == "arena":
                        await client.request(lambda i: LeaveArena(id=i, arena=self.plan.arena))
                    else:
                        await client.request(lambda i: LeaveQueue(id=i, variant=self.plan.variant))
                    return None
                except ServerError:
                    return await asyncio.wait_for(asyncio.shield(paired), 10)  # not-in-queue: paired
            return None
        finally:
            for request_id in [i for i, waiting in self._joins.items() if waiting is paired]:
                del self._joins[request_id]

    async def _ask(self, build: Callable[[int], ClientMessage], what: str) -> bool:
        """Send a request, counting its failures; True when it was answered without error."""
        try:
            await self.client.request(build, timeout=30)
            return True
        except ServerError as error:
            self.result.errors[f"{what}: {error.code}"] += 1
            await asyncio.sleep(1.0)
        except (ConnectionError, TimeoutError) as error:
            self.result.errors[f"{what}: {type(error).__name__}"] += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.client.connected.wait(), 10)
        return False

    async def _race(self, kind: Kind, room: str, seat: int, ends: float) -> None:
        """Race in ``room`` until done or its window ``ends``, and wait for the race's end."""
        client, result = self.client, self.result
        race = RaceSeen(kind, room, client.player or "", time.monotonic())
        self.current, self.seat = race, seat
        self.over.clear()
        result.races.append(race)
        mirror: RoomMirror | None
        try:
            mirror = await client.wait_room(room, _started, timeout=60)
        except TimeoutError:
            result.errors["race not started within 60 s"] += 1
            mirror = client.rooms.get(room)
        if mirror is not None:
            race.race, race.in_arena = mirror.view().race, mirror.view().arena == self.plan.arena
        if mirror is not None and mirror.view().state == "racing":
            await self._play(kind, room, mirror.version, ends)
            await self._resign(room)
        try:
            await asyncio.wait_for(self.over.wait(), self.plan.over_wait)
        except TimeoutError:
            result.errors["race not seen to end"] += 1
        self.current = None
        with contextlib.suppress(ServerError, ConnectionError, TimeoutError):
            await client.leave(room)

    async def _play(self, kind: Kind, room: str, version: int, ends: float) -> None:
        """Moves at the bot's pace until ``moves`` are acked, none is legal, the race is over
        or the window ends."""
        client, rate, acks = self.client, self.plan.rate, self.result.acks[kind]
        plays, next_at = 0, time.monotonic() + self.rng.random() / rate
        while plays < self.plan.moves and not self.over.is_set():
            await asyncio.sleep(max(0.0, next_at - time.monotonic()))
            next_at = max(next_at + 1 / rate, time.monotonic())  # late: on from now, no burst
            if time.monotonic() >= ends or self.over.is_set():
                return
            if not client.connected.is_set():
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(client.connected.wait(), 1.0)
                continue
            try:
                mirror = await client.wait_room(room, functools.partial(_caught_up, version=version), timeout=5)
            except TimeoutError:
                self.result.errors["no update of its ack within 5 s"] += 1
                continue
            board = mirror.board(self.seat)
            if mirror.view().state != "racing" or board is None:
                return
            moves = local_legal_moves(self.variant, board)
            if not moves:
                return
            move = choose_move(moves, plays, DEAL_AFTER, self.rng)
            try:
                reply = await client.request(functools.partial(play, room=room, move=move))
            except ServerError as error:
                self.result.errors[f"move: {error.code}"] += 1
                continue
            except (ConnectionError, TimeoutError) as error:
                self.result.errors[f"move: {type(error).__name__}"] += 1
                continue
            if isinstance(reply, Ack):
                acks.append(time.monotonic())
                plays += 1
                version = reply.version if reply.version is not None else version

    async def _resign(self, room: str) -> None:
        """Resign, unless the race is over for this bot; again while the server cannot (its
        room is moving to another node) or the connection is down."""
        for _ in range(40):
            mirror = self.client.rooms.get(room)
            if self.over.is_set() or mirror is None or not _still_racing(mirror, self.seat):
                return
            try:
                await self.client.request(lambda i: Resign(id=i, room=room))
                return
            except ServerError as error:
                self.result.errors[f"resign: {error.code}"] += 1
                if error.code not in ("storage-unavailable", "internal-error"):
                    return  # over for this bot (not-racing, race-over, ...)
            except (ConnectionError, TimeoutError) as error:
                self.result.errors[f"resign: {type(error).__name__}"] += 1
            await asyncio.sleep(0.5)
        self.result.errors["could not resign"] += 1


def _retrieved(task: asyncio.Task[None]) -> None:
    if not task.cancelled():
        task.exception()  # a failed tidy-up leave is of no consequence


def _started(mirror: RoomMirror) -> bool:
    return mirror.view().state in ("racing", "finished")


def _caught_up(mirror: RoomMirror, version: int) -> bool:
    return mirror.version >= version or mirror.view().state != "racing"


def _still_racing(mirror: RoomMirror, seat: int) -> bool:
    view = mirror.view()
    mine = next((racer for racer in view.racers if racer.seat == seat), None)
    return view.state == "racing" and mine is not None and mine.resigned is None and mine.finished_ms is None
