"""Server settings, from command-line flags and environment variables (flags win)."""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Config:
    host: str = "127.0.0.1"
    port: int = 8765
    #: Redis to use; None starts the embedded one, persisting to ``data_dir``.
    redis_url: str | None = None
    data_dir: Path = Path("data")
    log_level: str = "INFO"
    #: permessage-deflate: off by default (it costs CPU and memory for our small frames).
    compression: bool = False
    #: Seconds a disconnected racer keeps the seat.
    grace: float = 60.0
    #: Seconds a finished room's record and move logs stay in Redis.
    finished_ttl: int = 7 * 24 * 3600
    #: Largest frame answered with an error; larger ones close the connection (1009).
    max_frame: int = 16 * 1024
    rate: float = 50.0
    burst: float = 100.0
    #: Offences (bad frames, rate-limited requests) in ``offence_window`` seconds before 1008.
    offence_limit: int = 200
    offence_window: float = 10.0
    max_connections_per_player: int = 5
    max_rooms_per_player: int = 5
    max_connections: int = 20_000
    key_prefix: str = "sr:"
    #: Worker processes for the solver (daily deals, the pool of winnable race deals);
    #: 0 turns both off (no daily challenge; races use random deals).
    solver_workers: int = 1
    #: Seconds the solver may spend certifying one deal.
    solver_budget: float = 10.0
    #: Certified winnable deals kept ready per game.
    pool_size: int = 20
    #: ``text`` or ``json`` (one JSON object a line).
    log_format: str = "text"
    #: Seconds between turning not ready (SIGTERM) and shutting down.
    drain: float = 0.0
    #: Browser origins, besides the web page's own, allowed to open websockets (``*``: any).
    allowed_origins: tuple[str, ...] = ()
    #: Seconds a node's heartbeat and room leases live unrenewed: how long a dead node's
    #: rooms wait before another node takes them over.
    node_ttl: float = 5.0
    #: ``python -m server --nodes N``: run N server processes (ports ``port`` to
    #: ``port + N - 1``) on one embedded Redis, a local multi-node service.
    nodes: int = 1


def parse_args(argv: list[str] | None = None, environ: dict[str, str] | None = None) -> Config:
    """A :class:`Config` from ``argv`` and ``environ`` (``os.environ`` by default)."""
    env = os.environ if environ is None else environ
    default = Config()
    parser = argparse.ArgumentParser(prog="python -m server", description="The Solitaire Race server.")
    parser.add_argument("--host", default=env.get("HOST", default.host), help="address to listen on (HOST)")
    parser.add_argument("--port", type=int, default=int(env.get("PORT", default.port)), help="port (PORT)")
    parser.add_argument(
        "--redis-url",
        default=env.get("REDIS_URL") or None,
        help="Redis to use (REDIS_URL); without it the server runs its own, persisting to --data-dir",
    )
    parser.add_argument(
        "--data-dir",
        type=Path,
        default=Path(env.get("DATA_DIR", default.data_dir)),
        help="embedded Redis data (DATA_DIR)",
    )
    parser.add_argument(
        "--log-level", default=env.get("LOG_LEVEL", default.log_level), help="DEBUG, INFO, WARNING (LOG_LEVEL)"
    )
    parser.add_argument(
        "--compression",
        action=argparse.BooleanOptionalAction,
        default=env.get("COMPRESSION", "off").lower() in ("1", "on", "true", "yes"),
        help="permessage-deflate (COMPRESSION=on); off by default",
    )
    parser.add_argument(
        "--grace",
        type=float,
        default=float(env.get("GRACE", default.grace)),
        help="seconds a dropped racer keeps the seat (GRACE)",
    )
    parser.add_argument(
        "--finished-ttl",
        type=int,
        default=int(env.get("FINISHED_TTL", default.finished_ttl)),
        help="seconds finished rooms are kept (FINISHED_TTL)",
    )
    parser.add_argument(
        "--solver-workers",
        type=int,
        default=int(env.get("SOLVER_WORKERS", default.solver_workers)),
        help="solver processes for daily deals and winnable race deals; 0 turns both off (SOLVER_WORKERS)",
    )
    parser.add_argument(
        "--solver-budget",
        type=float,
        default=float(env.get("SOLVER_BUDGET", default.solver_budget)),
        help="seconds the solver may spend certifying one deal (SOLVER_BUDGET)",
    )
    parser.add_argument(
        "--pool-size",
        type=int,
        default=int(env.get("POOL_SIZE", default.pool_size)),
        help="certified winnable deals kept ready per game (POOL_SIZE)",
    )
    parser.add_argument(
        "--log-format",
        choices=("text", "json"),
        default=env.get("LOG_FORMAT", default.log_format),
        help="text lines, or one JSON object a line (LOG_FORMAT)",
    )
    parser.add_argument(
        "--drain",
        type=float,
        default=float(env.get("DRAIN", default.drain)),
        help="seconds to stay up, answering /readyz with 503, after SIGTERM (DRAIN)",
    )
    parser.add_argument(
        "--allowed-origins",
        default=env.get("ALLOWED_ORIGINS", ""),
        help="comma-separated browser origins allowed besides the page's own, or * (ALLOWED_ORIGINS)",
    )
    parser.add_argument(
        "--node-ttl",
        type=float,
        default=float(env.get("NODE_TTL", default.node_ttl)),
        help="seconds a node's heartbeat and room leases live unrenewed; a dead node's rooms move after it (NODE_TTL)",
    )
    parser.add_argument(
        "--nodes",
        type=int,
        default=int(env.get("NODES", default.nodes)),
        help="run this many server processes on ports PORT, PORT+1, ... sharing one embedded Redis (NODES)",
    )
    args = parser.parse_args(argv)
    return Config(
        host=args.host,
        port=args.port,
        redis_url=args.redis_url,
        data_dir=args.data_dir,
        log_level=args.log_level.upper(),
        compression=args.compression,
        grace=args.grace,
        finished_ttl=args.finished_ttl,
        solver_workers=args.solver_workers,
        solver_budget=args.solver_budget,
        pool_size=args.pool_size,
        log_format=args.log_format,
        drain=args.drain,
        allowed_origins=tuple(origin.strip() for origin in args.allowed_origins.split(",") if origin.strip()),
        node_ttl=args.node_ttl,
        nodes=args.nodes,
    )
