"""Each player's best run on each deal, kept for ghost races (:mod:`server.rooms.ghost`).

Two keys per deal, in one Cluster slot (the hash tag is the game and the deal):

=====================================  ======  ==============================================
key                                    type    holds
=====================================  ======  ==============================================
``sr:runs:{<game>:<deal>}``            zset    player -> their best winning time on the deal, ms
``sr:runs:{<game>:<deal>}:run``        hash    player -> that run (:class:`BestRun`, msgpack)
=====================================  ======  ==============================================

Only wins are kept, one per player: a run replaces the player's stored one only if it is
faster (a tie keeps the older), checked and written by one script, so two races finishing at
once never leave the slower. Both keys expire :data:`KEPT_DAYS` days after the deal's last new
best. The deal of today's daily challenge is stored like any other; who may race it is the
feature's rule (:mod:`server.features.ghosts`), not storage's.
"""

from __future__ import annotations

from typing import Final

import msgspec

from protocol.messages import RoomOptions
from server.rooms.ghost import GhostRun
from server.storage.connection import Storage, as_bytes, as_text
from server.storage.keys import key_part

#: Days a deal's best runs are kept after its last new best.
KEPT_DAYS: Final = 30

# KEYS: the times zset, the runs hash; ARGV: player, time ms, run, ttl s. 1 stored, 0 not faster.
_SAVE: Final = """
local held = redis.call('ZSCORE', KEYS[1], ARGV[1])
if held and tonumber(held) <= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('EXPIRE', KEYS[1], ARGV[4])
redis.call('EXPIRE', KEYS[2], ARGV[4])
return 1
"""


class BestRun(msgspec.Struct, frozen=True):
    """A winning run and the options it was played with (its moves depend on the autoplay)."""

    player: str
    run: GhostRun
    options: RoomOptions


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(BestRun)


class BestRuns:
    """The best runs of a :class:`Storage`. ``game`` is a variant; ``deal`` a deal's text."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._save = storage.script(_SAVE)

    def _keys(self, game: str, deal: str) -> tuple[str, str]:
        times = f"{self._storage.prefix}runs:{{{key_part(game)}:{key_part(deal)}}}"
        return times, f"{times}:run"

    async def save(self, game: str, deal: str, best: BestRun) -> bool:
        """Keep ``best`` (a win: its run has a ``finished_ms``) as its player's best run on
        ``deal``, unless they have one as fast; True if it was kept."""
        time_ms = best.run.finished_ms
        if time_ms is None:
            raise ValueError("only a winning run is a best run")
        keys = self._keys(game, deal)
        args: list[str | bytes | int] = [key_part(best.player), time_ms, _encoder.encode(best), KEPT_DAYS * 86_400]
        return bool(await self._save.run(f"save {best.player}'s best {game} run on deal {deal}", keys, args))

    async def best(self, game: str, deal: str, player: str) -> BestRun | None:
        """``player``'s best run on ``deal``, if one is kept."""
        _, runs = self._keys(game, deal)
        with self._storage.guard(f"read {player}'s best {game} run on deal {deal}"):
            raw = await self._storage.redis.hget(runs, key_part(player))
        return None if raw is None else _decoder.decode(as_bytes(raw))

    async def ranked(self, game: str, deal: str, rank: int) -> BestRun | None:
        """The ``rank``-th fastest kept run on ``deal`` (1 the fastest), if there is one."""
        times, runs = self._keys(game, deal)
        with self._storage.guard(f"read the best {game} runs on deal {deal}"):
            players = await self._storage.redis.zrange(times, rank - 1, rank - 1)
            raw = await self._storage.redis.hget(runs, as_text(players[0])) if players else None
        return None if raw is None else _decoder.decode(as_bytes(raw))
