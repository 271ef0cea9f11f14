"""All Redis I/O of the race server: players, rooms, move logs and the token-signing secret.

Everything a room needs to be resumed lives in Redis, so a restarted server, or another
server process sharing the same Redis, can take a room over. Callers never see redis-py:
every failure of the storage (unreachable, timed out, refusing writes) raises
:class:`StoreUnavailable`, whose message says which operation failed and why.

Key layout, shown with the default prefix ``sr:`` (the ``prefix`` given to
:meth:`Store.connect` starts every key; room codes and player ids must not contain ``:``;
seats are numbered ``0 .. MAX_SEATS-1``):

=============================  ======  =========================================  ===========================
key                            type    holds                                      expiry
=============================  ======  =========================================  ===========================
``sr:secret``                  string  32 random bytes that sign resume tokens,   none
                                       created once (SET NX)
``sr:player:<id>``             hash    field ``name``: the player's name          none
``sr:room:<code>``             string  the room record (msgspec bytes encoded by  none while in progress;
                                       the room layer, opaque here)               ``ttl_seconds`` (default 7
                                                                                  days) once finished
``sr:rooms:active``            set     codes of the rooms in progress             none
``sr:room:<code>:log:<seat>``  list    the seat's moves, oldest first, as short   with the room record
                                       text entries (one RPUSH per move)
``sr:room:<code>:version``     string  the room version (an integer) recorded     with the room record
                                       with the last appended move
=============================  ======  =========================================  ===========================

Saving a finished room as active again (a rematch) makes its record permanent again, and so
do new moves for their log and the version; saving it as inactive keeps its expiry.

Durability and retries: :meth:`Store.append_move` returns only once Redis has executed the
append, and Redis hands every write to its append-only file before it replies (and fsyncs it
every second), so a move acknowledged to a player after it returns survives a crash of the
Redis process (a crash of the machine can lose the last second). The client never retries a
command by itself, because a retried append whose first reply was lost would record the move
twice; after a :class:`StoreUnavailable` from :meth:`Store.append_move` the entry may or may
not be stored, and :meth:`Store.move_log` tells which. Connections broken by a Redis restart
are replaced transparently on the next command.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Iterator
from typing import Self
from urllib.parse import urlsplit, urlunsplit

from redis import exceptions as redis_errors
from redis.asyncio import BlockingConnectionPool, Redis
from redis.asyncio.retry import Retry
from redis.backoff import NoBackoff

FINISHED_ROOM_TTL = 7 * 24 * 3600
"""Default seconds a finished room's record and logs are kept (7 days)."""

SECRET_BYTES = 32

MAX_SEATS = 8
"""Seats are numbered ``0 .. MAX_SEATS-1``: :meth:`Store.finish_room` expires the logs of all of them."""

# Seconds before a connection attempt or a reply counts as "storage unavailable".
_CONNECT_TIMEOUT = 5.0
_REPLY_TIMEOUT = 5.0
# Connections to Redis at most; more concurrent commands wait for one (up to _REPLY_TIMEOUT).
_POOL_SIZE = 50


class StoreUnavailable(Exception):
    """The storage could not be reached or refused the operation; the message says which and why."""


class Store:
    """The race server's storage; create it with :meth:`connect`, share it between tasks, close it once.

    All methods are coroutines on the event loop that called :meth:`connect`, and raise
    :class:`StoreUnavailable` when Redis fails.
    """

    def __init__(self, client: Redis, prefix: str, where: str) -> None:
        """Use :meth:`connect`; this wraps an already configured client."""
        self._redis = client
        self._prefix = prefix
        self._where = where
        # Moves waiting to be written together (see append_move), and the task writing them.
        self._queued_moves: list[tuple[str, str, str, str, int, asyncio.Future[None]]] = []
        self._move_writer: asyncio.Task[None] | None = None

    @classmethod
    async def connect(cls, url: str, prefix: str = "sr:") -> Self:
        """Connect to the Redis at ``url`` (``redis://``, ``rediss://`` or ``unix://``) and check it answers.

        ``prefix`` starts every key, so several servers or test runs can share one Redis.
        """
        # A blocking pool: past its size, a command waits for a connection instead of
        # failing at once ("too many connections") under a burst of requests.
        pool = BlockingConnectionPool.from_url(
            url,
            max_connections=_POOL_SIZE,
            timeout=_REPLY_TIMEOUT,
            retry=Retry(NoBackoff(), 0),  # see "Durability and retries" in the module docstring
            socket_connect_timeout=_CONNECT_TIMEOUT,
            socket_timeout=_REPLY_TIMEOUT,
        )
        client = Redis.from_pool(pool)
        store = cls(client, prefix, _without_credentials(url))
        try:
            await store.ping()
        except StoreUnavailable:
            await client.aclose()
            raise
        return store

    @property
    def prefix(self) -> str:
        return self._prefix

    @property
    def redis(self) -> Redis:
        """The underlying client, for the stores of other features (leaderboards, daily
        challenges) that keep their keys under the same prefix. Wrap its errors the same way."""
        return self._redis

    def failure(self, action: str, error: Exception) -> StoreUnavailable:
        """The :class:`StoreUnavailable` for ``action`` failing with redis-py's ``error``."""
        return self._failure(action, error)

    async def close(self) -> None:
        """Finish writing queued moves, then close every connection; the store is unusable afterwards."""
        if self._move_writer is not None:
            await asyncio.gather(self._move_writer, return_exceptions=True)
        await self._redis.aclose()

    async def ping(self) -> None:
        """Return once Redis answers; raise :class:`StoreUnavailable` otherwise."""
        with self._unavailable("reach the storage"):
            await self._redis.ping()

    async def server_secret(self) -> bytes:
        """The 32-byte secret that signs resume tokens: created by the first caller ever, then always the same."""
        key = self._key("secret")
        with self._unavailable("read the server secret"):
            async with self._redis.pipeline(transaction=False) as pipe:
                pipe.set(key, secrets.token_bytes(SECRET_BYTES), nx=True)
                pipe.get(key)
                _, secret = await pipe.execute()
        return _raw(secret)

    async def save_player(self, player_id: str, name: str) -> None:
        """Record (or rename) a player."""
        with self._unavailable(f"save player {player_id}"):
            await self._redis.hset(self._player_key(player_id), "name", name)

    async def player_name(self, player_id: str) -> str | None:
        """The player's name, or None for an unknown player."""
        with self._unavailable(f"read player {player_id}"):
            name = await self._redis.hget(self._player_key(player_id), "name")
        return None if name is None else _text(name)

    async def save_room(self, code: str, record: bytes, active: bool) -> None:
        """Store the room's record and add it to (``active``) or remove it from the rooms in progress.

        An active room's record never expires (saving a finished room as active again, for a
        rematch, cancels its expiry); an inactive save keeps whatever expiry the record has,
        so a finished room saved again still goes away when :meth:`finish_room` said.
        """
        with self._unavailable(f"save room {code}"):
            async with self._redis.pipeline(transaction=True) as pipe:
                if active:
                    pipe.set(self._room_key(code), record)
                    pipe.sadd(self._active_key(), code)
                else:
                    pipe.set(self._room_key(code), record, keepttl=True)
                    pipe.srem(self._active_key(), code)
                await pipe.execute()

    async def load_room(self, code: str) -> bytes | None:
        """The room's record, or None if there is no such room (or it has expired)."""
        with self._unavailable(f"load room {code}"):
            record = await self._redis.get(self._room_key(code))
        return None if record is None else _raw(record)

    async def room_exists(self, code: str) -> bool:
        with self._unavailable(f"look up room {code}"):
            count = await self._redis.exists(self._room_key(code))
        return bool(count)

    async def active_rooms(self) -> list[str]:
        """Codes of the rooms in progress, sorted."""
        with self._unavailable("list the rooms in progress"):
            codes = await self._redis.smembers(self._active_key())
        return sorted(_text(code) for code in codes)

    async def append_move(self, code: str, seat: int, entry: str, version: int) -> None:
        """Append ``entry`` to the seat's move log and record ``version`` as the room's; return once stored.

        One round trip, shared with every move queued meanwhile (a non-transactional pipeline).
        The caller appends one move of a room at a time, so entries and versions arrive in its
        order. On :class:`StoreUnavailable` the
        entry may or may not have been stored (see the module docstring).
        """
        # Keys first: they validate code and seat before anything is queued.
        log, version_key = self._log_key(code, seat), self._version_key(code)
        # Group commit: every move queued while a write is on its way goes in the next single
        # pipeline, so a busy server makes one round trip for many moves, not one per move.
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queued_moves.append((code, log, version_key, entry, version, done))
        if self._move_writer is None or self._move_writer.done():
            self._move_writer = asyncio.create_task(self._write_moves())
        await asyncio.shield(done)

    async def _write_moves(self) -> None:
        while self._queued_moves:
            batch, self._queued_moves = self._queued_moves, []
            try:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for _, log, version_key, entry, version, _ in batch:
                        pipe.rpush(log, entry)
                        pipe.set(version_key, version)
                    await pipe.execute()
            except (redis_errors.RedisError, OSError) as error:
                for code, *_, done in batch:
                    if not done.done():
                        done.set_exception(self._failure(f"save a move in room {code}", error))
            else:
                for *_, done in batch:
                    if not done.done():
                        done.set_result(None)

    async def log_version(self, code: str) -> int | None:
        """The version recorded with the room's last appended move, or None if there is none."""
        with self._unavailable(f"read the move log version of room {code}"):
            version = await self._redis.get(self._version_key(code))
        return None if version is None else int(version)

    async def move_log(self, code: str, seat: int) -> list[str]:
        """The seat's move entries, oldest first (empty if it has none)."""
        with self._unavailable(f"read a move log of room {code}"):
            entries = await self._redis.lrange(self._log_key(code, seat), 0, -1)
        return [_text(entry) for entry in entries]

    async def move_logs(self, code: str, seats: int = MAX_SEATS) -> list[list[str]]:
        """The move logs of seats ``0 .. seats-1``, read together in one round trip (a consistent snapshot)."""
        if _seat_count(seats) == 0:
            return []
        with self._unavailable(f"read the move logs of room {code}"):
            async with self._redis.pipeline(transaction=True) as pipe:
                for seat in range(seats):
                    pipe.lrange(self._log_key(code, seat), 0, -1)
                logs = await pipe.execute()
        return [[_text(entry) for entry in log] for log in logs]

    async def reset_logs(self, code: str, seats: int = MAX_SEATS) -> None:
        """Delete the move logs of seats ``0 .. seats-1`` and the recorded version (a rematch starts afresh)."""
        keys = [self._log_key(code, seat) for seat in range(_seat_count(seats))]
        with self._unavailable(f"reset the move logs of room {code}"):
            await self._redis.delete(*keys, self._version_key(code))

    async def finish_room(self, code: str, record: bytes, ttl_seconds: int = FINISHED_ROOM_TTL) -> None:
        """Store the final record, take the room off the rooms in progress, and expire it with its logs.

        The record, the move logs of every seat and the version expire after ``ttl_seconds``;
        all in one transaction. Saving the room as active again (a rematch) makes the record
        permanent again; new moves do the same for their log and the version.
        """
        if ttl_seconds <= 0:
            raise ValueError(f"ttl_seconds must be positive, not {ttl_seconds}")
        with self._unavailable(f"finish room {code}"):
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.set(self._room_key(code), record, ex=ttl_seconds)
                pipe.srem(self._active_key(), code)
                pipe.expire(self._version_key(code), ttl_seconds)
                # EXPIRE of a seat without a log does nothing; this is cheaper than tracking the seats.
                for seat in range(MAX_SEATS):
                    pipe.expire(self._log_key(code, seat), ttl_seconds)
                await pipe.execute()

    def _key(self, name: str) -> str:
        return self._prefix + name

    def _player_key(self, player_id: str) -> str:
        return self._key(f"player:{_key_part(player_id)}")

    def _room_key(self, code: str) -> str:
        return self._key(f"room:{_key_part(code)}")

    def _active_key(self) -> str:
        return self._key("rooms:active")

    def _log_key(self, code: str, seat: int) -> str:
        if not 0 <= seat < MAX_SEATS:
            raise ValueError(f"seats are numbered 0 to {MAX_SEATS - 1}, not {seat}")
        return f"{self._room_key(code)}:log:{seat}"

    def _version_key(self, code: str) -> str:
        return f"{self._room_key(code)}:version"

    @contextlib.contextmanager
    def _unavailable(self, action: str) -> Iterator[None]:
        """Turn redis-py's errors into :class:`StoreUnavailable` saying what could not be done."""
        try:
            yield
        except (redis_errors.RedisError, OSError) as error:
            raise self._failure(action, error) from error

    def _failure(self, action: str, error: Exception) -> StoreUnavailable:
        """The :class:`StoreUnavailable` for ``action`` failing with redis-py's ``error``."""
        if isinstance(error, (redis_errors.ConnectionError, redis_errors.TimeoutError, OSError)):
            why = f"no answer from Redis at {self._where} ({error})"
        else:
            why = f"Redis at {self._where} refused it ({error})"
        failure = StoreUnavailable(f"storage unavailable: cannot {action}: {why}")
        failure.__cause__ = error
        return failure


def _seat_count(seats: int) -> int:
    if not 0 <= seats <= MAX_SEATS:
        raise ValueError(f"a room has 0 to {MAX_SEATS} seats, not {seats}")
    return seats


# The client does not decode replies, so they are bytes; redis-py's types also allow str.
def _raw(reply: bytes | str) -> bytes:
    return reply if isinstance(reply, bytes) else reply.encode()


def _text(reply: bytes | str) -> str:
    return reply.decode() if isinstance(reply, bytes) else reply


def _key_part(text: str) -> str:
    """``text`` as one component of a key: a ``:`` in it could make two keys collide."""
    if not text or ":" in text:
        raise ValueError(f"a room code or player id must be non-empty and contain no ':', not {text!r}")
    return text


def _without_credentials(url: str) -> str:
    """The URL as it may appear in messages: without user name and password."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))
