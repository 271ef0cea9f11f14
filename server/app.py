"""The server process: storage, the hub, the websocket listener, and a clean shutdown.

This is thin glue: every decision lives in the hub, the rooms and the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
import time
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context

from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from protocol.codec import MalformedFrame, decode_client, request_id_of
from protocol.messages import Goodbye
from server.config import Config
from server.deal_supply import DailyDeals, WinnablePool
from server.http_routes import HttpRoutes
from server.hub import Hub
from server.limits import Offences, TokenBucket
from server.metrics import (
    CLOSES,
    CONNECTIONS,
    CONNECTIONS_OPENED,
    RATE_LIMITED,
    GcPauseMonitor,
    LoopLagMonitor,
    watch_rooms,
)
from server.readiness import Readiness, drain
from server.redis_process import EmbeddedRedis
from server.request_metrics import MeteredLink, refused, served
from server.room_channel import now_ms
from server.rooms.room import DealPicker, random_deal
from server.store import Store

logger = logging.getLogger("server")

#: Frames above this close the connection (1009) before we read them; between
#: ``Config.max_frame`` and this they get a ``frame-too-large`` error.
HARD_FRAME_LIMIT = 256 * 1024


class RaceServer:
    """One running server: ``async with RaceServer(config) as server: ...``.

    ``deal_picker`` chooses each race's deal (random by default; tests fix it).
    """

    def __init__(self, config: Config, deal_picker: DealPicker = random_deal) -> None:
        self.config = config
        self.deal_picker = deal_picker
        self.embedded: EmbeddedRedis | None = None
        self.store: Store | None = None
        self.hub: Hub | None = None
        self.listener: Server | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._executor: ProcessPoolExecutor | None = None
        self._daily: DailyDeals | None = None
        self._pool: WinnablePool | None = None
        #: What ``/readyz`` reports: restore done, storage answering, not draining.
        self.readiness = Readiness()
        self._monitors = (LoopLagMonitor(), GcPauseMonitor())

    @property
    def port(self) -> int:
        """The port actually listened on (useful with port 0)."""
        assert self.listener is not None
        return int(self.listener.sockets[0].getsockname()[1])

    async def start(self) -> None:
        config = self.config
        url = config.redis_url
        if url is None:
            self.embedded = EmbeddedRedis(config.data_dir)
            url = await self.embedded.start()
            logger.info("embedded Redis running, data in %s", config.data_dir)
        self.store = await Store.connect(url, prefix=config.key_prefix)
        self.readiness.ping = self.store.ping
        secret = await self.store.server_secret()
        if config.solver_workers > 0:
            # Solving is CPU-bound: it runs in worker processes, never on the event loop.
            self._executor = ProcessPoolExecutor(config.solver_workers, mp_context=get_context("spawn"))
            self._daily = DailyDeals(self.store, secret, config.solver_budget, self._executor)
            self._pool = WinnablePool(self.store, config.solver_budget, config.pool_size, self._executor)
        self.hub = Hub(config, self.store, secret, self.deal_picker, self._daily, self._pool)
        restored = await self.hub.restore()
        self.readiness.restored = True
        watch_rooms(self._rooms_by_state)
        for monitor in self._monitors:
            monitor.start()
        self.listener = await serve(
            self._connection,
            config.host,
            config.port,
            compression="deflate" if config.compression else None,
            max_size=HARD_FRAME_LIMIT,
            process_request=HttpRoutes(self.readiness, config.allowed_origins),
        )
        self._tasks = [asyncio.create_task(self._sweep()), asyncio.create_task(self._match())]
        if self._daily is not None and self._pool is not None:
            self._tasks += [asyncio.create_task(self._daily.run_ahead()), asyncio.create_task(self._pool.run())]
        logger.info(
            "Solitaire Race server listening on ws://%s:%d (%d rooms restored)", config.host, self.port, restored
        )

    def _rooms_by_state(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for channel in self.hub.rooms.values() if self.hub is not None else ():
            state = channel.room.state.value
            counts[state] = counts.get(state, 0) + 1
        return counts

    async def _match(self) -> None:
        """Form quick-match races every quarter of a second."""
        while True:
            await asyncio.sleep(0.25)
            if self.hub is not None:
                try:
                    await self.hub.match(time.monotonic())
                except Exception:
                    logger.exception("quick match failed")

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(60)
            if self.hub is not None:
                self.hub.sweep(now_ms())

    async def stop(self) -> None:
        """Close every connection with 1001 (going away), flush room writes, stop Redis."""
        self.readiness.start_draining()
        watch_rooms(None)
        loop_lag, gc_pauses = self._monitors
        await loop_lag.stop()
        gc_pauses.stop()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        if self._executor is not None:
            # A worker finishes the solve it is running before it exits, and the process
            # waits for it at exit: a daily pick tries deal after deal, for up to the budget
            # each. Nothing it would return is wanted any more (stores happen here), so stop
            # it first: the supplies' pending picks then fail at once instead of finishing.
            workers = list((self._executor._processes or {}).values())
            self._executor.shutdown(wait=False, cancel_futures=True)
            for worker in workers:
                worker.terminate()
        for supply in (self._daily, self._pool):
            if supply is not None:
                await supply.close()
        if self.listener is not None:
            if self.hub is not None:
                for link in list(self.hub.links):
                    link.send(Goodbye(reason="the server is shutting down; reconnect shortly with your resume token"))
            self.listener.close(close_connections=True)
            await self.listener.wait_closed()
        if self.hub is not None:
            await self.hub.drain()
        if self.store is not None:
            await self.store.close()
        if self.embedded is not None:
            await self.embedded.stop()
        logger.info("server stopped")

    async def __aenter__(self) -> RaceServer:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    async def _connection(self, socket: ServerConnection) -> None:
        hub = self.hub
        assert hub is not None
        config = self.config
        if len(hub.links) >= config.max_connections:
            CLOSES.labels("full").inc()
            await socket.close(1013, "the server is full; try again later")
            return
        link = MeteredLink(
            socket, TokenBucket(config.rate, config.burst), Offences(config.offence_limit, config.offence_window)
        )
        hub.links.add(link)
        CONNECTIONS.inc()
        CONNECTIONS_OPENED.inc()
        try:
            async for frame in socket:
                if not await self._frame(link, frame):
                    # Read on, unanswered, while closing: the abuser's frames still in flight
                    # would fill the receive queue, pause reading, and hold the closing
                    # handshake (and the link) until the close timeout.
                    CLOSES.labels("abuse").inc()
                    closing = asyncio.create_task(socket.close(1008, "too many bad or excessive requests"))
                    with contextlib.suppress(ConnectionClosed):
                        async for _ in socket:
                            pass
                    await closing
                    break
        except ConnectionClosed:
            pass
        finally:
            CONNECTIONS.dec()
            await hub.disconnected(link)

    async def _frame(self, link: MeteredLink, frame: str | bytes) -> bool:
        """Answer one frame; False when the connection has crossed the abuse threshold."""
        hub = self.hub
        assert hub is not None
        started = time.perf_counter()
        now = time.monotonic()
        if isinstance(frame, str):
            refused("bad-frame")
            link.error("bad-frame", "send binary MessagePack frames, not text", None)
            return not link.offences.record(now)
        if len(frame) > self.config.max_frame:
            refused("frame-too-large")
            link.error("frame-too-large", f"frames are limited to {self.config.max_frame} bytes", None)
            return not link.offences.record(now)
        if not link.bucket.take(now):
            RATE_LIMITED.inc()
            refused("rate-limited")
            text = f"slow down: at most {self.config.rate:g} requests a second"
            link.error("rate-limited", text, request_id_of(frame))
            return not link.offences.record(now)
        try:
            message = decode_client(frame)
        except MalformedFrame as error:
            refused(error.code)
            link.error(error.code, str(error), error.request_id)
            return not link.offences.record(now)
        link.begin(message.id)
        try:
            await hub.handle(link, message)
        except Exception:
            logger.exception("error while handling %s from %s", type(message).__name__, link.player)
            link.error("internal-error", "the server failed on that request; it has been logged", message.id)
        served(link, message, started)
        return True


async def run(config: Config) -> None:
    """Serve until SIGINT or SIGTERM, then shut down cleanly."""
    loop = asyncio.get_running_loop()
    stop: asyncio.Future[int] = loop.create_future()

    def on_signal(signum: int) -> None:
        if not stop.done():
            stop.set_result(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, on_signal, signum)
    async with RaceServer(config) as server:
        # What start-up allocated lives as long as the server: keep it out of every future
        # collection, and collect less often (full collections paused the loop for 100+ ms
        # under load; see bench/load.py).
        gc.freeze()
        gc.set_threshold(50_000, 50, 100)
        received = await stop
        logger.info("received %s: shutting down", signal.Signals(received).name)
        if received == signal.SIGTERM:
            await drain(server.readiness, config.drain)
