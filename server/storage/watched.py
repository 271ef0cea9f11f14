"""Transactions (MULTI ... EXEC, with WATCH and reads before MULTI for optimistic ones) on one
slot, on one Redis or a Cluster.

redis-py's Cluster pipeline in transaction mode runs each command it is given (WATCH, a read,
a queued write) through a private event loop in a thread, which the caller's loop waits for:
every other coroutine of the process stops meanwhile, and when that thread has to set the
client up again (the client is closing, or lost its map) it can wait for the caller's loop,
which never answers, so the process hangs. On a Cluster, a transaction here runs instead on a
plain client of the primary that serves its slot (one client a primary, made on first use),
where every command is an ordinary await.

If the slot moved (MOVED, ASK) or the primary cannot be reached, the transaction fails (the
store raises StoreUnavailable), the primary's client is dropped, and the Cluster client is
sent one command on the slot so that it learns the new map for the next transaction.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator

from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import RedisCluster

#: What a transaction on a primary's own client raises when the slot is no longer there.
_NOT_HERE = (
    redis_errors.MovedError,
    redis_errors.AskError,
    redis_errors.ConnectionError,
    redis_errors.TimeoutError,
    OSError,
)


class WatchedTransactions:
    """Transactions' pipelines: :meth:`transaction`; :meth:`close` once at the end."""

    def __init__(self, client: Redis, cluster: RedisCluster | None, pool_size: int, wait: float) -> None:
        """``client``: the storage's client (``cluster``: the same, when it is a Cluster's);
        ``pool_size`` connections at most to each primary, a transaction waiting ``wait``
        seconds at most for one."""
        self._client = client
        self._cluster = cluster
        self._pool_size = pool_size
        self._wait = wait
        self._primaries: dict[str, Redis] = {}
        self._closed = False

    @contextlib.asynccontextmanager
    async def transaction(self, key: str) -> AsyncIterator[Pipeline]:
        """A transaction's pipeline on the Redis that holds ``key``; every key the transaction
        watches or writes shares its slot. Raises redis-py's ConnectionError once closed."""
        if self._closed:
            raise redis_errors.ConnectionError("the storage is closed")
        if self._cluster is None:
            async with self._client.pipeline(transaction=True) as pipe:
                yield pipe
            return
        name, primary = self._primary(self._cluster, key)
        try:
            async with primary.pipeline(transaction=True) as pipe:
                yield pipe
        except _NOT_HERE:
            await self._relearn(self._cluster, name, key)
            raise

    def _primary(self, cluster: RedisCluster, key: str) -> tuple[str, Redis]:
        try:
            node = cluster.get_node_from_key(key)
        except redis_errors.SlotNotCoveredError as error:  # not an outage to redis-py
            raise redis_errors.ConnectionError(str(error)) from error
        if node is None:
            raise redis_errors.ConnectionError(f"no primary serves the slot of {key}")
        primary = self._primaries.get(node.name)
        if primary is None:
            # The node's own connection settings: its address, credentials, TLS and timeouts.
            pool = BlockingConnectionPool(
                connection_class=node.connection_class,
                max_connections=self._pool_size,
                timeout=self._wait,
                **node.connection_kwargs,
            )
            primary = self._primaries[node.name] = Redis.from_pool(pool)
        return node.name, primary

    async def _relearn(self, cluster: RedisCluster, name: str, key: str) -> None:
        """Drop the client of the primary ``name`` and let the Cluster client follow ``key``'s slot."""
        dropped = self._primaries.pop(name, None)
        with contextlib.suppress(redis_errors.RedisError, OSError):
            if dropped is not None:
                await dropped.aclose()
            await cluster.exists(key)  # a MOVED answer updates its map

    async def close(self) -> None:
        """Close every primary's client; transactions asked after this raise."""
        self._closed = True
        primaries, self._primaries = list(self._primaries.values()), {}
        for primary in primaries:
            with contextlib.suppress(redis_errors.RedisError, OSError):
                await primary.aclose()
