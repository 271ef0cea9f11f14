"""Stopping background tasks for certain.

Python 3.11's ``asyncio.wait_for`` returns the result of an inner call that finished in the
same loop turn as a cancellation instead of raising ``CancelledError``; redis-py uses it for
every write with a socket timeout. A loop that is cancelled just then goes on running (its
``cancelling()`` count stays raised), and whoever waits for it waits forever. Shutting down
therefore cancels again until every task has ended, and loops check :func:`stop_requested`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

logger = logging.getLogger(__name__)

#: How long a cancelled task may take before it is cancelled again.
_RETRY_SECONDS = 0.5
#: How many times a task is cancelled before it is left behind (and logged).
_ATTEMPTS = 20


async def stop_tasks(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks`` and wait until all have ended, cancelling again any that swallowed the
    cancellation. Their results and exceptions are discarded. Gives up (with a warning) on a
    task that survives about ten seconds of cancellations, so that a shutdown always ends."""
    tasks = list(tasks)
    pending = {task for task in tasks if not task.done()}
    for _ in range(_ATTEMPTS):
        if not pending:
            break
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=_RETRY_SECONDS)
    for task in pending:
        logger.warning("a background task would not stop: %r", task)
    for task in tasks:
        if task.done() and not task.cancelled():
            task.exception()  # retrieved, so asyncio does not log it at collection


def stop_requested() -> None:
    """Raise ``CancelledError`` if the running task was asked to stop: for loops that catch
    errors and go on, so that a cancellation swallowed inside a call still stops them."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
