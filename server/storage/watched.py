"""Optimistic transactions (WATCH, reads, MULTI ... EXEC) on one slot, on one Redis or a Cluster.

redis-py's Cluster pipeline runs the reads between WATCH and MULTI on a private event loop in
a thread, which the caller's loop joins: every other coroutine of the process stops for each
read, and a read that needs the caller's loop (a connection's reader belongs to it) never
returns, so the process hangs. On a Cluster, a transaction here runs instead on a plain client
of the primary that serves its slot (one client a primary, made on first use), where the reads
are ordinary awaits. If the slot moves meanwhile, the primary answers MOVED: the transaction
fails (the store raises StoreUnavailable) and the cluster client learns the new map on its
next command.
"""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.client import Pipeline
from redis.asyncio.cluster import RedisCluster


class WatchedTransactions:
    """Pipelines for optimistic transactions: :meth:`pipeline`; :meth:`close` once at the end."""

    def __init__(self, client: Redis, cluster: RedisCluster | None, pool_size: int, wait: float) -> None:
        """``client``: the storage's client (``cluster``: the same, when it is a Cluster's);
        ``pool_size`` connections at most to each primary, a transaction waiting ``wait``
        seconds at most for one."""
        self._client = client
        self._cluster = cluster
        self._pool_size = pool_size
        self._wait = wait
        self._primaries: dict[str, Redis] = {}

    def pipeline(self, key: str) -> Pipeline:
        """A transaction's pipeline (use it as an async context manager) on the Redis that
        holds ``key``; every key the transaction watches or writes shares its slot."""
        if self._cluster is None:
            return self._client.pipeline(transaction=True)
        node = self._cluster.get_node_from_key(key)
        if node is None:  # the client knows no primary of the slot (the cluster is down)
            raise ConnectionError(f"no primary serves the slot of {key}")
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
        return primary.pipeline(transaction=True)

    async def close(self) -> None:
        primaries, self._primaries = list(self._primaries.values()), {}
        for primary in primaries:
            await primary.aclose()
