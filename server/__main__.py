"""``python -m server``: run the race server (see ``--help``)."""

from __future__ import annotations

import asyncio
import sys

from server.app import run
from server.config import parse_args
from server.ops.local_nodes import run_nodes
from server.ops.logging_setup import setup_logging


def main(argv: list[str] | None = None) -> None:
    config = parse_args(argv)
    setup_logging(config.log_level, config.log_format)
    if config.nodes > 1 and config.redis_url is None:
        asyncio.run(run_nodes(config, sys.argv[1:] if argv is None else argv))
    else:
        asyncio.run(run(config))


if __name__ == "__main__":
    main()
