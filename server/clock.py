"""The server's wall clock, in Unix milliseconds (rooms, days and deadlines are measured by it)."""

from __future__ import annotations

import time


def now_ms() -> int:
    return int(time.time() * 1000)
