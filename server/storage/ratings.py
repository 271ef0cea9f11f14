"""Ratings in Redis: each game's Glicko-2 ratings, updated atomically and once per race.

``sr:rating:{<game>}`` (hash: player -> ``"<rating> <rd> <volatility>"``, float reprs read
back exactly), ``sr:rating:{<game>}:board`` (zset: player -> minus ``round(rating * 1000)``)
and ``sr:rating:{<game>}:rated:<race>`` (the ratings a race gave, kept a week) share one
hash tag, so a race's update is one transaction in one Cluster slot.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Final

import msgspec
from redis.exceptions import WatchError

from server.competition.ratings import Rating, rate_race
from server.storage.connection import Storage, StoreUnavailable, as_bytes, as_text

#: Seconds a race's rating result is kept, so a retried finish is rated once.
RATED_TTL: Final = 7 * 24 * 3600
_TRIES: Final = 16


def rating_key(prefix: str, game: str) -> str:
    return f"{prefix}rating:{{{game}}}"


def rating_text(rating: Rating) -> str:
    return f"{rating.rating!r} {rating.rd!r} {rating.volatility!r}"


def parse_rating(text: str) -> Rating:
    rating, rd, volatility = text.split()
    return Rating(float(rating), float(rd), float(volatility))


class _Rated(msgspec.Struct, array_like=True):
    before: list[str]
    after: list[str]


async def rate_race_once(
    storage: Storage,
    game: str,
    race: str,
    players: Sequence[str],
    places: Sequence[int],
    shown: Collection[str] | None = None,
) -> list[tuple[Rating, Rating]]:
    """Rate a finished race of ``players`` (by ``places``, 1 best) in ``game``: their ratings
    before and after, in order. Atomic (WATCH): a concurrent race's update is never lost.
    Once per ``race`` id: asked again, it answers what the first call stored. Only the
    players in ``shown`` (accounts; everyone if None) go on the rating board."""
    key = rating_key(storage.prefix, game)
    marker = f"{key}:rated:{race}"
    redis = storage.redis
    with storage.guard(f"rate {game} race {race}"):
        for _ in range(_TRIES):
            async with redis.pipeline(transaction=True) as pipe:
                await pipe.watch(key, marker)
                done = await pipe.get(marker)
                if done is not None:
                    rated = msgspec.msgpack.decode(as_bytes(done), type=_Rated)
                    return [(parse_rating(b), parse_rating(a)) for b, a in zip(rated.before, rated.after, strict=True)]
                values = await pipe.hmget(key, list(players))
                before = [Rating() if v is None else parse_rating(as_text(v)) for v in values]
                after = rate_race(before, list(places))
                pipe.multi()  # type: ignore[no-untyped-call]
                pipe.hset(key, mapping={p: rating_text(r) for p, r in zip(players, after, strict=True)})
                board = {
                    p: -round(r.rating * 1000)
                    for p, r in zip(players, after, strict=True)
                    if shown is None or p in shown
                }
                if board:
                    pipe.zadd(f"{key}:board", board)
                record = _Rated([rating_text(r) for r in before], [rating_text(r) for r in after])
                pipe.set(marker, msgspec.msgpack.encode(record), ex=RATED_TTL)
                try:
                    await pipe.execute()
                except WatchError:
                    continue
                return list(zip(before, after, strict=True))
    raise StoreUnavailable(f"storage busy: could not rate {game} race {race} after {_TRIES} tries")
