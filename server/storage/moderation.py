"""Moderation records in Redis: the admin action log, anti-cheat flags, players' recent races,
and the channel on which running servers hear of admin actions.

Nothing here is public: no request of the protocol reads it; ``python -m server admin`` does.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from dataclasses import asdict, dataclass, fields
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
    """One line of the admin log: who (the name acted under: ``--as``, by default the OS
    user), when (Unix ms), what, to whom, and the OS user and host that really ran the
    tool, whatever ``--as`` said.

    Stored as a JSON object: ``os_user`` and ``host`` were added later, so a line without
    them (written before) reads with both empty, and fields a later version may add are
    ignored.
    """

    who: str
    when: int
    action: str
    target: str
    detail: str = ""
    os_user: str = ""
    host: str = ""

    @classmethod
    def from_json(cls, text: str) -> AdminAction:
        """An action as :meth:`ModerationStore.log_action` stores it, of any version."""
        data = json.loads(text)
        return cls(**{f.name: data[f.name] for f in fields(cls) if f.name in data})


class Flag(msgspec.Struct, frozen=True):
    """A suspicion about one ranked daily entry, with its evidence for a moderator
    (:mod:`server.competition.studied`). One flag per race: the first five fields name it."""

    game: str
    date: str
    player: str
    room: str
    race: int
    reasons: list[str]
    #: Milliseconds between consecutive moves, as stored with the log.
    gaps_ms: list[int]
    flagged: int
    #: The studied-run score (0 to 1) and its parts, by name.
    score: float = 0.0
    parts: dict[str, float] = msgspec.field(default_factory=dict)
    #: What became of the entry: ``flagged`` (held back from the board until a moderator
    #: clears it), ``refused`` (machine speed: never on the board) or ``noted`` (left on the
    #: board: what every flag written before held entries existed did).
    verdict: str = "noted"
    #: From the race's start to the first move, ms (None if unknown).
    first_move_ms: int | None = None


# KEYS: a player's races; ARGV: the race's entry, how many to keep. Listed once: a race
# recorded again (a retry, or another node's) neither repeats nor moves.
_ADD_RACE: Final = """
if redis.call('LPOS', KEYS[1], ARGV[1]) then return 0 end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[2]) - 1)
return 1
"""

# KEYS: flags; ARGV: flag JSON, its head (up to the race: which race it is about), how many
# to keep. Adds the flag unless one of the latest about the same race is there already, so a
# retried recording adds none twice.
_FLAG: Final = """
local head = ARGV[2]
for _, line in ipairs(redis.call('LRANGE', KEYS[1], 0, 99)) do
  if string.sub(line, 1, #head) == head then return 0 end
end
redis.call('LPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], 0, tonumber(ARGV[3]) - 1)
return 1
"""


class ModerationStore:
    """The moderation records of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._keys = Keys(storage.prefix)
        self._add_race = storage.script(_ADD_RACE)
        self._flag = storage.script(_FLAG)

    async def log_action(self, action: AdminAction) -> None:
        key = self._keys.admin_log()
        with self._storage.guard("log an admin action"):
            async with self._storage.transaction(key) as pipe:
                pipe.lpush(key, json.dumps(asdict(action)))
                pipe.ltrim(key, 0, LOG_LINES - 1)
                await pipe.execute()

    async def actions(self, n: int = 50) -> list[AdminAction]:
        """The ``n`` latest admin actions, newest first."""
        with self._storage.guard("read the admin log"):
            lines = await self._storage.redis.lrange(self._keys.admin_log(), 0, n - 1)
        return [AdminAction.from_json(as_text(line)) for line in lines]

    async def flag(self, flag: Flag) -> bool:
        """Add ``flag`` to the flags, newest first; False (and nothing added) if one of the
        latest 100 flags is about the same race already."""
        encoded = msgspec.json.encode(flag)
        head = encoded[: encoded.index(b',"reasons":') + 1]  # the comma: race 1 is no prefix of 12
        action = f"flag {flag.player}'s daily entry"
        return bool(await self._flag.run(action, [self._keys.flags()], [encoded, head, LOG_LINES]))

    async def flags(self, n: int = 100) -> list[Flag]:
        """The ``n`` latest flags, newest first."""
        with self._storage.guard("read the flags"):
            lines = await self._storage.redis.lrange(self._keys.flags(), 0, n - 1)
        return [msgspec.json.decode(line, type=Flag) for line in lines]

    async def add_races(self, players: list[str], code: str, race: int) -> None:
        """Remember that each of ``players`` raced race ``race`` of room ``code``, once
        however often asked (neither repeated nor moved up), each player's list by its own
        script (their keys may be in different Cluster slots), all sent at once."""
        entry = f"{code} {race}"
        action = f"list the race of {len(players)} player(s)"
        await asyncio.gather(
            *(self._add_race.run(action, [self._keys.races_of(p)], [entry, RECENT_RACES]) for p in players)
        )

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
