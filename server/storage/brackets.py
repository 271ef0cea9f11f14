"""Bracket tournaments in Redis (:mod:`server.competition.bracket`), shared by every node.

=====================================  ======  =================================================
key                                    type    holds
=====================================  ======  =================================================
``sr:brackets``                        zset    bracket id -> its start (Unix ms)
``sr:bracket:{<id>}``                  string  the bracket (msgpack): players, rounds, runs;
                                               kept :data:`KEPT_DAYS` days after its start
=====================================  ======  =================================================

Every change (a registration, a run started or ended, a round closed or opened) is one
optimistic transaction on the bracket's key (:mod:`server.storage.optimistic`), so two nodes
never both register the seventeenth player or close a round twice.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

import msgspec

from server.competition.bracket import Bracket
from server.storage.connection import Storage, as_bytes, as_text
from server.storage.keys import key_part
from server.storage.optimistic import change_stored

#: Days a bracket is kept after its start.
KEPT_DAYS: Final = 30
#: Brackets :meth:`BracketStore.recent` lists, at most.
LISTED: Final = 20

_decoder = msgspec.msgpack.Decoder(Bracket)
_encoder = msgspec.msgpack.Encoder()


class BracketStore:
    """The brackets of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def _key(self, bracket: str) -> str:
        return f"{self._storage.prefix}bracket:{{{key_part(bracket)}}}"

    def _index(self) -> str:
        return f"{self._storage.prefix}brackets"

    async def create(self, bracket: Bracket, now: int) -> None:
        kept = max(1, bracket.starts - now) + KEPT_DAYS * 86_400_000
        with self._storage.guard(f"store bracket {bracket.id}"):
            await self._storage.redis.set(self._key(bracket.id), _encoder.encode(bracket), px=kept)
            await self._storage.redis.zadd(self._index(), {bracket.id: bracket.starts})

    async def get(self, bracket: str) -> Bracket | None:
        with self._storage.guard(f"read bracket {bracket[:16]}"):
            raw = await self._storage.redis.get(self._key(bracket))
        return None if raw is None else _decoder.decode(as_bytes(raw))

    async def change(self, bracket: str, change: Callable[[Bracket], Bracket | None]) -> Bracket | None:
        """Apply ``change`` atomically (None: nothing to store); the bracket as stored after,
        or None if there is none."""
        return await change_stored(
            self._storage, self._key(bracket), _decoder, change, f"change bracket {bracket[:16]}"
        )

    async def recent(self, since: int) -> list[Bracket]:
        """Brackets that start from ``since`` on (Unix ms), soonest first; the index forgets
        those no longer kept."""
        with self._storage.guard("list the brackets"):
            ids = await self._storage.redis.zrangebyscore(self._index(), since, "+inf", start=0, num=LISTED)
        found = []
        for code in ids:
            bracket = await self.get(as_text(code))
            if bracket is None:
                with self._storage.guard("forget a bracket no longer kept"):
                    await self._storage.redis.zrem(self._index(), as_text(code))
            else:
                found.append(bracket)
        return found
