"""The client library: one connection to a race server, with rooms mirrored locally.

It knows no rules. It sends requests (each with a fresh id) and returns the reply that names
that id; it keeps a :class:`RoomMirror` of every room it follows, applying updates in order and
asking for a snapshot when it sees a gap; and it reconnects by itself (with backoff, presenting
its resume token) when the connection drops. The terminal UI, the load-generating bots and the
tests all build on it.

After a reconnection the server gives back every seat the player races in (a ``joined`` and a
``snapshot`` each); the client itself spectates again the rooms it was spectating, checks each
racer room with a ``snapshot`` request, and drops the copies of rooms it no longer follows (a
seat lost after the grace period). Then it tells the connection listeners. Updates that arrive
for a room whose snapshot is on its way are ignored, as PROTOCOL.md asks.

    async with await RaceClient.connect("ws://127.0.0.1:8765", "Ann") as client:
        joined = await client.request(lambda i: CreateRoom(id=i, variant="scorpion"))

A quick match answers twice: an ``ack`` when the player is in the line, and much later
a ``joined`` with the same request id when a race forms. :meth:`RaceClient.quick_match`
returns a :class:`QueueTicket` whose ``joined`` future receives that second answer.

A ``joined`` naming the room's *home* (PROTOCOL.md, "Going home") moves a client in that
one room to its server: a new connection there, resumed, then the old one closed.

Accounts: an ``account`` reply (to ``register``, ``login`` or ``change_password``) makes the
client that account: it keeps the new token, so a reconnection resumes the account. A
connection the server closes with 4001 (logged out) or 4003 (banned) is not reopened:
:attr:`RaceClient.ended` says why, and the owner decides what comes next.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import random
from collections.abc import Callable
from typing import Any, Self

from websockets.asyncio.client import ClientConnection, connect
from websockets.exceptions import ConnectionClosed, InvalidHandshake

from client.lib.homes import HomeAddress, home_address
from client.lib.outcomes import Ended as Ended
from client.lib.outcomes import QueueTicket as QueueTicket
from client.lib.outcomes import ServerError as ServerError
from client.lib.outcomes import Tickets
from protocol.codec import MalformedFrame, decode_server, encode
from protocol.errors import CloseCode
from protocol.messages import (
    PROTOCOL_VERSION,
    AccountInfo,
    AskSnapshot,
    ClientMessage,
    Error,
    Goodbye,
    Hello,
    Joined,
    Leave,
    LeaveQueue,
    QuickMatch,
    ServerMessage,
    Snapshot,
    Spectate,
    Update,
    Variant,
    Welcome,
)
from protocol.mirror import RoomMirror

logger = logging.getLogger("client")

Listener = Callable[[str, ServerMessage], None]
#: Called with False when the connection drops and True once it is back (rooms restored).
ConnectionListener = Callable[[bool], None]

#: First pause before sending again a request the server dropped as rate-limited (it doubles).
RATE_LIMIT_PAUSE = 0.1

#: Seconds to wait for the server's welcome before giving up on a connection attempt.
HELLO_TIMEOUT = 10.0

#: Close codes after which resuming makes no sense: the session is over (see PROTOCOL.md).
ENDING_CLOSES = frozenset({CloseCode.LOGGED_OUT, CloseCode.BANNED})


class RaceClient:
    """A live connection to a race server. Build with :meth:`connect`."""

    def __init__(
        self,
        url: str,
        name: str,
        resume: str | None,
        reconnect: bool,
        bot: bool = False,
        home_address: HomeAddress | None = home_address,
    ) -> None:
        self.url = url
        self.home_address = home_address  # None: homes are not followed
        self.name = name
        self.bot = bot
        self.resume = resume
        self.player: str | None = None
        #: The player is a registered account (from ``welcome``, then each ``account`` reply).
        self.account = False
        #: Set when the server closed the connection for good (logged out, banned): no reconnection.
        self.ended: Ended | None = None
        self.reconnect = reconnect
        self.rooms: dict[str, RoomMirror] = {}
        self.roles: dict[str, str] = {}
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[ServerMessage]] = {}
        self._listeners: list[Listener] = []
        self._connection_listeners: list[ConnectionListener] = []
        #: Rooms whose snapshot was asked for (a gap): their updates wait for it.
        self._resyncing: set[str] = set()
        #: Rooms left on purpose: stray updates for them are not a reason to ask for a snapshot.
        self._forgotten: set[str] = set()
        #: The reason of the last ``goodbye`` (the server is going away), until reconnected.
        self.goodbye: str | None = None
        self._tickets = Tickets()
        #: Set (and replaced) whenever a room copy changes: what :meth:`wait_room` waits on.
        self._changed = asyncio.Event()
        self._socket: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._reconnecting: asyncio.Task[None] | None = None
        self._homing: asyncio.Task[None] | None = None
        self._closing = False
        self.connected = asyncio.Event()

    @classmethod
    async def connect(
        cls,
        url: str,
        name: str,
        resume: str | None = None,
        reconnect: bool = True,
        bot: bool = False,
        home_address: HomeAddress | None = home_address,
    ) -> Self:
        """Connect, say hello (resuming if a token is given; ``bot``: as a bot, which the
        server shows to the other racers) and start reading. ``home_address``: the address
        of the server a ``joined`` names as the room's home (None: stay on this connection)."""
        client = cls(url, name, resume, reconnect, bot, home_address)
        await client._open()
        return client

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def listen(self, listener: Listener) -> None:
        """Call ``listener(room, message)`` for every snapshot and update applied, after the
        local copy changed (room is ``""`` for messages that belong to no room)."""
        self._listeners.append(listener)

    def listen_connection(self, listener: ConnectionListener) -> None:
        """Call ``listener(False)`` when the connection drops and ``listener(True)`` when an
        automatic reconnection has succeeded and the followed rooms are restored."""
        self._connection_listeners.append(listener)

    async def wait_room(
        self, room: str, predicate: Callable[[RoomMirror], object], timeout: float = 10.0
    ) -> RoomMirror:
        """Wait until the copy of ``room`` exists and ``predicate(copy)`` is true; return the
        copy. Raises TimeoutError after ``timeout`` seconds."""
        async with asyncio.timeout(timeout):
            while True:
                changed = self._changed
                mirror = self.rooms.get(room)
                if mirror is not None and predicate(mirror):
                    return mirror
                await changed.wait()

    def forget(self, room: str) -> None:
        """Drop the local copy of ``room`` (after leaving it): later stray updates are ignored."""
        self.rooms.pop(room, None)
        self.roles.pop(room, None)
        self._resyncing.discard(room)
        self._forgotten.add(room)

    async def leave(self, room: str) -> None:
        """Leave ``room`` and forget its copy; a room already gone is simply forgotten."""
        try:
            await self.request(lambda i: Leave(id=i, room=room))
        except ServerError as error:
            if error.code not in ("not-in-room", "no-such-room"):
                raise
        finally:
            self.forget(room)

    async def quick_match(self, variant: Variant) -> QueueTicket:
        """Wait in the quick-match line of ``variant``: returns once the server has put the
        player in the line; ``await ticket.joined`` for the race. Raises like :meth:`request`."""
        ticket = QueueTicket(variant)

        def build(request_id: int) -> QuickMatch:
            self._tickets.hold(request_id, ticket)
            return QuickMatch(id=request_id, variant=variant)

        try:
            await self.request(build)
        except BaseException:
            self._tickets.drop(ticket)
            raise
        return ticket

    async def leave_queue(self, ticket: QueueTicket) -> bool:
        """Leave the line of ``ticket``. False when it is too late: a race has formed and
        ``ticket.joined`` has (or is about to get) the room. Raises like :meth:`request`."""
        if ticket.joined.done():
            return False
        try:
            await self.request(lambda i: LeaveQueue(id=i, variant=ticket.variant))
        except ServerError as error:
            if error.code == "not-in-queue":
                return False
            raise
        self._tickets.drop(ticket)
        ticket.joined.cancel()
        return True

    async def _open(self, url: str | None = None) -> None:
        """Connect to ``url`` (None: :attr:`url`) and say hello: the connection in use now."""
        socket = await connect(url or self.url, compression=None, max_size=2**22, open_timeout=HELLO_TIMEOUT)
        hello_id = next(self._ids)
        try:
            async with asyncio.timeout(HELLO_TIMEOUT):
                await socket.send(
                    encode(
                        Hello(id=hello_id, protocol=PROTOCOL_VERSION, name=self.name, resume=self.resume, bot=self.bot)
                    )
                )
                while True:
                    reply = decode_server(await socket.recv(decode=False))
                    if isinstance(reply, Error) and reply.id == hello_id:
                        raise ServerError(reply)
                    if isinstance(reply, Welcome):
                        break
        except BaseException:
            await socket.close()
            raise
        self._socket = socket
        self.player, self.resume, self.name = reply.player, reply.resume, reply.name
        self.account = reply.account
        self.goodbye = None
        self._reader = asyncio.create_task(self._read(socket))
        self.connected.set()

    async def close(self) -> None:
        self._closing = True
        for task in (self._homing, self._reconnecting):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        if self._socket is not None:
            await self._socket.close()
        if self._reader is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the client was closed"))
        self._tickets.fail("the client was closed")

    async def send(self, build: Callable[[int], ClientMessage]) -> int:
        """Send ``build(id)`` without waiting for the reply; return the id. Waits while the
        client is reconnecting; raises ConnectionError if the connection drops meanwhile."""
        await self.connected.wait()
        request_id = next(self._ids)
        assert self._socket is not None
        await self._socket.send(encode(build(request_id)))
        return request_id

    async def request(self, build: Callable[[int], ClientMessage], timeout: float = 10.0) -> ServerMessage:
        """Send ``build(id)`` and return the server's reply naming that id (Ack, Joined, Hints,
        ...); raise :class:`ServerError` if it is an error, ConnectionError if the connection
        drops before the reply, TimeoutError after ``timeout`` seconds (waiting for a
        reconnection included). A request the server dropped unread for going too fast
        (``rate-limited``) is sent again after a short pause."""
        async with asyncio.timeout(timeout):
            pause = RATE_LIMIT_PAUSE
            while True:
                reply = await self._round_trip(build)
                if not (isinstance(reply, Error) and reply.code == "rate-limited"):
                    break
                await asyncio.sleep(pause)
                pause = min(pause * 2, 2.0)
        if isinstance(reply, Error):
            raise ServerError(reply)
        return reply

    async def _round_trip(self, build: Callable[[int], ClientMessage]) -> ServerMessage:
        await self.connected.wait()
        request_id = next(self._ids)
        future: asyncio.Future[ServerMessage] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            assert self._socket is not None
            try:
                await self._socket.send(encode(build(request_id)))
            except ConnectionClosed as error:
                # The reader may not have run yet to say so: a caller that retries at once
                # must wait for the reconnection, not spin on the closed socket.
                self.connected.clear()
                raise ConnectionError("the connection dropped before the request was sent") from error
            return await future
        finally:
            self._pending.pop(request_id, None)
            # A drop during the send fails the future too: its error is the one raised above,
            # so mark the future's as seen (asyncio would log it as never retrieved).
            if future.done() and not future.cancelled():
                future.exception()

    async def _read(self, socket: ClientConnection) -> None:
        try:
            async for frame in socket:
                if isinstance(frame, str):
                    continue
                try:
                    message = decode_server(frame)
                except MalformedFrame as error:
                    logger.warning("ignored a frame the client cannot read: %s", error)
                    continue
                await self._dispatch(message)
        except ConnectionClosed:
            pass
        if socket is not self._socket:
            return  # replaced by a connection to the room's home: this one was let go
        self.connected.clear()
        if socket.close_code in ENDING_CLOSES:
            self.ended = Ended(socket.close_code, socket.close_reason or "")
        # Every copy is stale until a snapshot arrives (after the reconnection).
        self._resyncing = set(self.rooms)
        # Replies to requests in flight will never come: say so now rather than at the timeout.
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the connection dropped before the reply"))
        # The server drops a disconnected player from the quick-match lines.
        self._tickets.fail("the connection dropped, and with it the place in the quick-match line")
        if self._closing:
            return
        self._notify_connection(False)
        if self.reconnect and self.ended is None:
            self._reconnecting = asyncio.create_task(self._reconnect())

    def _notify_connection(self, up: bool) -> None:
        for listener in self._connection_listeners:
            try:
                listener(up)
            except Exception:
                logger.exception("a connection listener failed")

    async def _reconnect(self) -> None:
        delay = 0.2
        while not self._closing:
            # Jittered, so that a restarted server is not hit by every client at once.
            await asyncio.sleep(delay * (1 + random.random()))
            delay = min(delay * 2, 10.0)
            try:
                await self._open()
            except ServerError as error:
                if error.code == "invalid-token":
                    # The server no longer knows us (its secret changed): start as a new player.
                    logger.warning("resume token refused; reconnecting as a new player")
                    self.resume = None
                continue
            except (TimeoutError, OSError, InvalidHandshake, ConnectionClosed):
                continue
            logger.info("reconnected to %s", self.url)
            try:
                await self._restore_rooms()
            except (ConnectionError, TimeoutError):
                continue  # dropped again; the reader has started another reconnection
            self._notify_connection(True)
            return

    def _go_home(self, room: str, home: str) -> None:
        """Move to ``room``'s home unless the client follows other rooms too (it would go back and
        forth), holds a place in a line (the old connection's), is moving, or is there already."""
        if self.home_address is None or self._homing is not None or self._closing or self._tickets:
            return
        url = self.home_address(self.url, home)
        if set(self.roles) == {room} and url != self.url:
            self._homing = asyncio.create_task(self._move(url))

    async def _move(self, url: str) -> None:
        """Connect to ``url`` once the requests in flight are answered (new ones wait), resume there,
        close the old connection, follow the rooms again. On a failure it stays (or reconnects)."""
        old, loop = self._socket, asyncio.get_running_loop()
        self.connected.clear()
        try:
            deadline = loop.time() + HELLO_TIMEOUT
            while (waiting := [f for f in self._pending.values() if not f.done()]) and loop.time() < deadline:
                await asyncio.wait(waiting, timeout=deadline - loop.time())
            try:
                await self._open(url)
            except (ServerError, TimeoutError, OSError, InvalidHandshake, ConnectionClosed) as error:
                logger.info("stayed on %s: the room's home could not be reached (%s)", self.url, error)
                if self._reconnecting is None:  # the connection in use is still up
                    self.connected.set()
                    for room in list(self._resyncing):  # gaps seen meanwhile (see _resync)
                        await self.send(functools.partial(_build_for_room, AskSnapshot, room))
                return
            self.url = url
            dropped, self._reconnecting = self._reconnecting, None
            if dropped is not None:
                dropped.cancel()  # the old connection dropped meanwhile: this one replaces it
            if old is not None:
                await old.close()
            for future in waiting:  # unanswered on the old connection
                if not future.done():
                    future.set_exception(ConnectionError("the connection closed before the reply"))
            with contextlib.suppress(ConnectionError, TimeoutError):  # dropped: the reader reconnects
                await self._restore_rooms()  # a spectator's rooms are not given back by the hello
            if dropped is not None:
                self._notify_connection(True)
        finally:
            self._homing = None

    async def _restore_rooms(self) -> None:
        """Follow again every room followed before the drop, or drop its copy."""
        for room, role in list(self.roles.items()):
            # The server restored our seats right after the welcome, before the reply to this
            # request: a racer room it did not restore answers not-in-room.
            kind: type[Spectate] | type[AskSnapshot] = Spectate if role == "spectator" else AskSnapshot
            try:
                await self.request(functools.partial(_build_for_room, kind, room))
            except ServerError as error:
                logger.info("no longer in room %s: %s", room, error)
                self.forget(room)

    async def _resync(self, room: str) -> None:
        """Ask once for a snapshot of ``room``; its updates are ignored until it arrives (asked
        by the move, while the client moves home: the reader must not wait for the move)."""
        if room not in self._resyncing:
            self._resyncing.add(room)
            if self._homing is None:
                await self.send(lambda i: AskSnapshot(id=i, room=room))

    async def _dispatch(self, message: ServerMessage) -> None:
        room = ""
        if isinstance(message, Snapshot):
            room = message.room
            self._resyncing.discard(room)
            self._forgotten.discard(room)
            mirror = self.rooms.get(room)
            if mirror is None:
                self.rooms[room] = RoomMirror(message)
            else:
                mirror.reset(message)
        elif isinstance(message, Update):
            room = message.room
            if room in self._resyncing or room in self._forgotten:
                return
            mirror = self.rooms.get(room)
            if mirror is None or message.version <= mirror.version:
                return  # its snapshot follows the joined; or seen already (on the connection before a move home)
            if not mirror.apply(message):
                # A gap: something was missed. The snapshot replaces the copy.
                await self._resync(room)
                return
        elif isinstance(message, Joined):
            self.roles[message.room] = message.role
            self._forgotten.discard(message.room)
            self._tickets.joined(message)
            if message.home is not None:
                self._go_home(message.room, message.home)
        elif isinstance(message, AccountInfo):
            # From now on this connection (and any reconnection) is the account.
            self.player, self.name, self.resume, self.account = message.player, message.name, message.resume, True
        elif isinstance(message, Goodbye):
            logger.info("server going away: %s", message.reason)
            self.goodbye = message.reason
        elif isinstance(message, Error) and message.id is None:
            logger.warning("server error without a request: %s %s", message.code, message.message)
        if room:
            self._changed.set()
            self._changed = asyncio.Event()
        request_id: Any = getattr(message, "id", None)
        future = self._pending.get(request_id) if isinstance(request_id, int) else None
        # A snapshot carries an id only when it answers AskSnapshot: then it is the reply.
        if future is not None and not future.done():
            future.set_result(message)
        for listener in self._listeners:
            try:
                listener(room, message)
            except Exception:
                # A failing listener must not stop the reader (and with it the connection).
                logger.exception("a listener failed on %s", type(message).__name__)


def _build_for_room(kind: type[Spectate] | type[AskSnapshot], room: str, request_id: int) -> ClientMessage:
    return kind(id=request_id, room=room)
