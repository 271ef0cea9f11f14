"""Load from many client addresses, as a deployment sees it: each client connects (and
reconnects) from a loopback address of its own, 127.1.0.1, 127.1.0.2, ... The server limits
connections and openings per address, so a load from one address measures its limits, not
its rooms.
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator
from typing import Any

from websockets.asyncio import client as websockets_client

import client.lib.connection as client_connection
from client.lib.connection import RaceClient

#: The loopback address the client being built connects from (see :class:`Player`).
_SOURCE: contextvars.ContextVar[str | None] = contextvars.ContextVar("rolling_source", default=None)


class _FromSource(websockets_client.connect):
    """websockets' ``connect``, from the address in :data:`_SOURCE` when one is set."""

    def __init__(self, uri: str, **options: Any) -> None:
        source = _SOURCE.get()
        if source is not None:
            options.setdefault("local_addr", (source, 0))
        super().__init__(uri, **options)


class Player(RaceClient):
    """A :class:`RaceClient` whose connections, its reconnections included, all leave from the
    address that was in :data:`_SOURCE` when it was built, as a real player's leave from
    theirs. The client library connects with the module's ``connect``, which
    :func:`from_own_addresses` replaces with :class:`_FromSource` meanwhile."""

    def __init__(self, *args: Any, **options: Any) -> None:
        super().__init__(*args, **options)
        self.source = _SOURCE.get()

    async def _open(self, url: str | None = None) -> None:
        token = _SOURCE.set(self.source)
        try:
            await super()._open(url)
        finally:
            _SOURCE.reset(token)


@contextlib.contextmanager
def from_own_addresses() -> Iterator[None]:
    """While inside, the client library connects from the address of the :class:`Player`."""
    names = vars(client_connection)
    original, names["connect"] = names["connect"], _FromSource
    try:
        yield
    finally:
        names["connect"] = original


def address_of(racer: int) -> str:
    """The loopback address of the ``racer``-th racer (from 0): 127.1.0.1, 127.1.0.2, ..."""
    return f"127.1.{racer // 250}.{racer % 250 + 1}"


async def connect_from(url: str, name: str, source: str, reconnect: bool = True) -> RaceClient:
    """``name``'s client, connected (and reconnecting, with ``reconnect``) from ``source``."""
    token = _SOURCE.set(source)
    try:
        return await Player.connect(url, name, reconnect=reconnect)
    finally:
        _SOURCE.reset(token)
