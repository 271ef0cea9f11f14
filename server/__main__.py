"""``python -m server``: run the race server (see ``--help``)."""

from __future__ import annotations

import asyncio

from server.app import run
from server.config import parse_args
from server.ops.logging_setup import setup_logging


def main(argv: list[str] | None = None) -> None:
    config = parse_args(argv)
    setup_logging(config.log_level, config.log_format)
    asyncio.run(run(config))


if __name__ == "__main__":
    main()
