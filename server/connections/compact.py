"""A websockets server connection that holds less while idle, and knows where its client is.

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
from collections.abc import Callable, Iterable
from typing import TypeVar

from websockets.asyncio.server import ServerConnection

from server.connections.origin import Origin

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

    #: Both queues are lists (False: websockets' own, left alone).
    compacted = False
    #: Where the client is, when the opening line learnt it (None: ask the transport).
    origin: Origin | None = None
    #: Called once when the connection is gone (the opening line's count per address).
    on_lost: Callable[[], None] | None = None

    def connection_lost(self, exc: Exception | None) -> None:
        super().connection_lost(exc)
        on_lost, self.on_lost = self.on_lost, None
        if on_lost is not None:
            on_lost()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)  # websockets makes the receive queue here
        frames = getattr(getattr(self, "recv_messages", None), "frames", None)
        queue, waiters = getattr(frames, "queue", None), getattr(self, "drain_waiters", None)
        # Both or neither, and only while they are still empty (nothing was read or written yet).
        if type(queue) is collections.deque and type(waiters) is collections.deque and not queue and not waiters:
            self.drain_waiters = ShortQueue()  # type: ignore[assignment]
            self.recv_messages.frames.queue = ShortQueue()  # type: ignore[assignment]
            self.compacted = True
