"""Ratings in Redis: each game's Glicko-2 ratings, updated atomically and once per race.

``sr:rating:{<game>}:player:<id>`` (string: ``"<rating> <rd> <volatility>"``, float reprs
read back exactly), ``sr:rating:{<game>}:board`` (zset: player -> minus
``round(rating * 1000)``) and ``sr:rating:{<game>}:rated:<race>`` (the ratings a race gave,
kept a week) share one hash tag, so a race's update is one script in one Cluster slot.
Each player's rating is a key of its own, so a race's optimistic transaction (read, rate,
store if unchanged) conflicts only with races that share one of its racers, never with every
other race.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Final, cast

import msgspec

from server.competition.ratings import Rating, rate_race
from server.storage.connection import Storage, StoreUnavailable, as_bytes, as_text
from server.storage.keys import key_part
from server.storage.ranking import Windows

#: Seconds a race's rating result is kept, so a retried finish is rated once.
RATED_TTL: Final = 7 * 24 * 3600
_TRIES: Final = 16


def rating_key(prefix: str, game: str) -> str:
    """The prefix of the game's rating keys (its board: ``<this>:board``)."""
    return f"{prefix}rating:{{{game}}}"


def player_keys(prefix: str, game: str, players: Sequence[str]) -> list[str]:
    base = rating_key(prefix, key_part(game))
    return [f"{base}:player:{key_part(player)}" for player in players]


def rating_text(rating: Rating) -> str:
    return f"{rating.rating!r} {rating.rd!r} {rating.volatility!r}"


def parse_rating(text: str) -> Rating:
    rating, rd, volatility = text.split()
    return Rating(float(rating), float(rd), float(volatility))


@dataclass(frozen=True, slots=True)
class RatedEntry:
    """One line of the rating board, with the player's exact rating."""

    rank: int
    player: str
    rating: Rating


class RatingStore:
    """Reads the ratings of a :class:`Storage` (updates: :func:`rate_race_once`)."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._windows = Windows(storage)

    async def rating(self, game: str, player: str) -> Rating:
        """``player``'s rating in ``game``; a new player's default if they have none."""
        return (await self.ratings(game, [player]))[0]

    async def ratings(self, game: str, players: Sequence[str]) -> list[Rating]:
        """The ratings of ``players`` in ``game``, in the same order, read together."""
        keys = player_keys(self._storage.prefix, game, players)
        if not keys:
            return []
        with self._storage.guard(f"read {game} ratings"):
            values = await self._storage.redis.mget(keys)
        return [Rating() if value is None else parse_rating(as_text(value)) for value in values]

    async def set_ratings(self, game: str, ratings: Mapping[str, Rating]) -> None:
        """Store new ratings (e.g. everyone's after a race), all in one transaction."""
        key = rating_key(self._storage.prefix, key_part(game))
        keys = player_keys(self._storage.prefix, game, list(ratings))
        if not keys:
            return
        with self._storage.guard(f"save {game} ratings"):
            async with self._storage.transaction(keys[0]) as pipe:
                for k, r in zip(keys, ratings.values(), strict=True):
                    pipe.set(k, rating_text(r))  # not MSET: a Cluster pipeline refuses it
                pipe.zadd(f"{key}:board", {p: -round(r.rating * 1000) for p, r in ratings.items()})
                await pipe.execute()

    async def show(self, game: str, player: str) -> None:
        """Put ``player``'s rating, if they have one, on the rating board (guests' ratings
        are kept off it: see :func:`rate_race_once`)."""
        key = rating_key(self._storage.prefix, key_part(game))
        with self._storage.guard(f"show {player}'s {game} rating"):
            value = await self._storage.redis.get(player_keys(self._storage.prefix, game, [player])[0])
            if value is not None:
                rating = parse_rating(as_text(value))
                await self._storage.redis.zadd(f"{key}:board", {player: -round(rating.rating * 1000)})

    async def remove(self, game: str, player: str) -> bool:
        """Take ``player`` off the rating board (the rating stays); False if not on it."""
        key = rating_key(self._storage.prefix, key_part(game))
        with self._storage.guard(f"remove {player} from the {game} rating board"):
            return bool(await self._storage.redis.zrem(f"{key}:board", key_part(player)))

    async def top(self, game: str, n: int) -> list[RatedEntry]:
        """The ``n`` highest-rated players of ``game`` (ties by player id)."""
        key = rating_key(self._storage.prefix, key_part(game))
        if n < 0:
            raise ValueError(f"n must not be negative, not {n}")
        if n == 0:
            return []
        with self._storage.guard(f"read the {game} rating board"):
            players = [as_text(m) for m in await self._storage.redis.zrange(f"{key}:board", 0, n - 1)]
            return await self._rated(game, 1, players)

    async def around(self, game: str, player: str, span: int) -> list[RatedEntry]:
        """The rating board from ``span`` above ``player`` to ``span`` below (cut at the ends);
        empty if the player has no rating."""
        key = rating_key(self._storage.prefix, key_part(game))
        action = f"read the {game} rating board around {player}"
        window = await self._windows.around(action, f"{key}:board", player, span)
        if window is None:
            return []
        first, scored = window
        with self._storage.guard(action):
            return await self._rated(game, first, [player for player, _ in scored])

    async def _rated(self, game: str, first_rank: int, players: list[str]) -> list[RatedEntry]:
        if not players:
            return []
        values = await self._storage.redis.mget(player_keys(self._storage.prefix, game, players))
        return [
            RatedEntry(first_rank + offset, player, parse_rating(as_text(value)))
            for offset, (player, value) in enumerate(zip(players, values, strict=True))
            if value is not None
        ]


class _Rated(msgspec.Struct, array_like=True):
    before: list[str]
    after: list[str]


#: KEYS: the race's marker, then the players' keys. The ratings the race gave, if it was
#: rated already: ``{1, marker}``; else the players' ratings now: ``{0, rating or false, ...}``.
_READ_RACE: Final = """
local done = redis.call('GET', KEYS[1])
if done then return {1, done} end
local reply = {0}
for i = 2, #KEYS do reply[i] = redis.call('GET', KEYS[i]) end
return reply
"""

#: KEYS: the race's marker, the board, then the players' keys. ARGV: the marker's value and
#: seconds, then for each player the rating read (empty: none) and the new one, then the
#: board's member and score pairs. Stores the race only if it is not rated yet and no rating
#: changed since it was read (1), else nothing (0): the optimistic transaction of a WATCH,
#: in one round trip.
_STORE_RACE: Final = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
local players = #KEYS - 2
for i = 1, players do
  local now = redis.call('GET', KEYS[i + 2]) or ''
  if now ~= ARGV[2 * i + 1] then return 0 end
end
for i = 1, players do redis.call('SET', KEYS[i + 2], ARGV[2 * i + 2]) end
for i = 2 * players + 3, #ARGV, 2 do redis.call('ZADD', KEYS[2], ARGV[i + 1], ARGV[i]) end
redis.call('SET', KEYS[1], ARGV[1], 'EX', ARGV[2])
return 1
"""


async def rate_race_once(
    storage: Storage,
    game: str,
    race: str,
    players: Sequence[str],
    places: Sequence[int],
    shown: Collection[str] | None = None,
) -> list[tuple[Rating, Rating]]:
    """Rate a finished race of ``players`` (by ``places``, 1 best) in ``game``: their ratings
    before and after, in order. Atomic: the ratings are read, the race rated, and the result
    stored only if none of them changed meanwhile (else read again), so a concurrent race's
    update is never lost. Once per ``race`` id: asked again, it answers what the first call
    stored. Only the players in ``shown`` (accounts; everyone if None) go on the rating board.
    Two script runs (:mod:`server.storage.scripts`) when nobody else rates the same players
    at once."""
    key = rating_key(storage.prefix, key_part(game))
    keys = player_keys(storage.prefix, game, players)
    marker = f"{key}:rated:{race}"
    action = f"rate {game} race {race}"
    read, store = storage.script(_READ_RACE), storage.script(_STORE_RACE)
    for _ in range(_TRIES):
        reply = cast(list[bytes | int | None], await read.run(action, [marker, *keys], []))
        if reply[0] == 1:
            rated = msgspec.msgpack.decode(as_bytes(reply[1]), type=_Rated)
            return [(parse_rating(b), parse_rating(a)) for b, a in zip(rated.before, rated.after, strict=True)]
        values = [None if v is None else as_text(v) for v in reply[1:]]
        before = [Rating() if v is None else parse_rating(v) for v in values]
        after = rate_race(before, list(places))
        record = _Rated([rating_text(r) for r in before], [rating_text(r) for r in after])
        args: list[str | bytes | int] = [msgspec.msgpack.encode(record), RATED_TTL]
        for value, rating in zip(values, after, strict=True):
            args += [value or "", rating_text(rating)]
        for player, rating in zip(players, after, strict=True):
            if shown is None or player in shown:
                args += [player, -round(rating.rating * 1000)]
        if await store.run(action, [marker, f"{key}:board", *keys], args) == 1:
            return list(zip(before, after, strict=True))
    raise StoreUnavailable(f"storage busy: could not rate {game} race {race} after {_TRIES} tries")
