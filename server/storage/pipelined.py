"""One Redis connection on which commands go out without waiting: the road of scripts
(:mod:`server.storage.scripts`, room commits among them) and of command groups on a plain Redis.

Why not redis-py for these: a lone command through redis-py checks a connection out of its
pool, packs every argument in Python, writes under one timeout and reads under another.
That is about 125 µs of this process's CPU for one room commit, against about 14 µs for the
same commit here (``python -m bench.commits``). Every move is a commit, so that was about a
quarter of a move's cost. redis-py stays the client for single commands and reads.

:class:`PipelinedConnection` keeps one connection open, and any number of commands may be
on their way on it at once, answered in the order they were sent:

- A call packs its command with hiredis (C) and queues it. What the calls of one event-loop
  turn queued goes out in one write.
- hiredis parses the replies as they arrive; each goes to the oldest call still waiting.
- A call waiting longer than the timeout means Redis is stuck or gone. The connection is
  then closed and every call on it fails, so a late reply can never reach the wrong call.
  The next call connects again.
- Failures are redis-py's exception types (and OSError), so
  :meth:`~server.storage.connection.Storage.guard` turns them into ``StoreUnavailable`` as for
  any other command. An error reply (``-ERR ...``) is returned, not raised: the caller
  decides (a missing script is loaded and the command sent again).

It speaks to a plain Redis over a Unix socket or TCP (``unix://`` and ``redis://`` URLs, with
their user, password and database). TLS (``rediss://``) and Redis Cluster keep redis-py's
road (:func:`supports`).
"""

from __future__ import annotations

import asyncio
import collections
from collections.abc import Callable, Sequence
from typing import Final, cast
from urllib.parse import urlsplit

import hiredis
from redis.asyncio.connection import parse_url
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse, ResponseError
from redis.exceptions import TimeoutError as RedisTimeoutError

#: URL schemes this connection speaks.
SCHEMES: Final = frozenset({"unix", "redis"})

#: A command's parts, as hiredis packs them.
Arg = str | bytes | int | float


def _pack(command: Sequence[Arg]) -> bytes:
    # hiredis's stub types the argument as a 1-tuple; it packs a tuple of any length.
    packed: bytes = hiredis.pack_command(cast("tuple[Arg]", tuple(command)))
    return packed


def supports(url: str) -> bool:
    """Whether ``url`` names a Redis this connection can reach (plain, no TLS, no Cluster)."""
    return urlsplit(url).scheme in SCHEMES


class PipelinedConnection:
    """Commands pipelined on one connection to the Redis at ``url``; see the module docstring.

    It belongs to the event loop of its first call, like redis-py's clients."""

    def __init__(self, url: str, reply_timeout: float, connect_timeout: float) -> None:
        if not supports(url):
            raise ValueError(f"a pipelined connection speaks only {sorted(SCHEMES)} URLs")
        options = parse_url(url)
        self._path: str | None = options.get("path")
        self._host: str = options.get("host") or "localhost"
        self._port = int(options.get("port") or 6379)
        self._greeting: list[tuple[Arg, ...]] = []
        password, username = options.get("password"), options.get("username")
        if password is not None:
            self._greeting.append(("AUTH", username, password) if username else ("AUTH", password))
        if options.get("db"):
            self._greeting.append(("SELECT", int(options["db"])))
        self._reply_timeout = reply_timeout
        self._connect_timeout = connect_timeout
        self._line: _Line | None = None
        self._connecting: asyncio.Lock | None = None

    async def call(self, *command: Arg) -> object:
        """Send ``command`` and return its reply (a :class:`ResponseError` for an error
        reply; inside a transaction's EXEC reply too). Raises redis-py's
        ``ConnectionError``/``TimeoutError``, or ``OSError``, if Redis cannot be reached or
        does not answer in time."""
        line = self._line
        if line is None or line.closed:
            line = await self._connect()
        return await line.send(_pack(command))

    async def call_all(self, commands: Sequence[Sequence[Arg]]) -> list[object]:
        """Send ``commands`` in one piece (nothing else comes between them) and return their
        replies, in order; raises as :meth:`call` does."""
        line = self._line
        if line is None or line.closed:
            line = await self._connect()
        futures = [line.send(_pack(command)) for command in commands]
        try:
            return [await future for future in futures]
        except BaseException:
            for future in futures:  # they failed together: mark every failure seen
                if future.done() and not future.cancelled():
                    future.exception()
                else:
                    future.cancel()
            raise

    async def _connect(self) -> _Line:
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:  # one connection attempt at a time; the others reuse it
            if self._line is not None and not self._line.closed:
                return self._line
            loop = asyncio.get_running_loop()
            timeout = self._reply_timeout
            async with asyncio.timeout(self._connect_timeout):
                if self._path is not None:
                    _, line = await loop.create_unix_connection(lambda: _Line(timeout), self._path)
                else:
                    _, line = await loop.create_connection(lambda: _Line(timeout), self._host, self._port)
                try:
                    for command in self._greeting:
                        reply = await line.send(_pack(command))
                        if isinstance(reply, ResponseError):
                            raise reply
                except BaseException:
                    line.close()
                    raise
            self._line = line
            return line

    def close(self) -> None:
        """Close the connection; calls still waiting fail with ``ConnectionError``."""
        if self._line is not None:
            self._line.close()
            self._line = None


class _Line(asyncio.Protocol):
    """The protocol of one open connection: queued writes, and the calls awaiting replies."""

    def __init__(self, reply_timeout: float) -> None:
        self._reader = hiredis.Reader(protocolError=InvalidResponse, replyError=ResponseError)
        self._transport: asyncio.Transport | None = None
        self._loop = asyncio.get_running_loop()
        # Calls awaiting replies, oldest first, with the loop time each stops waiting.
        self._waiting: collections.deque[tuple[asyncio.Future[object], float]] = collections.deque()
        self._unsent: list[bytes] = []
        self._timer: asyncio.TimerHandle | None = None
        self._reply_timeout = reply_timeout
        self.closed = False

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # A stream transport (uvloop's are not asyncio.Transport subclasses, but have write).
        self._transport = cast(asyncio.Transport, transport)

    def send(self, packed: bytes) -> asyncio.Future[object]:
        """Queue a packed command; the future is its reply."""
        if self.closed:
            raise RedisConnectionError("the connection to Redis is closed")
        loop = self._loop
        future: asyncio.Future[object] = loop.create_future()
        deadline = loop.time() + self._reply_timeout
        self._waiting.append((future, deadline))
        if not self._unsent:
            loop.call_soon(self._flush)
        self._unsent.append(packed)
        if self._timer is None:
            self._timer = loop.call_at(deadline, self._check_waiting)
        return future

    def _flush(self) -> None:
        unsent, self._unsent = self._unsent, []
        if unsent and not self.closed and self._transport is not None:
            self._transport.write(unsent[0] if len(unsent) == 1 else b"".join(unsent))

    def data_received(self, data: bytes) -> None:
        reader = self._reader
        reader.feed(data)
        waiting = self._waiting
        try:
            while (reply := reader.gets()) is not False:
                if not waiting:
                    raise InvalidResponse("Redis sent a reply nobody asked for")
                future, _ = waiting.popleft()
                if not future.done():  # a cancelled caller's reply is dropped
                    future.set_result(reply)
        except InvalidResponse as error:
            why = str(error)
            self._fail(lambda: RedisConnectionError(f"Redis broke the protocol: {why}"))

    def _check_waiting(self) -> None:
        """Fail everything if the oldest call has waited too long; else look again when it would have."""
        self._timer = None
        if not self._waiting or self.closed:
            return
        deadline = self._waiting[0][1]
        if self._loop.time() >= deadline:
            timeout = self._reply_timeout
            self._fail(lambda: RedisTimeoutError(f"Timeout reading from socket: no reply within {timeout:g} s"))
            return
        self._timer = self._loop.call_at(deadline, self._check_waiting)

    def connection_lost(self, exc: Exception | None) -> None:
        why = f": {exc}" if exc is not None else ""
        self._fail(lambda: RedisConnectionError(f"Connection closed by server{why}"))

    def close(self) -> None:
        self._fail(lambda: RedisConnectionError("the connection to Redis was closed"))

    def _fail(self, error: Callable[[], Exception]) -> None:
        """Close the connection and fail every waiting call with a fresh ``error()``."""
        self.closed = True
        self._unsent = []
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        waiting, self._waiting = self._waiting, collections.deque()
        for future, _ in waiting:
            if not future.done():
                future.set_exception(error())
        if self._transport is not None:
            self._transport.abort()
