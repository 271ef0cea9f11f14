"""The floor: a bare websockets + Redis relay that speaks our framing and knows no rules.

Run::

    python -m bench.relay --port 8766                  # its own Redis, in a temporary directory
    python -m bench.relay --port 8766 --redis-url unix:///path/redis.sock

It is what issue 16 measures the server against: per move, one Redis pipeline (RPUSH of
the move to the seat's log and PUBLISH of the update frame) and one broadcast of that
frame to the room, nothing else. By default the pipelines of the moves that arrive while
one is on its way go to Redis together, as one (a group commit, as the server's store
does: under load, hundreds of separate pipelines cost Redis and the relay more than the
moves themselves); ``--pipeline-per-move`` sends each move's pipeline on its own.
``--pipelined`` sends them instead on the server's own pipelined connection
(:mod:`server.storage.pipelined`, the road of the server's room commits), so that the floor
can also be measured without redis-py's cost.

It answers just enough of the protocol for ``bench.load``'s bots (and spectators) to run
against it: ``hello``, ``create_room``, ``join``, ``spectate``, ``ready``, ``legal_moves``
(always the same list), ``move``, ``undo``, ``resign``, ``rematch``, ``snapshot`` and
``leave``; anything else gets ``not-allowed``. Requests are decoded and validated by the protocol's own decoder, as in
the server, and answered one at a time per connection. A room races as soon as it is full
and everyone is ready (no countdown), accepts any move text, and finishes when every racer
has resigned. Nothing is ever restored: it is a measuring stick, not a server.

Without ``--redis-url`` it starts its own Redis exactly as the server does
(:class:`server.storage.embedded.EmbeddedRedis`, in ``--data-dir`` or a temporary directory).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import logging
import secrets
import signal
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from redis.asyncio import ConnectionPool, Redis
from websockets.asyncio.server import ServerConnection, broadcast, serve
from websockets.exceptions import ConnectionClosed

from protocol.codec import MalformedFrame, decode_client, encode
from protocol.errors import ErrorCode
from protocol.messages import (
    PROTOCOL_VERSION,
    Ack,
    AskLegalMoves,
    AskSnapshot,
    ClientMessage,
    Clock,
    CreateRoom,
    Error,
    Hello,
    Joined,
    JoinRoom,
    Leave,
    LegalMoves,
    PlayMove,
    Progress,
    ProgressChanged,
    RaceOver,
    Racer,
    RacerJoined,
    RacerReady,
    RacerResigned,
    Ready,
    Rematch,
    Rematched,
    Resign,
    RoomEvent,
    RoomView,
    ServerMessage,
    Snapshot,
    Spectate,
    StateChanged,
    Undo,
    Update,
    Welcome,
)
from server.clock import now_ms
from server.storage.embedded import EmbeddedRedis
from server.storage.pipelined import PipelinedConnection

logger = logging.getLogger("relay")

#: What ``legal_moves`` always answers: moves the bots can choose among (the relay takes any).
LEGAL_MOVES = ["QS>5", "7H>3", "JD>1", "9C>6", "deal"]
#: Redis connections at most.
POOL_SIZE = 5000
#: The same frame limit as the server's.
MAX_FRAME = 256 * 1024


@dataclass(eq=False, slots=True)
class Seat:
    player: str
    name: str
    moves: int = 0
    ready: bool = False
    done: bool = False

    def racer(self, seat: int) -> Racer:
        progress = Progress(0, 0, self.moves)
        return Racer(seat=seat, player=self.player, name=self.name, progress=progress, ready=self.ready)


@dataclass(eq=False, slots=True)
class Session:
    """One connection: who it is, once it said hello."""

    socket: ServerConnection
    player: str | None = None
    name: str = ""

    def send(self, message: ServerMessage) -> None:
        broadcast([self.socket], encode(message))


@dataclass(eq=False, slots=True)
class RelayRoom:
    code: str
    variant: Any
    options: Any
    creator: str
    seats: dict[int, Seat] = field(default_factory=dict)
    followers: dict[Session, int | None] = field(default_factory=dict)  # session -> seat (None: spectator)
    state: str = "waiting"
    version: int = 0
    race: int = 1
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def seat_of(self, player: str | None) -> int | None:
        return next((n for n, seat in self.seats.items() if seat.player == player), None)

    def snapshot(self, request_id: int | None = None) -> Snapshot:
        view = RoomView(
            code=self.code,
            variant=self.variant,
            options=self.options,
            state=self.state,  # type: ignore[arg-type]
            creator=self.creator,
            piles=[],
            racers=[seat.racer(n) for n, seat in sorted(self.seats.items())],
            spectators=sum(1 for s in self.followers.values() if s is None),
            clock=Clock(now=now_ms()),
            race=self.race,
        )
        return Snapshot(room=self.code, version=self.version, view=view, id=request_id)

    def update(self, events: list[RoomEvent]) -> bytes:
        """Take the room through ``events``: the encoded update (the version moves one per event)."""
        base = self.version
        self.version += len(events)
        return encode(Update(room=self.code, base=base, version=self.version, events=events))

    def tell(self, frame: bytes) -> None:
        broadcast([session.socket for session in self.followers], frame)


class RoomRefused(Exception):
    def __init__(self, code: ErrorCode, message: str) -> None:
        super().__init__(message)
        self.code = code


class Relay:
    """The relay's rooms and request handlers, over one Redis client."""

    def __init__(self, redis: Redis, group_commit: bool = True, line: PipelinedConnection | None = None) -> None:
        self.redis = redis
        self.group_commit = group_commit
        self.line = line
        self.rooms: dict[str, RelayRoom] = {}
        self._queued: list[tuple[str, str, str, bytes, asyncio.Future[None]]] = []
        self._writer: asyncio.Task[None] | None = None
        self._codes = itertools.count(1)
        self._handlers: dict[type[Any], Callable[[Session, Any], Awaitable[None]]] = {
            Hello: self._hello,
            CreateRoom: self._create,
            JoinRoom: self._join,
            Spectate: self._spectate,
            Ready: self._ready,
            AskLegalMoves: self._legal_moves,
            PlayMove: self._move,
            Undo: self._undo,
            Resign: self._resign,
            Rematch: self._rematch,
            AskSnapshot: self._snapshot,
            Leave: self._leave,
        }

    async def connection(self, socket: ServerConnection) -> None:
        session = Session(socket)
        try:
            async for frame in socket:
                if isinstance(frame, str):
                    session.send(Error(code=ErrorCode.BAD_FRAME, message="send binary frames"))
                    continue
                try:
                    message = decode_client(frame)
                except MalformedFrame as error:
                    session.send(Error(code=error.code, message=str(error), id=error.request_id))
                    continue
                await self.handle(session, message)
        except ConnectionClosed:
            pass
        finally:
            for room in list(self.rooms.values()):
                if room.followers.pop(session, "absent") != "absent" and not room.followers:
                    del self.rooms[room.code]

    async def handle(self, session: Session, message: ClientMessage) -> None:
        if session.player is None and not isinstance(message, Hello):
            session.send(Error(code=ErrorCode.HELLO_FIRST, message="say hello first", id=message.id))
            return
        handler = self._handlers.get(type(message))
        if handler is None:
            session.send(Error(code=ErrorCode.NOT_ALLOWED, message="the relay does not serve that", id=message.id))
            return
        try:
            await handler(session, message)
        except RoomRefused as refused:
            session.send(Error(code=refused.code, message=str(refused), id=message.id))

    def _room(self, code: str) -> RelayRoom:
        room = self.rooms.get(code)
        if room is None:
            raise RoomRefused(ErrorCode.NO_SUCH_ROOM, f"no room {code}")
        return room

    def _racing_seat(self, session: Session, room: RelayRoom) -> int:
        seat = room.seat_of(session.player)
        if seat is None:
            raise RoomRefused(ErrorCode.NOT_IN_ROOM, "you have no seat here")
        if room.state != "racing" or room.seats[seat].done:
            raise RoomRefused(ErrorCode.NOT_RACING, "not racing")
        return seat

    async def _hello(self, session: Session, message: Hello) -> None:
        session.player = secrets.token_hex(8)
        session.name = message.name
        session.send(
            Welcome(
                id=message.id,
                player=session.player,
                name=message.name,
                resume=f"{session.player}.relay",
                protocol=PROTOCOL_VERSION,
            )
        )

    async def _create(self, session: Session, message: CreateRoom) -> None:
        assert session.player is not None
        code = f"R{next(self._codes):07d}"
        room = RelayRoom(code, message.variant, message.options, session.player)
        room.seats[0] = Seat(session.player, session.name)
        room.followers[session] = 0
        self.rooms[code] = room
        session.send(Joined(id=message.id, room=code, role="racer", seat=0))
        session.send(room.snapshot())

    async def _join(self, session: Session, message: JoinRoom) -> None:
        assert session.player is not None
        room = self._room(message.room)
        seat = next((n for n in range(room.options.max_racers) if n not in room.seats), None)
        if seat is None:
            raise RoomRefused(ErrorCode.ROOM_FULL, "every seat is taken")
        if room.state != "waiting":
            raise RoomRefused(ErrorCode.RACE_IN_PROGRESS, "the room is not waiting")
        room.seats[seat] = Seat(session.player, session.name)
        frame = room.update([RacerJoined(racer=room.seats[seat].racer(seat))])
        room.tell(frame)
        room.followers[session] = seat
        session.send(Joined(id=message.id, room=room.code, role="racer", seat=seat))
        session.send(room.snapshot())

    async def _spectate(self, session: Session, message: Spectate) -> None:
        room = self._room(message.room)
        room.followers[session] = None
        session.send(Joined(id=message.id, room=room.code, role="spectator"))
        session.send(room.snapshot())

    async def _ready(self, session: Session, message: Ready) -> None:
        room = self._room(message.room)
        seat = room.seat_of(session.player)
        if seat is None:
            raise RoomRefused(ErrorCode.NOT_IN_ROOM, "you have no seat here")
        if room.state != "waiting":
            raise RoomRefused(ErrorCode.NOT_WAITING, "the race has started")
        room.seats[seat].ready = message.ready
        events: list[RoomEvent] = [RacerReady(seat=seat, ready=message.ready)]
        if len(room.seats) == room.options.max_racers and all(s.ready for s in room.seats.values()):
            room.state = "racing"
            now = now_ms()
            events.append(StateChanged(state="racing", clock=Clock(now=now, started=now), race=room.race))
        frame = room.update(events)
        session.send(Ack(id=message.id, room=room.code, version=room.version))
        room.tell(frame)

    async def _legal_moves(self, session: Session, message: AskLegalMoves) -> None:
        room = self._room(message.room)
        self._racing_seat(session, room)
        session.send(LegalMoves(id=message.id, room=room.code, moves=LEGAL_MOVES))

    async def _play(self, session: Session, request_id: int, code: str, entry: str, move: str | None) -> None:
        """The whole move path: one pipeline (RPUSH + PUBLISH), the ack, one broadcast."""
        room = self._room(code)
        seat = self._racing_seat(session, room)
        racer = room.seats[seat]
        # One move of a room at a time, so the versions reach every follower in order.
        async with room.lock:
            racer.moves += 1
            # Every follower hears the mover's progress (the relay keeps no boards).
            frame = room.update([ProgressChanged(seat=seat, progress=Progress(0, 0, racer.moves))])
            await self._store(f"relay:room:{code}:log:{seat}", entry, f"relay:room:{code}", frame)
            session.send(Ack(id=request_id, room=code, version=room.version, move=move))
            room.tell(frame)

    async def _store(self, log: str, entry: str, channel: str, frame: bytes) -> None:
        """RPUSH ``entry`` and PUBLISH ``frame``, in one pipeline: this move's own, or the next group's."""
        if self.line is not None:
            await self.line.call_all([("RPUSH", log, entry), ("PUBLISH", channel, frame)])
            return
        if not self.group_commit:
            async with self.redis.pipeline(transaction=False) as pipe:
                pipe.rpush(log, entry)
                pipe.publish(channel, frame)
                await pipe.execute()
            return
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queued.append((log, entry, channel, frame, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._write())
        await done

    async def _write(self) -> None:
        while self._queued:
            batch, self._queued = self._queued, []
            try:
                async with self.redis.pipeline(transaction=False) as pipe:
                    for log, entry, channel, frame, _ in batch:
                        pipe.rpush(log, entry)
                        pipe.publish(channel, frame)
                    await pipe.execute()
            except Exception as error:
                for *_, done in batch:
                    done.set_exception(error)
            else:
                for *_, done in batch:
                    done.set_result(None)

    async def _move(self, session: Session, message: PlayMove) -> None:
        await self._play(session, message.id, message.room, message.move, message.move)

    async def _undo(self, session: Session, message: Undo) -> None:
        await self._play(session, message.id, message.room, "undo", None)

    async def _resign(self, session: Session, message: Resign) -> None:
        room = self._room(message.room)
        seat = self._racing_seat(session, room)
        async with room.lock:
            room.seats[seat].done = True
            events: list[RoomEvent] = [RacerResigned(seat=seat)]
            if all(s.done for s in room.seats.values()):
                room.state = "finished"
                now = now_ms()
                events += [StateChanged(state="finished", clock=Clock(now=now, finished=now), race=room.race)]
                events += [RaceOver(results=[])]
            frame = room.update(events)
            session.send(Ack(id=message.id, room=room.code, version=room.version))
            room.tell(frame)

    async def _rematch(self, session: Session, message: Rematch) -> None:
        room = self._room(message.room)
        if room.seat_of(session.player) is None:
            raise RoomRefused(ErrorCode.NOT_IN_ROOM, "you have no seat here")
        if room.state != "finished":
            raise RoomRefused(ErrorCode.NOT_FINISHED, "the race is not over")
        async with room.lock:
            room.race += 1
            room.state = "waiting"
            for seat in room.seats.values():
                seat.moves, seat.ready, seat.done = 0, False, False
            frame = room.update(
                [Rematched(race=room.race), StateChanged(state="waiting", clock=Clock(now=now_ms()), race=room.race)]
            )
            session.send(Ack(id=message.id, room=room.code, version=room.version))
            room.tell(frame)

    async def _snapshot(self, session: Session, message: AskSnapshot) -> None:
        room = self._room(message.room)
        if session not in room.followers:
            raise RoomRefused(ErrorCode.NOT_IN_ROOM, "this connection does not follow the room")
        session.send(room.snapshot(message.id))

    async def _leave(self, session: Session, message: Leave) -> None:
        room = self._room(message.room)
        if room.followers.pop(session, "absent") == "absent":
            raise RoomRefused(ErrorCode.NOT_IN_ROOM, "this connection does not follow the room")
        session.send(Ack(id=message.id, room=room.code, version=room.version))
        if not room.followers:
            del self.rooms[room.code]


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.relay", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8766)
    parser.add_argument("--redis-url", help="a Redis to use; without it the relay starts its own")
    parser.add_argument("--data-dir", type=Path, help="the embedded Redis's directory (default: a temporary one)")
    parser.add_argument("--log-level", default="WARNING")
    parser.add_argument(
        "--pipeline-per-move",
        dest="group_commit",
        action="store_false",
        help="send each move's pipeline on its own instead of grouping those in flight",
    )
    parser.add_argument(
        "--pipelined",
        action="store_true",
        help="send the moves on the server's pipelined connection instead of redis-py's pipelines",
    )
    return parser.parse_args(argv)


async def serve_relay(args: argparse.Namespace) -> None:
    """Serve until SIGINT or SIGTERM, then close the connections and stop the embedded Redis."""
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[None] = loop.create_future()

    def on_signal() -> None:
        if not stop.done():
            stop.set_result(None)

    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, on_signal)
    with contextlib.ExitStack() as temporary:
        embedded: EmbeddedRedis | None = None
        url = args.redis_url
        if url is None:
            data_dir = args.data_dir or Path(temporary.enter_context(tempfile.TemporaryDirectory(prefix="relay-")))
            embedded = EmbeddedRedis(data_dir)
            url = await embedded.start()
        # A connection for every pipeline in flight (one per racing room at most): no waiting for
        # a pooled connection (a blocking pool's waiters cost more than the moves), and no refusal
        # (redis-py's default pool caps at 100 and then raises "too many connections").
        redis = Redis.from_pool(ConnectionPool.from_url(url, max_connections=POOL_SIZE))
        line = PipelinedConnection(url, reply_timeout=2.0, connect_timeout=5.0) if args.pipelined else None
        try:
            relay = Relay(redis, args.group_commit, line)
            async with serve(relay.connection, args.host, args.port, compression=None, max_size=MAX_FRAME):
                logger.warning("relay listening on ws://%s:%d, Redis %s", args.host, args.port, url)
                # As the server does: keep start-up objects out of collections, collect rarely.
                gc.freeze()
                gc.set_threshold(50_000, 50, 100)
                await stop
        finally:
            if line is not None:
                line.close()
            await redis.aclose()
            if embedded is not None:
                await embedded.stop()


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=args.log_level, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    asyncio.run(serve_relay(args))


if __name__ == "__main__":
    main()
