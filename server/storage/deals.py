"""Certified deals in Redis: each day's daily deal (written once) and the winnable-deal pools."""

from __future__ import annotations

import msgspec

from server.clock import now_ms
from server.competition.daily import DailyDeal
from server.storage.connection import Storage, as_text
from server.storage.keys import Keys


class DealStore:
    """The certified deals of a :class:`Storage`. ``game`` is ``scorpion`` or ``antares``;
    ``date`` a UTC day, ``YYYY-MM-DD``."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._keys = Keys(storage.prefix)

    async def daily(self, game: str, date: str) -> DailyDeal | None:
        """The stored deal of ``game`` on ``date``, or None if none was picked yet."""
        with self._storage.guard(f"read the {game} deal of {date}"):
            raw = await self._storage.redis.get(self._keys.daily_deal(game, date))
        return None if raw is None else msgspec.json.decode(raw, type=DailyDeal)

    async def store_daily(self, deal: DailyDeal) -> DailyDeal:
        """Store ``deal`` as its day's deal unless one is stored already; return the stored one
        (the first stored pick is the day's deal, for every process)."""
        key = self._keys.daily_deal(deal.game, deal.date)
        with self._storage.guard(f"store the {deal.game} deal of {deal.date}"):
            async with self._storage.transaction(key) as pipe:
                pipe.set(key, msgspec.json.encode(deal), nx=True)
                pipe.get(key)
                _, raw = await pipe.execute()
        return msgspec.json.decode(raw, type=DailyDeal)

    async def take_winnable(self, game: str) -> str | None:
        """A deal number from ``game``'s pool, removed from it; None if the pool is empty."""
        with self._storage.guard(f"take a {game} deal from the pool"):
            raw = await self._storage.redis.lpop(self._keys.pool(game))
        return None if raw is None else as_text(raw)

    async def count_draw(self, game: str, player: str) -> int:
        """Count one draw from ``game``'s pool by ``player`` this UTC hour; the count so far."""
        key = self._keys.pool_draws(game, player, now_ms() // 3_600_000)
        return await self._storage.count(f"count {player}'s draws from the {game} pool", key, 3600)

    async def pool_size(self, game: str) -> int:
        with self._storage.guard(f"count the {game} pool"):
            return int(await self._storage.redis.llen(self._keys.pool(game)))

    async def add_winnable(self, game: str, deal: str) -> None:
        with self._storage.guard(f"add a deal to the {game} pool"):
            await self._storage.redis.rpush(self._keys.pool(game), deal)
