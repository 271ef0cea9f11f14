"""Arena tournaments in Redis (:mod:`server.competition.arena`), shared by every node.

An arena's keys share its hash tag, so a race's scoring is one transaction in one Cluster slot:

==========================================  ======  =============================================
key                                         type    holds
==========================================  ======  =============================================
``sr:arenas``                               zset    arena id -> its start (Unix ms)
``sr:arena:{<id>}``                         string  the arena (msgpack)
``sr:arena:{<id>}:players``                 hash    player -> their record (msgpack)
``sr:arena:{<id>}:board``                   zset    player -> standing score (higher is better)
``sr:arena:{<id>}:playing``                 hash    player -> the room of their race in progress
``sr:arena:{<id>}:scored:<room>:<race>``    string  the race was scored (once per race)
==========================================  ======  =============================================

Every key but ``sr:arenas`` expires :data:`KEPT_DAYS` days after the arena ends. A race is
scored by one optimistic transaction (WATCH) over the racers' records and the race's marker:
once, however often the recording is retried, and never losing another race's points.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import msgspec
from redis.exceptions import WatchError

from server.competition.arena import Arena, Record, score, standing_score
from server.storage.connection import Storage, StoreUnavailable, as_bytes, as_int, as_text
from server.storage.keys import key_part

#: Days an arena's standings are kept after it ends.
KEPT_DAYS: Final = 30
#: Arenas :meth:`ArenaStore.recent` lists, at most.
LISTED: Final = 20
_TRIES: Final = 16

_arena = msgspec.msgpack.Decoder(Arena)
_record = msgspec.msgpack.Decoder(Record)
_encoder = msgspec.msgpack.Encoder()


@dataclass(frozen=True, slots=True)
class Standing:
    """A line of an arena's standings; ``room``: the player's race in progress, if any."""

    rank: int
    player: str
    record: Record
    room: str | None


class ArenaStore:
    """The arenas of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage

    def _key(self, arena: str, part: str = "") -> str:
        base = f"{self._storage.prefix}arena:{{{key_part(arena)}}}"
        return f"{base}:{part}" if part else base

    def _ttl_ms(self, arena: Arena, now: int) -> int:
        return max(1, arena.ends - now) + KEPT_DAYS * 86_400_000

    async def create(self, arena: Arena, now: int) -> None:
        with self._storage.guard(f"store arena {arena.id}"):
            await self._storage.redis.set(self._key(arena.id), _encoder.encode(arena), px=self._ttl_ms(arena, now))
            await self._storage.redis.zadd(f"{self._storage.prefix}arenas", {arena.id: arena.starts})

    async def get(self, arena: str) -> Arena | None:
        with self._storage.guard(f"read arena {arena[:16]}"):
            raw = await self._storage.redis.get(self._key(arena))
        return None if raw is None else _arena.decode(as_bytes(raw))

    async def recent(self, since: int) -> list[Arena]:
        """Arenas that started since ``since`` or start later (Unix ms), soonest first; the
        index forgets those no longer kept."""
        index = f"{self._storage.prefix}arenas"
        with self._storage.guard("list the arenas"):
            ids = await self._storage.redis.zrangebyscore(index, since, "+inf", start=0, num=LISTED)
        arenas = []
        for code in ids:
            found = await self.get(as_text(code))
            if found is None:
                with self._storage.guard("forget an arena no longer kept"):
                    await self._storage.redis.zrem(index, as_text(code))
            else:
                arenas.append(found)
        return arenas

    async def playing(self, arena: Arena, players: Sequence[tuple[str, str]], room: str, now: int) -> None:
        """Note that ``players`` (id, name) race in ``room`` now, so spectators can follow the
        leaders there; a player's first race puts them on the standings, with no points."""
        kept = arena.ends + KEPT_DAYS * 86_400_000
        keys = {part: self._key(arena.id, part) for part in ("playing", "players", "board")}
        with self._storage.guard(f"note a race of arena {arena.id}"):
            async with self._storage.transaction(keys["playing"]) as pipe:
                pipe.hset(keys["playing"], mapping={player: room for player, _ in players})
                for player, name in players:
                    pipe.hsetnx(keys["players"], player, _encoder.encode(Record(name)))
                pipe.zadd(keys["board"], {p: standing_score(Record(n), arena, now) for p, n in players}, nx=True)
                for key in keys.values():
                    pipe.pexpireat(key, kept)
                await pipe.execute()

    async def racing_in(self, arena: str, player: str) -> str | None:
        """The room of ``player``'s race in progress in ``arena``, if any."""
        with self._storage.guard(f"read {player}'s race in arena {arena[:16]}"):
            room = await self._storage.redis.hget(self._key(arena, "playing"), player)
        return None if room is None else as_text(room)

    async def score_race(
        self, arena: Arena, room: str, race: int, places: Sequence[tuple[str, str, int]], finished: int
    ) -> bool:
        """Add a finished race's points (``places``: player, name, place) to the standings,
        once; True if this call scored it."""
        players, board = self._key(arena.id, "players"), self._key(arena.id, "board")
        marker = self._key(arena.id, f"scored:{key_part(room)}:{race}")
        playing = self._key(arena.id, "playing")
        names = [player for player, _, _ in places]
        kept = arena.ends + KEPT_DAYS * 86_400_000
        with self._storage.guard(f"score a race of arena {arena.id}"):
            for _ in range(_TRIES):
                async with self._storage.transaction(players) as pipe:
                    await pipe.watch(players, marker)
                    if await pipe.exists(marker):
                        return False
                    raws = await pipe.hmget(players, names)
                    # A racer may race on before this race ends: their newer race stays noted.
                    rooms = await pipe.hmget(playing, names)
                    done = [
                        p for p, noted in zip(names, rooms, strict=True) if noted is not None and as_text(noted) == room
                    ]
                    before = {p: _record.decode(as_bytes(raw)) for p, raw in zip(names, raws, strict=True) if raw}
                    after = score(before, places)
                    pipe.multi()  # type: ignore[no-untyped-call]
                    pipe.hset(players, mapping={p: _encoder.encode(r) for p, r in after.items()})
                    moved = {
                        p: standing_score(r, arena, finished)
                        for p, r in after.items()
                        if p not in before or r.points != before[p].points
                    }
                    if moved:
                        pipe.zadd(board, moved)
                    if done:
                        pipe.hdel(playing, *done)
                    pipe.set(marker, b"1", pxat=kept)
                    for key in (players, board):
                        pipe.pexpireat(key, kept)
                    try:
                        await pipe.execute()
                    except WatchError:
                        continue
                    return True
        raise StoreUnavailable(f"storage busy: could not score a race of arena {arena.id}")

    async def top(self, arena: str, first: int, count: int) -> list[Standing]:
        """``count`` lines of the standings from rank ``first`` (1 is the leader)."""
        board = self._key(arena, "board")
        with self._storage.guard(f"read the standings of arena {arena[:16]}"):
            ranked = await self._storage.redis.zrevrange(board, first - 1, first + count - 2)
        return await self._lines(arena, first, [as_text(p) for p in ranked])

    async def rank(self, arena: str, player: str) -> int | None:
        with self._storage.guard(f"read {player}'s rank in arena {arena[:16]}"):
            rank = await self._storage.redis.zrevrank(self._key(arena, "board"), player)
        return None if rank is None else as_int(rank) + 1

    async def count(self, arena: str) -> int:
        with self._storage.guard(f"count the players of arena {arena[:16]}"):
            return int(await self._storage.redis.zcard(self._key(arena, "board")))

    async def _lines(self, arena: str, first: int, players: list[str]) -> list[Standing]:
        if not players:
            return []
        with self._storage.guard(f"read the standings of arena {arena[:16]}"):
            raws = await self._storage.redis.hmget(self._key(arena, "players"), players)
            rooms = await self._storage.redis.hmget(self._key(arena, "playing"), players)
        return [
            Standing(first + i, player, _record.decode(as_bytes(raw)), None if room is None else as_text(room))
            for i, (player, raw, room) in enumerate(zip(players, raws, rooms, strict=True))
            if raw is not None
        ]
