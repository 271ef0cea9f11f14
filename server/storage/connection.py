"""The one Redis connection of a server process, and the one place redis-py's errors become ours.

Callers never see redis-py: every failure of the storage (unreachable, timed out, refusing
writes) raises :class:`StoreUnavailable`, whose message says which operation failed and why.
It is one of the storage failures of :mod:`server.errors`' tree, beside the room store's
version conflicts and fencing, which are not outages.

Retries: the client never retries a command by itself, because a retried append whose first
reply was lost would record it twice. Room writes are instead made safe to repeat by their
version check (:mod:`server.storage.rooms`), and a room resynchronises from Redis after any
failure. Connections broken by a Redis restart are replaced transparently on the next command.

Redis Cluster: a URL ``redis+cluster://host:port`` (or ``rediss+cluster://``) names any node
of a cluster; the client is then redis-py's :class:`~redis.asyncio.cluster.RedisCluster`,
which follows the slots. Every script and transaction of the server touches one hash tag
(one slot), so the same code runs on one Redis and on a cluster; :attr:`Storage.cluster`
says which, for the one thing that differs (sharded pub/sub, :mod:`server.storage.nodes`).
Transactions (MULTI ... EXEC, and optimistic ones with WATCH) go through
:meth:`Storage.transaction`, which on a Cluster runs them on the slot's primary
(:mod:`server.storage.watched` says why).

Scripts: a store makes its Lua scripts with :meth:`Storage.script` and runs them on the one
road :mod:`server.storage.scripts` chooses for this storage.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Self, cast
from urllib.parse import urlsplit, urlunsplit

from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import RedisCluster
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

from server.errors import StorageError
from server.storage.pipelined import Arg, PipelinedConnection, supports
from server.storage.scripts import Script, ScriptRoad
from server.storage.watched import WatchedTransactions

# Seconds before a connection attempt or a reply counts as "storage unavailable".
CONNECT_TIMEOUT = 5.0
REPLY_TIMEOUT = 2.0
# Connections to Redis at most; more concurrent commands wait for one (up to REPLY_TIMEOUT).
POOL_SIZE = 50
#: URL schemes naming a Redis Cluster (any one node of it), and the plain scheme each stands for.
CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}


class StoreUnavailable(StorageError):
    """Raised when the storage could not be reached, failed, refused or did not answer an
    operation in time, or stayed too busy for it (an outage: the message says which operation
    and why). A write that raised it may have landed or not."""


#: Called with (operation, seconds) after every storage operation (metrics).
LatencyObserver = Callable[[str, float], None]


class Storage:
    """A connected Redis and the key prefix; create it with :meth:`connect`, close it once."""

    def __init__(
        self,
        client: Redis,
        prefix: str,
        where: str,
        cluster: RedisCluster | None = None,
        line: PipelinedConnection | None = None,
        reply_timeout: float = REPLY_TIMEOUT,
    ) -> None:
        """Use :meth:`connect`; this wraps an already configured client (``cluster``: the
        same client when it is a :class:`RedisCluster`; ``line``: a pipelined connection to
        the same Redis, for scripts and :meth:`send_all`)."""
        self.redis = client
        self.cluster = cluster
        self._watched = WatchedTransactions(client, cluster, POOL_SIZE, reply_timeout)
        #: The connection of scripts (:meth:`script`) and :meth:`send_all`
        #: (:mod:`server.storage.pipelined`); None on a Cluster and over TLS, where they go
        #: through redis-py.
        self.line = line
        #: The roads of scripts through redis-py, where there is no :attr:`line`
        #: (:mod:`server.storage.scripts`).
        self.script_road = ScriptRoad(client)
        self.prefix = prefix
        self._where = where
        self._scripts: dict[str, Script] = {}
        self.observe: LatencyObserver | None = None

    @classmethod
    async def connect(cls, url: str, prefix: str = "sr:", reply_timeout: float = REPLY_TIMEOUT) -> Self:
        """Connect to the Redis at ``url`` (``redis://``, ``rediss://``, ``unix://``, or
        ``redis+cluster://`` for a Redis Cluster) and check it answers.

        ``prefix`` starts every key, so several servers or test runs can share one Redis.
        """
        scheme = urlsplit(url).scheme
        if scheme in CLUSTER_SCHEMES:
            return await cls._connect_cluster(url.replace(scheme, CLUSTER_SCHEMES[scheme], 1), prefix, reply_timeout)
        # A blocking pool: past its size, a command waits for a connection instead of
        # failing at once ("too many connections") under a burst of requests.
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=POOL_SIZE,
            timeout=reply_timeout,
            retry=Retry(NoBackoff(), 0),  # see "Retries" in the module docstring
            socket_connect_timeout=CONNECT_TIMEOUT,
            socket_timeout=reply_timeout,
        )
        client = Redis.from_pool(pool)
        line = PipelinedConnection(url, reply_timeout, CONNECT_TIMEOUT) if supports(url) else None
        storage = cls(client, prefix, without_credentials(url), line=line, reply_timeout=reply_timeout)
        try:
            await storage.ping()
        except StoreUnavailable:
            await client.aclose()
            raise
        return storage

    @classmethod
    async def _connect_cluster(cls, url: str, prefix: str, reply_timeout: float) -> Self:
        cluster = RedisCluster.from_url(
            url,
            max_connections=POOL_SIZE,
            retry=Retry(NoBackoff(), 0),  # see "Retries" in the module docstring
            socket_connect_timeout=CONNECT_TIMEOUT,
            socket_timeout=reply_timeout,
        )
        # The cluster client answers the same commands as the plain one (keyed commands go
        # to their slot's node): the stores use it through the plain client's type.
        storage = cls(
            cast(Redis, cluster), prefix, "cluster " + without_credentials(url), cluster, reply_timeout=reply_timeout
        )
        try:
            await storage.ping()
        except StoreUnavailable:
            await cluster.aclose()
            raise
        return storage

    async def close(self) -> None:
        """Wait for the scripts on their way, then close the connections."""
        await self.script_road.close()
        if self.line is not None:
            self.line.close()
        try:
            await self._watched.close()
        finally:
            await self.redis.aclose()

    async def ping(self) -> None:
        """Return once Redis answers; raise :class:`StoreUnavailable` otherwise."""
        with self.guard("reach the storage"):
            await self.redis.ping()

    def transaction(self, key: str) -> contextlib.AbstractAsyncContextManager[Pipeline]:
        """A transaction's pipeline (MULTI ... EXEC, optimistic with WATCH and reads before
        MULTI; use it with ``async with``) on the Redis that holds ``key``, whose slot every
        key it touches shares (:mod:`server.storage.watched`)."""
        return self._watched.transaction(key)

    def script(self, source: str) -> Script:
        """The Lua script ``source`` of this storage, to run with ``await script.run(action,
        keys, args)`` on the road :mod:`server.storage.scripts` chooses."""
        script = self._scripts.get(source)
        if script is None:
            script = self._scripts[source] = Script(self, source)
        return script

    async def send_all(self, action: str, commands: Sequence[Sequence[Arg]], transaction: bool = False) -> list[object]:
        """Send ``commands`` together, in order, in one round trip (with ``transaction``, as
        one MULTI/EXEC), and return their replies. Raises :class:`StoreUnavailable` saying
        ``action`` failed if Redis does not answer or refuses any of them.

        On a plain Redis they go on the pipelined connection (:attr:`line`), as one piece, so
        no other command comes between them; elsewhere (TLS, Cluster) through redis-py's
        pipeline. Without ``transaction`` a failure may leave some done and others not.
        """
        with self.guard(action):
            if self.line is not None:
                if transaction:
                    replies = await self.line.call_all([("MULTI",), *commands, ("EXEC",)])
                    _raise_first_error(replies)
                    executed = replies[-1]
                    if not isinstance(executed, list):
                        raise redis_errors.ResponseError(f"the transaction was not executed ({executed!r})")
                    replies = executed
                else:
                    replies = await self.line.call_all(commands)
                _raise_first_error(replies)
                return replies
            first_key = commands[0][1]
            pipeline = (
                self.transaction(first_key.decode() if isinstance(first_key, bytes) else str(first_key))
                if transaction
                else self.redis.pipeline(transaction=False)
            )
            async with pipeline as pipe:
                for command in commands:
                    pipe.execute_command(*command)
                return list(await pipe.execute())

    async def count(self, action: str, key: str, seconds: int) -> int:
        """Add one to the counter ``key``, which expires ``seconds`` after its first count, in
        one transaction; the count, this one included."""
        count, _ = await self.send_all(action, [("INCR", key), ("EXPIRE", key, seconds, "NX")], transaction=True)
        return as_int(count)

    def guard(self, action: str) -> _Guard:
        """A context that turns redis-py's errors inside into :class:`StoreUnavailable`
        saying ``action`` could not be done, and reports how long it took (:attr:`observe`)."""
        return _Guard(self, action)

    def failure(self, action: str, error: Exception) -> StoreUnavailable:
        """The :class:`StoreUnavailable` for ``action`` failing with redis-py's ``error``."""
        if isinstance(error, (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)):
            why = f"no answer from Redis at {self._where} ({error})"
        else:
            why = f"Redis at {self._where} refused it ({error})"
        failure = StoreUnavailable(f"storage unavailable: cannot {action}: {why}")
        failure.__cause__ = error
        return failure


class _Guard:
    """:meth:`Storage.guard`'s context (a class: this wraps every Redis round trip, and a
    generator-based context manager costs several times as much)."""

    __slots__ = ("_action", "_start", "_storage")

    def __init__(self, storage: Storage, action: str) -> None:
        self._storage = storage
        self._action = action

    def __enter__(self) -> None:
        self._start = time.perf_counter()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        storage = self._storage
        if storage.observe is not None:
            storage.observe(self._action.split(" ", 1)[0], time.perf_counter() - self._start)
        if isinstance(error, (redis_errors.RedisError, OSError)):
            cancelled_in_flight(error)
            raise storage.failure(self._action, error) from error


def _raise_first_error(replies: list[object]) -> None:
    for reply in replies:
        if isinstance(reply, redis_errors.ResponseError):
            raise reply


def cancelled_in_flight(error: Exception) -> None:
    """Raise CancelledError if the task was being cancelled: redis-py can turn a cancellation
    inside a read into a connection error, and a loop that retries on StoreUnavailable would
    then never stop."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError from error


def without_credentials(url: str) -> str:
    """The URL as it may appear in messages: without user name and password."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def as_bytes(reply: object) -> bytes:
    """A reply as bytes (the client does not decode replies; redis-py's types also allow str)."""
    if isinstance(reply, bytes):
        return reply
    if isinstance(reply, str):
        return reply.encode()
    raise TypeError(f"expected a string reply, not {type(reply).__name__}")


def as_list(reply: object) -> list[object]:
    """An array reply (a script's table) as a list."""
    if isinstance(reply, list):
        return reply
    raise TypeError(f"expected an array reply, not {type(reply).__name__}")


def as_text(reply: object) -> str:
    return as_bytes(reply).decode()


def as_int(reply: object) -> int:
    """An integer reply, or a string reply of digits, as an int."""
    return reply if isinstance(reply, int) else int(as_bytes(reply))
