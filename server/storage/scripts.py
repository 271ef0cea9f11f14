"""Lua scripts of the storage, and the one road a script takes to Redis.

A store makes each of its scripts once, ``storage.script(source)``
(:meth:`~server.storage.connection.Storage.script`), and runs it with
``await script.run(action, keys, args)``, which returns the script's reply as Redis gave it
(integers as int, strings as bytes, tables as lists, false as None). Every write of the
server that is more than one command is such a script; its keys share one hash tag (one
Cluster slot).

The road is chosen here, at each run, from the storage:

- A plain Redis: the storage's pipelined connection (:attr:`Storage.line
  <server.storage.connection.Storage.line>`, :mod:`server.storage.pipelined`). The run goes
  out at once, with whatever else this event-loop turn sends, without waiting for the runs
  on their way.
- No such connection and no Cluster (TLS): redis-py, as a group commit. Every run queued
  while a batch is on its way goes in the next single pipeline, so many writes cost one
  round trip; each is still its own script, checked and applied on its own.
- A Redis Cluster: each run on its own to its slot's node (a Cluster pipeline refuses
  scripts), at most :data:`CLUSTER_RUNS_AT_ONCE` at once: the Cluster client has no queue,
  and fails a command that finds all of a node's connections taken, so the others wait here.

On every road a run is one EVALSHA (no SCRIPT EXISTS round trip first). A run that finds the
script missing (a restarted Redis, or SCRIPT FLUSH) did not run: the script is loaded (on
every primary of a Cluster) and the run sent again, once.

Failures: a run raises :class:`~server.storage.connection.StoreUnavailable` saying ``action``
could not be done when Redis is unreachable, too slow, or refuses the run (an error reply of
the script included), as :meth:`Storage.guard <server.storage.connection.Storage.guard>`
does; a write that raised it may have landed or not.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

from redis.asyncio import Redis
from redis.asyncio.cluster import RedisCluster
from redis.exceptions import NoScriptError, RedisError, ResponseError

from server.storage.pipelined import Arg

if TYPE_CHECKING:
    from server.storage.connection import Storage

#: Script runs on their way to a Cluster at most, from one storage: fewer than a node's
#: connections (``POOL_SIZE``), leaving some to the other commands.
CLUSTER_RUNS_AT_ONCE = 32


class Script:
    """A Lua script of one :class:`Storage` (make it with ``storage.script(source)``)."""

    __slots__ = ("_storage", "sha", "source")

    def __init__(self, storage: Storage, source: str) -> None:
        self._storage = storage
        self.source = source
        #: The script's SHA1, as EVALSHA names it.
        self.sha = hashlib.sha1(source.encode()).hexdigest()

    async def run(self, action: str, keys: Sequence[str], args: Sequence[Arg]) -> object:
        """Run the script on ``keys`` (all in one slot) with ``args``, and return its reply.
        Raises :class:`StoreUnavailable` saying ``action`` failed if Redis does not answer
        or refuses the run (see the module docstring)."""
        storage = self._storage
        line = storage.line
        with storage.guard(action):
            if line is not None:
                reply = await line.call("EVALSHA", self.sha, len(keys), *keys, *args)
                if isinstance(reply, ResponseError):
                    if not str(reply).startswith("NOSCRIPT"):
                        raise reply
                    # It did not run: load the script, then send the run again.
                    loaded = await line.call("SCRIPT", "LOAD", self.source)
                    if isinstance(loaded, ResponseError):
                        raise loaded
                    reply = await line.call("EVALSHA", self.sha, len(keys), *keys, *args)
                    if isinstance(reply, ResponseError):
                        raise reply
                return reply
            if storage.cluster is not None:
                return await storage.script_road.on_cluster(storage.cluster, self, keys, args)
            return await storage.script_road.grouped(self, keys, args)

    async def run_many(self, action: str, runs: Sequence[tuple[Sequence[str], Sequence[Arg]]]) -> list[object]:
        """The replies of many runs (each its keys and arguments), sent together: bulk work
        such as lease renewals. On a Cluster they go as one pipeline a node, with EVAL (a
        Cluster pipeline cannot load a missing script), and do not queue with single runs for
        :data:`CLUSTER_RUNS_AT_ONCE`; elsewhere each takes :meth:`run`'s road, all at once.
        Raises :class:`StoreUnavailable` saying ``action`` failed if any run fails."""
        storage = self._storage
        if storage.cluster is not None:
            return await storage.send_all(
                action, [("EVAL", self.source, len(keys), *keys, *args) for keys, args in runs]
            )
        return list(await asyncio.gather(*(self.run(action, keys, args) for keys, args in runs)))


#: A run waiting for the next batch: its script, keys and arguments, and its reply.
_Queued = tuple[Script, Sequence[str], Sequence[Arg], "asyncio.Future[object]"]


class ScriptRoad:
    """A storage's roads of scripts through redis-py (see the module docstring): the group
    commit's queue, and the runs on their way to a Cluster. Its methods raise redis-py's
    errors; :meth:`Script.run` turns them into :class:`StoreUnavailable`."""

    def __init__(self, redis: Redis) -> None:
        self._redis = redis
        self._queued: list[_Queued] = []
        self._writer: asyncio.Task[None] | None = None
        self._cluster_runs = asyncio.Semaphore(CLUSTER_RUNS_AT_ONCE)

    async def on_cluster(
        self, cluster: RedisCluster, script: Script, keys: Sequence[str], args: Sequence[Arg]
    ) -> object:
        """The reply of one run, sent to its slot's node (the script loaded if missing)."""
        async with self._cluster_runs:
            try:
                return await cluster.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
            except NoScriptError:
                await cluster.script_load(script.source)  # on every primary
                return await cluster.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)

    async def grouped(self, script: Script, keys: Sequence[str], args: Sequence[Arg]) -> object:
        """The reply of one run, sent in the next batch; raises redis-py's error if its batch
        failed or Redis refused it."""
        done: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        self._queued.append((script, keys, args, done))
        if self._writer is None or self._writer.done():
            self._writer = asyncio.create_task(self._send_batches())
        # A cancelled caller cancels only its own reply: its batch goes on.
        return await done

    async def close(self) -> None:
        """Wait for the batches on their way."""
        if self._writer is not None:
            await asyncio.gather(self._writer, return_exceptions=True)

    async def _send_batches(self) -> None:
        batch: list[_Queued] = []
        try:
            while self._queued:
                batch, self._queued = self._queued, []
                try:
                    replies = await self._send(batch)
                except Exception as error:  # every waiting run learns it, whatever went wrong
                    replies = [error] * len(batch)
                for (*_, done), reply in zip(batch, replies, strict=True):
                    if done.done():
                        continue
                    if isinstance(reply, Exception):
                        done.set_exception(_as_redis_error(reply))
                    else:
                        done.set_result(reply)
        finally:  # cancelled (the loop closing): no run waits for ever
            for *_, done in [*batch, *self._queued]:
                if not done.done():
                    done.set_exception(RedisError("the batch of script runs was cancelled"))

    async def _send(self, batch: list[_Queued]) -> list[object]:
        """One pipeline of EVALSHA calls; runs that found their script missing did not run,
        so they are sent again once it is loaded."""
        replies: list[object] = [None] * len(batch)
        todo = list(range(len(batch)))
        for attempt in range(2):
            async with self._redis.pipeline(transaction=False) as pipe:
                for index in todo:
                    script, keys, args, _ = batch[index]
                    pipe.execute_command("EVALSHA", script.sha, len(keys), *keys, *args)
                sent = await pipe.execute(raise_on_error=False)
            for index, reply in zip(todo, sent, strict=True):
                replies[index] = reply
            todo = [index for index, reply in zip(todo, sent, strict=True) if isinstance(reply, NoScriptError)]
            if not todo or attempt:
                break
            try:
                for source in {batch[index][0].source for index in todo}:
                    await self._redis.script_load(source)
            except Exception as error:  # only the runs still to send fail: the others ran
                for index in todo:
                    replies[index] = error
                break
        return replies


def _as_redis_error(error: Exception) -> Exception:
    """``error`` as :meth:`Script.run`'s guard turns into :class:`StoreUnavailable`: redis-py's
    and the system's errors as they are, anything else wrapped in a RedisError."""
    if isinstance(error, (RedisError, OSError)):
        return error
    wrapped = RedisError(f"script runs failed: {error!r}")
    wrapped.__cause__ = error
    return wrapped
