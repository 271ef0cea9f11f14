"""A websockets server connection that holds less while idle.

websockets (given to ``serve()`` as ``create_connection``, its hook for this) gives every
connection two ``collections.deque`` objects that stay empty or nearly so for its whole life:
the futures waiting for the transport to drain, and the frames received but not yet read. An
empty deque allocates a block of 64 slots: 760 bytes each, 1.5 KB of an idle connection's 12.
:class:`CompactConnection` swaps them for lists, which cost 56 bytes empty. Both stay short
(drain waiters: the one sender at a time; frames: ``max_queue``, a handful), so a list's
``pop(0)`` is as fast as a deque's ``popleft`` here.

The swap reaches into two attributes websockets does not document, so it checks that they are
what it expects and leaves a connection as websockets made it otherwise (``compacted`` is then
False, which tests/connections/test_compact.py notices when websockets changes).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Iterable
from typing import Any, TypeVar

from websockets.asyncio.server import ServerConnection

T = TypeVar("T")


class ShortQueue(list[T]):
    """A list with the two deque methods websockets' receive queue calls."""

    __slots__ = ()

    def popleft(self) -> T:
        return self.pop(0)

    def extendleft(self, items: Iterable[T]) -> None:
        """As deque.extendleft: each item in turn goes to the front, so they end reversed."""
        self[0:0] = list(items)[::-1]


class CompactConnection(ServerConnection):
    """A :class:`~websockets.asyncio.server.ServerConnection` with its two idle deques swapped
    for lists (see the module's docstring)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        #: Both queues are lists (False: websockets' own, left alone).
        self.compacted = False
        self._waiters_swapped = type(self.drain_waiters) is collections.deque and not self.drain_waiters
        if self._waiters_swapped:
            self.drain_waiters = ShortQueue()  # type: ignore[assignment]

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # websockets makes the receive queue here
        frames = getattr(getattr(self, "recv_messages", None), "frames", None)
        queue = getattr(frames, "queue", None)
        if type(queue) is collections.deque and not queue and self._waiters_swapped:
            self.recv_messages.frames.queue = ShortQueue()  # type: ignore[assignment]
            self.compacted = True
