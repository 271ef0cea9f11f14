"""The server's Prometheus metrics, and the monitors that feed the process-level ones.

Every metric lives in :data:`REGISTRY` (not prometheus-client's global one), which
``/metrics`` renders; each server process reports its own figures. Metric names start
with ``solitaire_``. Who feeds what:

- the connection and frame level (``server/app.py``): connections, requests by type and
  outcome, move→ack latency, rate-limit and abuse closes;
- :class:`LoopLagMonitor` and :class:`GcPauseMonitor` (started by the app): event-loop
  lag and garbage-collection pauses;
- :func:`watch_rooms`: rooms by state, read from a callback when scraped;
- the multi-node parts (``server/cluster/leases.py``, ``server/cluster/node.py``,
  ``server/net/forwarding.py``, ``server/app.py``): room leases held, requests forwarded to
  other nodes and served for them, their round trip, rooms fenced, leases lost, rooms taken
  over from dead nodes, live nodes seen;
- :class:`server.ops.readiness.Readiness`: whether ``/readyz`` answers 200 (:data:`READY`);
- the room, storage and deal-supply code (to be called there): spectator deliveries
  (:data:`SPECTATOR_DELIVERIES`), Redis command latency (:data:`REDIS_COMMAND_SECONDS`),
  solver queue and pool depth (:data:`SOLVER_QUEUE`, :data:`POOL_DEPTH`).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import time
from collections.abc import Callable, Iterator, Mapping

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from server.ops.hot_metrics import HistogramCell, HotCounter, HotHistogram

REGISTRY = CollectorRegistry(auto_describe=True)
ProcessCollector(registry=REGISTRY)

#: Latency buckets in seconds, from 0.1 ms to 2.5 s (the move→ack target is 10 ms at p99).
_FAST_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)

CONNECTIONS = Gauge("solitaire_connections", "Open websocket connections.", registry=REGISTRY)
CONNECTIONS_OPENED = Counter(
    "solitaire_connections_opened", "Websocket connections accepted since the start.", registry=REGISTRY
)
# Counted for every request (server/ops/hot_metrics.py says why these are not prometheus-client's).
REQUESTS = HotCounter(
    "solitaire_requests",
    "Requests served, by type (the request's wire type, or the frame problem) and outcome (ok, or the error code).",
    ["type", "outcome"],
    registry=REGISTRY,
)
MOVE_ACK_SECONDS = HotHistogram(
    "solitaire_move_ack_seconds",
    "Time from reading a move frame to queueing its ack (the move is stored by then).",
    buckets=_FAST_BUCKETS,
    registry=REGISTRY,
)
CLOSES = Counter(
    "solitaire_closes",
    "Connections closed by the server for a reason: abuse (1008), full (1013), slow (4008), keepalive (1011), "
    "hello (1008: no hello in time), origin (403 at the handshake), busy (503: the opening line is full), "
    "address (429: the address holds as many connections as it may).",
    ["reason"],
    registry=REGISTRY,
)
RATE_LIMITED = Counter("solitaire_rate_limited", "Frames dropped as rate-limited.", registry=REGISTRY)
LOOP_LAG_SECONDS = Histogram(
    "solitaire_event_loop_lag_seconds",
    "How late the event loop ran a timer: sampled twice a second.",
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5),
    registry=REGISTRY,
)
GC_PAUSE_SECONDS = Histogram(
    "solitaire_gc_pause_seconds",
    "Garbage-collection pauses, by generation.",
    ["generation"],
    buckets=(0.0001, 0.0005, 0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0),
    registry=REGISTRY,
)
SPECTATOR_DELIVERIES = Counter(
    "solitaire_spectator_deliveries", "Frames delivered to spectators (one per spectator and frame).", registry=REGISTRY
)
REDIS_COMMAND_SECONDS = HotHistogram(
    "solitaire_redis_command_seconds",
    "Redis round trips (a command or a pipeline), by what they did.",
    buckets=_FAST_BUCKETS,
    registry=REGISTRY,
    labels=["command"],
)
SOLVER_QUEUE = Gauge(
    "solitaire_solver_queue", "Solver jobs submitted to the worker processes and not yet done.", registry=REGISTRY
)
POOL_DEPTH = Gauge(
    "solitaire_winnable_pool_depth", "Certified winnable deals ready, by game.", ["game"], registry=REGISTRY
)

# The multi-node parts: every process is one node of the service (a lone process too).
ROOM_LEASES = Gauge("solitaire_room_leases", "Rooms this node owns: the room owner leases it holds.", registry=REGISTRY)
FORWARDED_SENT = Counter(
    "solitaire_forwarded_requests_sent",
    "Requests of this node's clients sent to the node owning their room, by outcome (ok: served there;"
    " moved: the room was not there any more; timeout: no answer).",
    ["outcome"],
    registry=REGISTRY,
)
FORWARDED_RECEIVED = Counter(
    "solitaire_forwarded_requests_received",
    "Requests other nodes forwarded here (their clients' requests for rooms this node owns, seats given back).",
    registry=REGISTRY,
)
NODE_BATCHES_SENT = Counter(
    "solitaire_node_batches_sent",
    "Batches of messages sent to other nodes (requests, answers, room events), by road: direct (a link"
    " between the two nodes) or redis (the other node's inbox, for a node that cannot be reached directly).",
    ["road"],
    registry=REGISTRY,
)
FORWARD_SECONDS = Histogram(
    "solitaire_forwarded_request_seconds",
    "Round trip of a forwarded request, from sending it to the owner's answer that it is done.",
    buckets=_FAST_BUCKETS,
    registry=REGISTRY,
)
ROOMS_FENCED = Counter(
    "solitaire_rooms_fenced",
    "Rooms this node stopped running because another node holds their lease now (a write refused by the"
    " fencing check, or the lease found lost).",
    registry=REGISTRY,
)
LEASES_LOST = Counter(
    "solitaire_room_leases_lost",
    "Room leases this node found taken by another node when renewing or confirming them.",
    registry=REGISTRY,
)
ROOMS_TAKEN_OVER = Counter(
    "solitaire_rooms_taken_over",
    "Rooms this node took over from an earlier owner, with a new fencing token: by how (dead: its owner"
    " stopped beating and still held the lease; expired: its lease had expired or was given up, after a"
    " death, a pause past the lease, a drain or a restart).",
    ["how"],
    registry=REGISTRY,
)
NODES_ALIVE = Gauge(
    "solitaire_nodes_alive",
    "Nodes of the service with a heartbeat, this one included (checked once per node TTL).",
    registry=REGISTRY,
)
READY = Gauge(
    "solitaire_ready",
    "1 when this process answers /readyz with 200 (rooms restored, storage answering at the last check,"
    " not draining), else 0.",
    registry=REGISTRY,
)


class _RoomsCollector(Collector):
    """``solitaire_rooms{state}``, counted when scraped from the callback given to :func:`watch_rooms`."""

    def __init__(self) -> None:
        self.source: Callable[[], Mapping[str, int]] | None = None

    def collect(self) -> Iterator[Metric]:
        family = GaugeMetricFamily("solitaire_rooms", "Rooms held in memory, by state.", labels=["state"])
        counts = dict.fromkeys(("waiting", "countdown", "racing", "finished"), 0)
        if self.source is not None:
            counts.update(self.source())
        for state, count in sorted(counts.items()):
            family.add_metric([state], count)
        yield family


_rooms = _RoomsCollector()
REGISTRY.register(_rooms)


def watch_rooms(source: Callable[[], Mapping[str, int]] | None) -> None:
    """Count rooms by state from ``source()`` at each scrape (None: stop; the last server set wins)."""
    _rooms.source = source


class LoopLagMonitor:
    """Samples event-loop lag: how much later than asked a short sleep wakes up."""

    def __init__(self, interval: float = 0.5) -> None:
        self.interval = interval
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._task = asyncio.create_task(self._run())

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            asked = loop.time()
            await asyncio.sleep(self.interval)
            LOOP_LAG_SECONDS.observe(max(0.0, loop.time() - asked - self.interval))

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None


def redis_latency_observer() -> Callable[[str, float], None]:
    """What the storage calls after each Redis round trip: it feeds
    :data:`REDIS_COMMAND_SECONDS`, keeping each operation's histogram (this runs for every
    round trip)."""
    children: dict[str, HistogramCell] = {}

    def observe(operation: str, seconds: float) -> None:
        child = children.get(operation)
        if child is None:
            child = children[operation] = REDIS_COMMAND_SECONDS.child(operation)
        child.observe(seconds)

    return observe


class GcPauseMonitor:
    """Times every garbage collection through :data:`gc.callbacks`."""

    def __init__(self) -> None:
        self._started = 0.0

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            GC_PAUSE_SECONDS.labels(str(info.get("generation", "?"))).observe(time.perf_counter() - self._started)

    def start(self) -> None:
        if self._callback not in gc.callbacks:
            gc.callbacks.append(self._callback)

    def stop(self) -> None:
        with contextlib.suppress(ValueError):
            gc.callbacks.remove(self._callback)
