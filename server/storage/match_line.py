"""The quick-match lines in Redis, one hash per game (``sr:qm:{<game>}``: player -> entry),
so players waiting on different nodes meet: every node adds its players, and one node forms
the races (the matcher lease's holder for quick match, an arena's scheduler for its line).
A race's players are taken out of the line with ``HDEL``, which says for each whether it was
still there: a player who left meanwhile is never put in a room."""

from __future__ import annotations

import msgspec

from server.storage.connection import Storage, as_bytes
from server.storage.keys import Keys


class LineEntry(msgspec.Struct, frozen=True, array_like=True):
    """One waiting player, and where to answer them: node, connection id, request id."""

    player: str
    name: str
    rating: float
    since: float  # wall-clock seconds: the nodes share no monotonic clock
    node: str
    link: int
    request: int
    bot: bool


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(LineEntry)


class MatchLineStore:
    """The quick-match lines of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._keys = Keys(storage.prefix)

    async def join(self, game: str, entry: LineEntry) -> LineEntry:
        """Put ``entry`` in line, keeping the player's place if they already wait; the entry stored."""
        key = self._keys.match_line(game)
        with self._storage.guard(f"join the {game} quick-match line"):
            old = await self._storage.redis.hget(key, entry.player)
            if old is not None:
                entry = msgspec.structs.replace(entry, since=_decoder.decode(as_bytes(old)).since)
            await self._storage.redis.hset(key, entry.player, _encoder.encode(entry))
        return entry

    async def put_back(self, game: str, entries: list[LineEntry]) -> None:
        if not entries:
            return
        with self._storage.guard(f"put players back in the {game} quick-match line"):
            await self._storage.redis.hset(
                self._keys.match_line(game), mapping={e.player: _encoder.encode(e) for e in entries}
            )

    async def leave(self, game: str, player: str) -> bool:
        """Take ``player`` out of line; False if they were not in it."""
        with self._storage.guard(f"leave the {game} quick-match line"):
            return bool(await self._storage.redis.hdel(self._keys.match_line(game), player))

    async def waiting(self, game: str) -> list[LineEntry]:
        with self._storage.guard(f"read the {game} quick-match line"):
            found = await self._storage.redis.hgetall(self._keys.match_line(game))
        entries = []
        for value in found.values():
            try:
                entries.append(_decoder.decode(as_bytes(value)))
            except msgspec.DecodeError:
                continue
        return entries

    async def take(self, game: str, players: list[str]) -> set[str]:
        """Take ``players`` out of line; the ones that were still in it."""
        key = self._keys.match_line(game)
        with self._storage.guard(f"take players from the {game} quick-match line"):
            async with self._storage.transaction(key) as pipe:
                for player in players:
                    pipe.hdel(key, player)
                removed = await pipe.execute()
        return {player for player, gone in zip(players, removed, strict=True) if gone}
