"""The server process: storage, live rooms, features, the websocket edge, a clean shutdown.

This is thin glue that builds the parts and starts and stops them in order; every decision
lives in the features, the rooms and the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import resource
import signal
import socket
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Final

from websockets.asyncio.server import Server, serve

from protocol.messages import Goodbye
from server.clock import now_ms
from server.cluster.cluster import Cluster
from server.cluster.leases import while_holding
from server.config import Config
from server.connections.compact import CompactConnection
from server.connections.keepalive import Keepalive
from server.features import arenas, brackets, challenges, moderation, quick_match
from server.features.context import Context
from server.live.clock import SYSTEM_CLOCK, RoomClock
from server.live.hint_search import HintSearch
from server.live.recording import RaceRecorder
from server.live.registry import Registry
from server.live.runner import RoomRunner
from server.net.edge import ACCEPT_BATCH, HARD_FRAME_LIMIT, RECEIVE_QUEUE, Edge
from server.net.forwarding import Router
from server.net.http import HANDSHAKE_INTERVAL, HANDSHAKE_LINE, HttpRoutes
from server.net.listener import OpeningLine, bind
from server.net.tls import tls_context
from server.ops.log_limits import LogLimiter
from server.ops.metrics import (
    ROOM_LEASES,
    ROOMS_FENCED,
    SPECTATOR_DELIVERIES,
    GcPauseMonitor,
    LoopLagMonitor,
    redis_latency_observer,
    watch_rooms,
)
from server.ops.readiness import Readiness, drain
from server.ops.stopping import stop_requested, stop_tasks
from server.rooms.draft import DealPicker
from server.rooms.room import random_deal
from server.rooms.timing import RoomTiming
from server.storage.accounts import AccountStore
from server.storage.arenas import ArenaStore
from server.storage.best_runs import BestRuns
from server.storage.boards import Leaderboards
from server.storage.brackets import BracketStore
from server.storage.challenges import ChallengeStore
from server.storage.connection import Storage, StoreUnavailable
from server.storage.deals import DealStore
from server.storage.embedded import EmbeddedRedis
from server.storage.match_line import MatchLineStore
from server.storage.migration import migrate
from server.storage.moderation import ModerationStore
from server.storage.players import PlayerStore
from server.storage.rooms import RoomStore, VersionConflict
from server.supply.certified import DailyDeals, WinnablePool
from server.supply.workers import solver_pool, stop_pool

logger = logging.getLogger("server")


#: The collector's thresholds. Nearly everything the server allocates is freed by reference
#: counting, and a young collection scans every young object still alive: at least as many
#: as its threshold, and under load mostly the requests in flight (their coroutines, futures
#: and frames), so collecting less often costs less CPU in all. The price is the pause: a
#: young collection's grows with its threshold, a middle one's with the young objects that
#: survived the young collections since the last, and they are longest while connections
#: open by the thousand (a restart, a mass reconnect; the listener paces the openings). A
#: middle collection runs every ten young ones, and a full one waits for 1,000 middle ones
#: (and CPython's own rule: the old generation grew by a quarter): it scans everything.
#: Figures for both sides: bench/README.md, "the collector's share".
GC_THRESHOLDS: Final = (20_000, 10, 1_000)

#: Seconds between looks for finished races left unrecorded (storage/unrecorded.py).
LEFT_OVER_INTERVAL: Final = 2.0
#: Seconds between the rounds that pair the players waiting in a line (quick match, arenas)
#: and move the brackets on: half a second is below what a waiting player notices, and each
#: round reads every line and tournament index from Redis.
QUICK_MATCH_INTERVAL: Final = 0.5
#: Seconds between the looks for challenges whose window closed (windows last hours: the news
#: can wait a second, and this spares Redis three reads of four).
CLOSED_WINDOWS_INTERVAL: Final = 1.0
#: Descriptors kept free for Redis, logs and the solver beside the connections.
_SPARE_DESCRIPTORS = 256


class RaceServer:
    """One running server: ``async with RaceServer(config) as server: ...``.

    ``deal_picker`` chooses each race's deal (random by default; tests fix it); ``clock`` is the
    time the live rooms run on (:mod:`server.live.clock`; the system's by default).
    """

    def __init__(self, config: Config, deal_picker: DealPicker = random_deal, clock: RoomClock = SYSTEM_CLOCK) -> None:
        self.config = config
        self.deal_picker = deal_picker
        self.clock = clock
        self.embedded: EmbeddedRedis | None = None
        self.storage: Storage | None = None
        self.ctx: Context | None = None
        self.cluster: Cluster | None = None
        self.router: Router | None = None
        self.listener: Server | None = None
        #: The websocket port's socket, bound first; the listener serves on it.
        self._socket: socket.socket | None = None
        self._line: OpeningLine | None = None
        self._tasks: list[asyncio.Task[None]] = []
        self._executor: ProcessPoolExecutor | None = None
        self._hint_pool: ProcessPoolExecutor | None = None
        self._daily: DailyDeals | None = None
        self._pool: WinnablePool | None = None
        self.max_connections = config.max_connections
        self._log = LogLimiter(logger)
        #: What ``/readyz`` reports: restore done, storage answering, not draining.
        self.readiness = Readiness()
        self._monitors = (LoopLagMonitor(), GcPauseMonitor())

    @property
    def port(self) -> int:
        """The port actually listened on (useful with port 0)."""
        assert self.listener is not None
        return int(self.listener.sockets[0].getsockname()[1])

    async def start(self) -> None:
        """Build the parts in order, each handed to those built after it: the websocket port
        (bound, not accepting yet), storage, the cluster (this node, known by that port),
        the live rooms, the features' context, the router to the other nodes, the edge, and
        last the listener that accepts on the port."""
        config = self.config
        self.max_connections = _connection_cap(config.max_connections)
        # The port first: other nodes are told where this one is, and a port in use fails
        # start-up before anything else starts.
        listening = self._socket = await bind(config.host, config.port)
        port = int(listening.getsockname()[1])
        url = config.redis_url
        if url is None:
            self.embedded = EmbeddedRedis(config.data_dir)
            url = await self.embedded.start()
            logger.info("embedded Redis running, data in %s", config.data_dir)
        self.storage = storage = await Storage.connect(url, prefix=config.key_prefix)
        storage.observe = redis_latency_observer()
        # Boards, statistics and ratings stored by an earlier version, in today's key layout.
        await migrate(storage)
        self.readiness.ping = storage.ping
        players = PlayerStore(storage)
        secret = await players.server_secret()
        if config.solver_workers > 0:
            # Solving is CPU-bound: it runs in worker processes, never on the event loop.
            self._executor = solver_pool(config.solver_workers)
            deals = DealStore(storage)
            self._daily = DailyDeals(deals, secret, config.solver_budget, self._executor)
            self._pool = WinnablePool(deals, config.solver_budget, config.pool_size, self._executor)
        boards = Leaderboards(storage)
        # This process is one node of the service (alone on its Redis: a cluster of one):
        # rooms it runs are leased, requests for rooms other nodes run are forwarded.
        cluster = self.cluster = await Cluster.start(
            storage,
            config,
            secret,
            f"{config.host}:{port}",
            # A process with its own Redis is the only node there, before and after a restart:
            # the same id lets it take its rooms back at once instead of after the lease TTL.
            node_id="embedded" if self.embedded is not None else config.node_id,
        )
        # Paused past its TTL, the node is not ready until it beats again (its rooms may be gone).
        self.readiness.current = cluster.node.current
        leases = cluster.leases
        ROOM_LEASES.set_function(lambda: len(leases))  # the last server started in a process wins
        recorder = RaceRecorder(storage, boards)
        registry = Registry(
            RoomStore(storage),
            recorder,
            RoomTiming.of_seconds(config.grace, config.countdown),
            config.finished_ttl,
            self.deal_picker,
            cluster,
            on_delivery=SPECTATOR_DELIVERIES.inc,
            on_fenced=self._rerouted,
            clock=self.clock,
        )
        self.ctx = ctx = Context(
            config,
            registry,
            players,
            boards,
            secret,
            AccountStore(storage),
            ModerationStore(storage),
            MatchLineStore(storage),
            BestRuns(storage),
            ChallengeStore(storage),
            ArenaStore(storage),
            BracketStore(storage),
            cluster,
            self._daily,
            self._pool,
            self._hint_search(config.hint_workers),
        )
        router = self.router = Router(ctx, cluster, timeout=config.node_ttl + 1.0)
        self._tasks = [asyncio.create_task(cluster.mail.listen())]
        restored = await registry.restore()
        self.readiness.mark_restored()
        watch_rooms(self._rooms_by_state)
        for monitor in self._monitors:
            monitor.start()
        edge = Edge(ctx, router, config, self.max_connections)
        routes = HttpRoutes(self.readiness, config.allowed_origins, allowed_hosts=config.allowed_hosts)
        tls = tls_context(config)
        self.listener = await serve(
            edge.serve,
            sock=listening,
            compression="deflate" if config.compression else None,
            max_size=HARD_FRAME_LIMIT,
            # Requests are served one at a time: a few frames waiting is plenty, and it bounds
            # what one connection can make the server hold (max_queue x max_size).
            max_queue=RECEIVE_QUEUE,
            # asyncio accepts up to `backlog` connections in one go, and sets each up before
            # anything else runs: a short batch keeps a burst from stalling live rooms (the
            # kernel holds the rest; SYN cookies keep them coming).
            backlog=ACCEPT_BATCH,
            process_request=routes,
            # One task pings every connection (server/connections/keepalive.py), not one each.
            ping_interval=None,
            create_connection=CompactConnection,
            ssl=tls,
        )
        # Openings wait in the kernel and then as bare sockets, not as half-open connections
        # (see server/net/listener.py); under uvloop, HttpRoutes paces the handshakes instead.
        self._line = OpeningLine.take_over(
            self.listener.server,
            HANDSHAKE_INTERVAL,
            HANDSHAKE_LINE,
            config.trusted_proxies,
            config.max_connections_per_address,
            tls,
        )
        routes.pace_handshakes = self._line is None
        node, node_store, ttl = cluster.node, cluster.node.store, config.node_ttl
        self._tasks += [
            asyncio.create_task(self._sweep()),
            asyncio.create_task(Keepalive(ctx.links).run()),
            asyncio.create_task(moderation.carry_out(ctx)),
            asyncio.create_task(node.keep_beating(self._load, registry.public, registry.daily_lines)),
            asyncio.create_task(leases.keep(self._lost)),
            asyncio.create_task(router.watch()),
            asyncio.create_task(self._adopt()),
            # One node of the service forms the quick-match races and fills the deal supplies.
            asyncio.create_task(while_holding(node_store, "matcher", node.id, ttl, self._match)),
            # Each tournament is scheduled by one node, whichever holds its lease.
            asyncio.create_task(self._schedule()),
            # One node records the races whose node died before recording them.
            asyncio.create_task(while_holding(node_store, "recorder", node.id, ttl, lambda: self._record(recorder))),
        ]
        if self._daily is not None and self._pool is not None:
            daily, pool = self._daily, self._pool
            self._tasks += [
                asyncio.create_task(while_holding(node_store, "daily", node.id, ttl, daily.run_ahead)),
                asyncio.create_task(while_holding(node_store, "pool", node.id, ttl, pool.run)),
            ]
        logger.info(
            "Solitaire Race server listening on ws://%s:%d (%d rooms restored)", config.host, self.port, restored
        )

    def _load(self) -> dict[str, int]:
        ctx = self.ctx
        return {"rooms": len(ctx.rooms.runners()), "connections": len(ctx.links)} if ctx is not None else {}

    def _rerouted(self, runner: RoomRunner) -> None:
        ROOMS_FENCED.inc()
        if self.router is not None:
            self.router.rerouted(runner)

    async def _lost(self, code: str) -> None:
        if self.ctx is not None:
            self.ctx.rooms.lost(code)

    async def _adopt(self) -> None:
        """Take over, every half TTL, the rooms in progress nobody runs (their node died)."""
        while True:
            await asyncio.sleep(self.config.node_ttl / 2)
            stop_requested()
            if self.ctx is not None:
                await self.ctx.rooms.sweep_orphans()

    def _rooms_by_state(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for runner in self.ctx.rooms.runners() if self.ctx is not None else ():
            state = runner.room.state.value
            counts[state] = counts.get(state, 0) + 1
        return counts

    async def _match(self) -> None:
        """Form quick-match races and tell the players of challenges whose window closed
        (one node of the service, holding the matcher lease)."""
        # A task group: losing the lease cancels both loops, and neither outlives the other.
        async with asyncio.TaskGroup() as loops:
            loops.create_task(self._every(QUICK_MATCH_INTERVAL, "quick match", quick_match.match))
            loops.create_task(
                self._every(CLOSED_WINDOWS_INTERVAL, "challenge windows", challenges.announce_closed_windows)
            )

    async def _schedule(self) -> None:
        """Pair the arenas' players and move the brackets on, for the tournaments this node
        schedules (every node runs this; one node a tournament). A round also renews this
        node's tournament leases, so rounds come at least four times a TTL."""
        interval = min(QUICK_MATCH_INTERVAL, self.config.node_ttl / 4)
        await self._every(interval, "tournaments", arenas.match, brackets.advance)

    async def _every(self, seconds: float, name: str, *jobs: Callable[[Context], Awaitable[object]]) -> None:
        """Run ``jobs`` in turn every ``seconds``, for ever. Redis down or failing over (or a
        room it set up stale) is one limited line, not a traceback each time."""
        while True:
            await asyncio.sleep(seconds)
            stop_requested()  # a cancellation swallowed inside a job still stops the loop
            if self.ctx is None:
                continue
            for job in jobs:  # each on its own: one failing stops no other
                try:
                    await job(self.ctx)
                except (StoreUnavailable, VersionConflict) as error:
                    self._log.log(logging.WARNING, f"{name}-store", "%s paused: %s", name, error)
                except Exception:
                    self._log.exception(name, "%s failed", name)

    async def _record(self, recorder: RaceRecorder) -> None:
        """Record the finished races left unrecorded, every :data:`LEFT_OVER_INTERVAL` s."""
        while True:
            await asyncio.sleep(LEFT_OVER_INTERVAL)
            try:
                await recorder.record_left_over(now_ms())
            except StoreUnavailable as error:
                self._log.log(logging.WARNING, "left-over-store", "races left unrecorded wait: %s", error)
            except Exception:
                self._log.exception("left-over", "recording the races left unrecorded failed")

    async def _sweep(self) -> None:
        while True:
            await asyncio.sleep(60)
            if self.ctx is not None:
                self.ctx.rooms.sweep(self.clock.now_ms())  # finished times are on the rooms' clock

    async def stop(self) -> None:
        """Close every connection with 1001 (going away), flush room writes, stop Redis."""
        self.readiness.start_draining()
        if self._line is not None:
            await self._line.stop()
        watch_rooms(None)
        loop_lag, gc_pauses = self._monitors
        await loop_lag.stop()
        gc_pauses.stop()
        await stop_tasks(self._tasks)
        # Stopped before the supplies close: their pending picks then fail at once.
        for pool in (self._executor, self._hint_pool):
            if pool is not None:
                stop_pool(pool)
        for supply in (self._daily, self._pool):
            if supply is not None:
                await supply.close()
        if self.listener is not None:
            if self.ctx is not None:
                for link in list(self.ctx.links):
                    link.send(Goodbye(reason="the server is shutting down; reconnect shortly with your resume token"))
            self.listener.close(close_connections=True)
            await self.listener.wait_closed()
        if self._socket is not None:
            self._socket.close()  # closed with the listener, unless start-up failed before it
        # Only now: this node's clients' requests went on being forwarded until they left.
        if self.router is not None:
            self.router.stop_forwarding()
        if self.ctx is not None:
            # A planned handoff: every lease is given up first, then the other nodes are told,
            # so that their clients follow each room on its next owner at once (claimed by
            # whoever needs it first), without waiting for a lease to expire.
            handed_over = self.ctx.rooms.runners()
            await self.ctx.rooms.drain()
            if self.router is not None:
                for runner in handed_over:
                    self.router.rerouted(runner)
        if self.router is not None:
            await self.router.close()
        if self.cluster is not None:
            await self.cluster.stop()
        if self.storage is not None:
            await self.storage.close()
        if self.embedded is not None:
            await self.embedded.stop()
        if self.listener is not None:
            logger.info("server stopped")

    def _hint_search(self, workers: int) -> HintSearch | None:
        """Hints' winning-line searches, in processes of their own: never queued behind a
        daily pick, whose solves take seconds."""
        if workers == 0:
            return None
        self._hint_pool = solver_pool(workers)
        return HintSearch(self._hint_pool)

    async def __aenter__(self) -> RaceServer:
        try:
            await self.start()
        except BaseException:
            await self.stop()
            raise
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


def _connection_cap(wanted: int) -> int:
    """Raise the descriptor limit as far as allowed, and keep the connection cap below it, so
    the cap answers 1013 before the kernel refuses ``accept``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = hard if hard != resource.RLIM_INFINITY else max(soft, wanted + _SPARE_DESCRIPTORS)
    if soft < target:
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
            soft = target
    cap = min(wanted, max(16, soft - _SPARE_DESCRIPTORS))
    if cap < wanted:
        logger.debug("descriptor limit %d: at most %d connections (not %d)", soft, cap, wanted)
    return cap


class _OncePerInterval(logging.Filter):
    """Lets a repeated record through at most once per ``interval`` seconds (asyncio logs
    every failed ``accept`` when descriptors run out)."""

    def __init__(self, interval: float = 10.0) -> None:
        super().__init__()
        self._interval = interval
        self._last: dict[str, float] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = str(record.msg)[:60]
        now = time.monotonic()
        if now - self._last.get(key, -self._interval) < self._interval:
            return False
        self._last[key] = now
        return True


async def run(config: Config) -> None:
    """Serve until SIGINT or SIGTERM, then shut down cleanly."""
    logging.getLogger("asyncio").addFilter(_OncePerInterval())
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
        # collection (see GC_THRESHOLDS for the rest).
        gc.freeze()
        gc.set_threshold(*GC_THRESHOLDS)
        received = await stop
        logger.info("received %s: shutting down", signal.Signals(received).name)
        if received == signal.SIGTERM:
            await drain(server.readiness, config.drain)
    await stop_leftovers()


async def stop_leftovers() -> None:
    """Stop every task of the loop but this one, for certain: asyncio's runner cancels what is
    left once at exit, and a task that swallowed that one cancellation (server/ops/stopping.py)
    would keep the process from exiting."""
    await stop_tasks(task for task in asyncio.all_tasks() if task is not asyncio.current_task())
