"""``python -m server``: run the race server (see ``--help``)."""

from __future__ import annotations

import asyncio
import logging

from server.app import run
from server.config import parse_args


def main(argv: list[str] | None = None) -> None:
    config = parse_args(argv)
    logging.basicConfig(level=config.log_level, format="%(asctime)s %(levelname)-7s %(name)s: %(message)s")
    logging.getLogger("websockets").setLevel(logging.WARNING)
    asyncio.run(run(config))


if __name__ == "__main__":
    main()
