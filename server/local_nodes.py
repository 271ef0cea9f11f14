"""``python -m server --nodes N``: a local multi-node service for developers.

One embedded Redis (in ``--data-dir``) and N ordinary server processes on ports ``PORT`` to
``PORT + N - 1``, all sharing it, exactly as N replicas behind a load balancer would share a
Redis (see server/deploy/ for that). Any port serves any room. SIGINT or SIGTERM stops
the servers (each drains and gives its rooms up), then Redis.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import sys

from server.config import Config
from server.storage.embedded import EmbeddedRedis

logger = logging.getLogger("server")

#: Flags the launcher sets for each server itself (with their value).
_OWN_FLAGS = ("--nodes", "--port", "--redis-url", "--data-dir")


def child_argv(argv: list[str], port: int, redis_url: str) -> list[str]:
    """``argv`` for one server process: the launcher's flags, its own port and Redis."""
    kept: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg in _OWN_FLAGS:
            skip = True
            continue
        if arg.split("=", 1)[0] in _OWN_FLAGS:
            continue
        kept.append(arg)
    return [*kept, "--nodes", "1", "--port", str(port), "--redis-url", redis_url]


async def run_nodes(config: Config, argv: list[str]) -> None:
    """Run ``config.nodes`` servers on one embedded Redis until SIGINT or SIGTERM."""
    redis = EmbeddedRedis(config.data_dir)
    url = await redis.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(signum, stop.set)
    children = []
    try:
        for index in range(config.nodes):
            port = config.port + index
            children.append(
                await asyncio.create_subprocess_exec(sys.executable, "-m", "server", *child_argv(argv, port, url))
            )
            logger.info("node %d: ws://%s:%d (pid %d)", index + 1, config.host, port, children[-1].pid)
        exits = [asyncio.ensure_future(child.wait()) for child in children]
        stopping = asyncio.ensure_future(stop.wait())
        await asyncio.wait([stopping, *exits], return_when=asyncio.FIRST_COMPLETED)
        stopping.cancel()
    finally:
        for child in children:
            if child.returncode is None:
                child.terminate()
        for child in children:
            await child.wait()
        await redis.stop()
        logger.info("local service stopped")
