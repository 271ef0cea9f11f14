"""The websocket edge: each connection's frames, checked and rate-limited, to the dispatcher.

This glue only moves bytes one way: a frame is checked (type, size, rate), decoded, and
served where its room runs: on the room's owner when another node runs it (the client's
bytes, by the :class:`~server.net.forwarding.Router`), else here by
:func:`~server.net.dispatch.dispatch`; what comes back goes out through the connection's
:class:`~server.connections.link.ClientLink`. Nothing here knows a rule of the game.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from typing import Final

from websockets.asyncio.server import ServerConnection
from websockets.exceptions import ConnectionClosed

from protocol.codec import MalformedFrame, decode_client, request_id_of
from protocol.errors import CloseCode, ErrorCode
from protocol.messages import AskRaceLog, AskReplay, ClientMessage, Hello, JoinArena, QuickMatch, RaceGhost
from server.config import Config
from server.connections.compact import CompactConnection
from server.connections.limits import Offences, TokenBucket
from server.connections.link import ClientLink
from server.connections.origin import direct
from server.features import identity, quick_match
from server.features.context import Context
from server.net.dispatch import FAILURES, answer_failure, dispatch
from server.net.forwarding import Router
from server.net.request_metrics import refused, served
from server.ops.log_limits import LogLimiter
from server.ops.metrics import CLOSES, CONNECTIONS, CONNECTIONS_OPENED, RATE_LIMITED

logger = logging.getLogger("server.edge")

#: Frames above this close the connection (1009) before we read them; between
#: ``Config.max_frame`` and this they get a ``frame-too-large`` error.
HARD_FRAME_LIMIT: Final = 256 * 1024
#: Frames a connection's reader holds before it stops reading from the socket (websockets'
#: ``max_queue``): requests are served one at a time, so a few are plenty.
RECEIVE_QUEUE: Final = 4
#: What a request costs in rate-limit tokens before its answer is charged (replays more).
_COSTS: Final[dict[type, float]] = {AskReplay: 2.0, AskRaceLog: 2.0, RaceGhost: 2.0}
#: New connections whose first request (their hello) is served at once. A burst of thousands
#: of connections would otherwise put thousands of hellos ahead of every live room's moves in
#: the event loop's queue; the rest wait their turn, costing a parked future each.
OPENING_AT_ONCE: Final = 8
#: Connections the listener accepts in one wake-up (the listen backlog passed to asyncio): each
#: is set up before anything else runs, and a batch of 32 stalled live rooms for 8-30 ms.
ACCEPT_BATCH: Final = 8


class Edge:
    """Serves every websocket connection of the process against ``ctx``, and through
    ``router`` on the other nodes."""

    def __init__(self, ctx: Context, router: Router, config: Config, max_connections: int) -> None:
        self.ctx = ctx
        self.router = router
        self.config = config
        self.max_connections = max_connections
        self._log = LogLimiter(logger)
        self._opening = asyncio.Semaphore(OPENING_AT_ONCE)

    async def serve(self, socket: ServerConnection) -> None:
        """The handler for one connection, from open to close."""
        ctx, config = self.ctx, self.config
        if len(ctx.links) >= self.max_connections:
            CLOSES.labels("full").inc()
            await socket.close(CloseCode.TRY_AGAIN_LATER, "the server is full; try again later")
            return
        link = ClientLink(
            socket,
            TokenBucket(config.rate, config.burst),
            Offences(config.offence_limit, config.offence_window),
            write_cap=config.write_buffer_cap,
        )
        link.forget_handshake()
        origin = socket.origin if isinstance(socket, CompactConnection) else None
        if origin is None:
            transport = socket.transport
            tls = transport.get_extra_info("sslcontext") is not None
            origin = direct(transport.get_extra_info("peername"), tls, bool(config.trusted_proxies))
        link.address, link.secure = origin.address, origin.secure
        ctx.links.add(link)
        CONNECTIONS.inc()
        CONNECTIONS_OPENED.inc()
        opened = False
        hello_by = time.monotonic() + config.hello_timeout
        try:
            while True:
                # recv() rather than `async for`: the iterator is an async generator, a
                # quarter of a KB more that every idle connection would hold.
                if link.player is None:
                    frame = await self._before_hello(socket, hello_by)
                    if frame is None:
                        break
                else:
                    frame = await socket.recv()
                if link.dropped:
                    break
                if opened:
                    answered = await self._frame(link, frame)
                else:
                    opened = True
                    async with self._opening:
                        answered = await self._frame(link, frame)
                if not answered:
                    # Read on, unanswered, while closing: the abuser's frames still in flight
                    # would fill the receive queue, pause reading, and hold the closing
                    # handshake (and the link) until the close timeout.
                    CLOSES.labels("abuse").inc()
                    closing = asyncio.create_task(
                        socket.close(CloseCode.POLICY_VIOLATION, "too many bad or excessive requests")
                    )
                    with contextlib.suppress(ConnectionClosed):
                        async for _ in socket:
                            pass
                    await closing
                    break
        except ConnectionClosed:
            pass
        finally:
            CONNECTIONS.dec()
            self.router.dropped(link)
            quick_match.dropped(ctx, link)
            await identity.disconnected(ctx, link)

    async def _before_hello(self, socket: ServerConnection, deadline: float) -> str | bytes | None:
        """The next frame of a connection that has no player yet; None (and it is closed)
        when ``deadline`` (monotonic) passes first: a connection that says nothing holds a
        place of its address's and of the server's."""
        try:
            async with asyncio.timeout(deadline - time.monotonic()):
                return await socket.recv()
        except TimeoutError:
            CLOSES.labels("hello").inc()
            await socket.close(CloseCode.POLICY_VIOLATION, "no hello in time")
            return None

    async def _frame(self, link: ClientLink, frame: str | bytes) -> bool:
        """Answer one frame; False when the connection has crossed the abuse threshold."""
        now = time.monotonic()
        if isinstance(frame, str):
            link.error(ErrorCode.BAD_FRAME, "send binary MessagePack frames, not text", None)
            refused(ErrorCode.BAD_FRAME)
            return not link.offences.record(now)
        if len(frame) > self.config.max_frame:
            link.error(ErrorCode.FRAME_TOO_LARGE, f"frames are limited to {self.config.max_frame} bytes", None)
            refused(ErrorCode.FRAME_TOO_LARGE)
            return not link.offences.record(now)
        if not link.bucket.take(now):
            text = f"slow down: at most {self.config.rate:g} requests a second"
            link.error(ErrorCode.RATE_LIMITED, text, request_id_of(frame))
            RATE_LIMITED.inc()
            refused(ErrorCode.RATE_LIMITED)
            return not link.offences.record(now)
        try:
            message = decode_client(frame)
        except MalformedFrame as error:
            self._log.log(logging.DEBUG, error.code, "bad frame from %s: %s", link.player, error)
            link.error(error.code, str(error), error.request_id)
            refused(error.code)
            return not link.offences.record(now)
        link.bucket.charge(_COSTS.get(type(message), 1.0) - 1.0)
        started = time.perf_counter()
        link.begin(message.id)
        await self._handle(link, message, frame)
        served(link, message, started)
        return True

    async def _handle(self, link: ClientLink, message: ClientMessage, frame: bytes) -> None:
        """Serve ``message`` on its room's owner when another node runs the room, else here;
        a player back (a hello that resumes, a login) is also given their seats on the other
        nodes."""
        router, player = self.router, link.player
        try:
            if player is not None and not router.served_here(link, message):
                await router.serve(link, message, frame)
                return
            if isinstance(message, (QuickMatch, JoinArena)):
                router.remember(link)  # its race may form on another node, which answers it here
            await dispatch(self.ctx, link, message)
            # A new guest (a hello without a resume token) has no seat anywhere yet.
            if link.player not in (None, player) and not (isinstance(message, Hello) and message.resume is None):
                await router.seats_back(link, message.id)
        except FAILURES as error:  # of giving the seats back (serving answers its own)
            answer_failure(link, message.id, error)
        except Exception:
            # A bug: logged with its traceback, but rate-limited, so no client can make the
            # server fill its disk.
            kind = type(message).__name__
            self._log.exception(kind, "error while handling %s from %s", kind, link.player)
            text = "the server failed on that request; it has been logged"
            link.error(ErrorCode.INTERNAL_ERROR, text, message.id)
