"""Players in Redis: names, the token-signing secret, creation counters and daily attempts."""

from __future__ import annotations

import secrets
from typing import Final

from server.storage.connection import Storage, as_bytes, as_text
from server.storage.keys import Keys

SECRET_BYTES: Final = 32
#: Days a "ranked attempt started" mark is kept (the day itself, and time zones' slack).
ATTEMPT_DAYS: Final = 3


class PlayerStore:
    """The players of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._keys = Keys(storage.prefix)

    async def server_secret(self) -> bytes:
        """The secret that signs resume tokens: created by the first caller ever, then always the same."""
        key = self._keys.secret()
        redis = self._storage.redis
        with self._storage.guard("read the server secret"):
            async with redis.pipeline(transaction=False) as pipe:
                pipe.set(key, secrets.token_bytes(SECRET_BYTES), nx=True)
                pipe.get(key)
                _, secret = await pipe.execute()
        return as_bytes(secret)

    async def save_name(self, player: str, name: str) -> None:
        """Record (or rename) a player."""
        with self._storage.guard(f"save player {player}"):
            await self._storage.redis.hset(self._keys.player(player), "name", name)

    async def name(self, player: str) -> str | None:
        """The player's name, or None for an unknown player."""
        with self._storage.guard(f"read player {player}"):
            name = await self._storage.redis.hget(self._keys.player(player), "name")
        return None if name is None else as_text(name)

    async def count_creation(self, player: str, hour: int) -> int:
        """Count one room created by ``player`` in UTC hour ``hour`` (hours since the epoch);
        return how many they created in it, this one included."""
        return await self._storage.count(f"count {player}'s rooms", self._keys.created(player, hour), 7200)

    async def start_daily_attempt(self, game: str, date: str, player: str, room: str) -> bool:
        """Mark ``player``'s attempt at the daily ``game`` of ``date``, in room ``room``, as
        started; True if this is their first (their ranked attempt), False if they had one already."""
        key = self._keys.daily_attempt(game, date, player)
        with self._storage.guard(f"start {player}'s daily {game} attempt"):
            return bool(await self._storage.redis.set(key, room, nx=True, ex=ATTEMPT_DAYS * 86400))

    async def daily_attempt_room(self, game: str, date: str, player: str) -> str | None:
        """The room of ``player``'s ranked attempt at the daily ``game`` of ``date``; None if
        they have not started one. (``"1"`` for an attempt stored before rooms were named.)"""
        key = self._keys.daily_attempt(game, date, player)
        with self._storage.guard(f"read {player}'s daily {game} attempt"):
            room = await self._storage.redis.get(key)
        return None if room is None else as_text(room)

    async def attempted_daily(self, game: str, date: str, player: str) -> bool:
        """Whether ``player`` has started an attempt at the daily ``game`` of ``date``."""
        return await self.daily_attempt_room(game, date, player) is not None
