"""``python -m server``: run the race server (see ``--help``); ``python -m server admin ...``
moderates it (see ``python -m server admin --help``)."""

from __future__ import annotations

import asyncio
import sys

from server.app import run
from server.config import parse_args
from server.ops.logging_setup import setup_logging


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["admin"]:
        from server.admin import main as admin  # the admin tool needs none of the server's start-up

        raise SystemExit(admin(args[1:]))
    config = parse_args(argv)
    setup_logging(config.log_level, config.log_format)
    asyncio.run(run(config))


if __name__ == "__main__":
    main()
