"""``python -m server``: run the race server (see ``--help``); ``python -m server admin ...``
moderates it (see ``python -m server admin --help``).

Start-up mistakes end in one line on stderr that says what to do: exit code 2 for a bad
setting, 1 for a resource that cannot be had (port in use, data folder in use, Redis out of
reach or not installed). The traceback is shown only with ``--log-level DEBUG``.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
import sys
from collections.abc import Callable

from server.admin import main as admin
from server.app import run
from server.config import SettingError, parse_args
from server.local_nodes import run_nodes
from server.ops.logging_setup import setup_logging
from server.storage.connection import StoreUnavailable
from server.storage.embedded import EmbeddedRedisError

logger = logging.getLogger("server")


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["admin"]:
        raise SystemExit(admin(args[1:]))  # straight to Redis: none of the server's start-up
    try:
        config = parse_args(argv)
    except SettingError as error:
        print(f"solitaire-race-server: {error} (see --help)", file=sys.stderr)
        raise SystemExit(2) from None
    setup_logging(config.log_level, config.log_format)
    loop_factory = _loop_factory(config.event_loop)
    try:
        with asyncio.Runner(loop_factory=loop_factory) as runner:
            if config.nodes > 1 and config.redis_url is None:
                runner.run(run_nodes(config, sys.argv[1:] if argv is None else argv))
            else:
                runner.run(run(config))
    except KeyboardInterrupt:
        pass
    except (OSError, EmbeddedRedisError, StoreUnavailable) as error:
        if config.log_level == "DEBUG":
            logger.exception("start-up failed")
        print(f"solitaire-race-server: cannot start: {_advice(error)}", file=sys.stderr)
        raise SystemExit(1) from None


def _loop_factory(name: str) -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The event loop ``--event-loop`` names (None: asyncio's own); uvloop is an optional
    extra, so its absence is a start-up mistake like a bad setting."""
    if name != "uvloop":
        return None
    try:
        uvloop = importlib.import_module("uvloop")
    except ImportError:
        print(
            "solitaire-race-server: --event-loop uvloop (EVENT_LOOP) needs uvloop: "
            "pip install 'solitaire-race[uvloop]' (see --help)",
            file=sys.stderr,
        )
        raise SystemExit(2) from None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def _advice(error: Exception) -> str:
    if isinstance(error, OSError) and error.errno == 98:
        return f"{error.strerror}: another program listens on that port; pick another with --port"
    if isinstance(error, StoreUnavailable):
        return f"{error}; check --redis-url (REDIS_URL), or leave it out to run the embedded Redis"
    return str(error).splitlines()[0] if str(error) else type(error).__name__


if __name__ == "__main__":
    main()
