"""Logging set-up: today's text lines, or one JSON object a line (``--log-format json``)."""

from __future__ import annotations

import logging

from pythonjsonlogger.json import JsonFormatter

from server.ops.log_limits import LimitedRecords, LogLimiter

TEXT_FORMAT = "%(asctime)s %(levelname)-7s %(name)s: %(message)s"

#: The fields of each JSON line; ``exc_info`` is added as ``exc_info`` when present.
JSON_FIELDS = ("asctime", "levelname", "name", "message")


def setup_logging(level: str, log_format: str = "text") -> None:
    """Configure the root logger: ``log_format`` is ``text`` or ``json``."""
    handler = logging.StreamHandler()
    if log_format == "json":
        handler.setFormatter(
            JsonFormatter(
                JSON_FIELDS,
                rename_fields={"asctime": "time", "levelname": "level", "name": "logger"},
                datefmt="%Y-%m-%dT%H:%M:%S%z",
            )
        )
    elif log_format == "text":
        handler.setFormatter(logging.Formatter(TEXT_FORMAT))
    else:
        raise ValueError(f"unknown log format {log_format!r}: use text or json")
    handler.addFilter(LimitedRecords(LogLimiter(logging.getLogger("server.libraries"))))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    logging.getLogger("websockets").setLevel(logging.WARNING)
