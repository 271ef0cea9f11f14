"""Moderation records in Redis: the admin action log, anti-cheat flags, players' recent races,
and the channel on which running servers hear of admin actions.

Nothing here is public: no request of the protocol reads it; ``python -m server admin`` does.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass
from typing import Final

import msgspec
from redis import exceptions as redis_errors

from server.storage.connection import Storage, as_text, cancelled_in_flight
from server.storage.keys import Keys

logger = logging.getLogger("server.moderation")

#: Recent races kept per player, and log lines / flags kept at most.
RECENT_RACES: Final = 50
LOG_LINES: Final = 10_000


@dataclass(frozen=True, slots=True)
class AdminAction:
    """One line of the admin log: who (an OS user or ``--as``), when (Unix ms), what, to whom."""

    who: str
    when: int
    action: str
    target: str
    detail: str = ""


class Flag(msgspec.Struct, frozen=True):
    """A suspicion about one ranked daily entry, with its evidence; never acted on by itself."""

    game: str
    date: str
    player: str
    room: str
    race: int
    reasons: list[str]
    #: Milliseconds between consecutive moves, as stored with the log.
    gaps_ms: list[int]
    flagged: int


class ModerationStore:
    """The moderation records of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._keys = Keys(storage.prefix)

    async def log_action(self, action: AdminAction) -> None:
        key = self._keys.admin_log()
        with self._storage.guard("log an admin action"):
            async with self._storage.redis.pipeline(transaction=True) as pipe:
                pipe.lpush(key, json.dumps(asdict(action)))
                pipe.ltrim(key, 0, LOG_LINES - 1)
                await pipe.execute()

    async def actions(self, n: int = 50) -> list[AdminAction]:
        """The ``n`` latest admin actions, newest first."""
        with self._storage.guard("read the admin log"):
            lines = await self._storage.redis.lrange(self._keys.admin_log(), 0, n - 1)
        return [AdminAction(**json.loads(as_text(line))) for line in lines]

    async def flag(self, flag: Flag) -> None:
        key = self._keys.flags()
        with self._storage.guard(f"flag {flag.player}'s daily entry"):
            async with self._storage.redis.pipeline(transaction=True) as pipe:
                pipe.lpush(key, msgspec.json.encode(flag))
                pipe.ltrim(key, 0, LOG_LINES - 1)
                await pipe.execute()

    async def flags(self, n: int = 100) -> list[Flag]:
        """The ``n`` latest flags, newest first."""
        with self._storage.guard("read the flags"):
            lines = await self._storage.redis.lrange(self._keys.flags(), 0, n - 1)
        return [msgspec.json.decode(line, type=Flag) for line in lines]

    async def add_races(self, players: list[str], code: str, race: int) -> None:
        """Remember that each of ``players`` raced race ``race`` of room ``code``, in one
        round trip (each player's list on its own: their keys may be in different Cluster
        slots)."""
        commands: list[tuple[str, ...]] = []
        for player in players:
            key = self._keys.races_of(player)
            commands += [("LPUSH", key, f"{code} {race}"), ("LTRIM", key, "0", str(RECENT_RACES - 1))]
        await self._storage.send_all(f"list the race of {len(players)} player(s)", commands)

    async def races(self, player: str, n: int = 20) -> list[tuple[str, int]]:
        """``player``'s ``n`` latest races as (room code, race number), newest first."""
        with self._storage.guard(f"read {player}'s races"):
            lines = await self._storage.redis.lrange(self._keys.races_of(player), 0, n - 1)
        return [(code, int(race)) for code, race in (as_text(line).split(" ") for line in lines)]

    async def events(self, poll: float = 1.0) -> AsyncIterator[dict[str, str]]:
        """The admin actions announced on the moderation channel, for ever; resubscribes
        after a storage failure (events announced meanwhile are missed: a ban is also
        checked at every hello)."""
        channel = self._keys.moderation()
        while True:
            pubsub = self._storage.redis.pubsub(ignore_subscribe_messages=True)
            try:
                await pubsub.subscribe(channel)
                while True:
                    message = await pubsub.get_message(timeout=poll)
                    if message is not None and message.get("type") == "message":
                        event = json.loads(as_text(message["data"]))
                        if isinstance(event, dict):
                            yield {str(k): str(v) for k, v in event.items()}
            except (redis_errors.RedisError, OSError, ValueError) as error:
                cancelled_in_flight(error)
                logger.warning("moderation channel lost (%s); subscribing again", error)
                await asyncio.sleep(poll)
            finally:
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]  # unannotated before redis-py 8.2
