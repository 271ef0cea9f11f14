"""Finished races whose results are not all recorded yet: the ledger that makes a race's
results survive the death of the node that ran it.

A race is noted here before its finishing step is stored, and cleared once everything its
end leaves behind is recorded (:class:`~server.live.recording.RaceRecorder`). A note is due
for another node :data:`DUE_AFTER_MS` after it was noted, last taken, or last put off by its
own node starting an attempt; taking a note pushes it that much later, atomically. So a node
that dies in between leaves the note for another, and the notes of a live node that is
slow to record are seldom taken meanwhile. Every part of recording is idempotent: a race
recorded twice (by its node and another, or retried) counts once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from server.storage.connection import Storage, as_list, as_text
from server.storage.keys import Keys, key_part

#: Ms after a race is noted (or last taken) before another node records it.
DUE_AFTER_MS: Final = 10_000

# KEYS: the ledger; ARGV: now, the new due time, how many. The due notes, each pushed later.
_TAKE = """
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, tonumber(ARGV[3]))
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member) end
return due
"""


@dataclass(frozen=True, slots=True)
class Noted:
    """One finished race noted as not recorded: room ``code``'s race ``race``, noted at
    ``noted`` (Unix ms)."""

    code: str
    race: int
    noted: int

    @property
    def member(self) -> str:
        return f"{self.code} {self.race} {self.noted}"


class UnrecordedRaces:
    """The ledger of unrecorded races in ``storage`` (one sorted set: member -> due time)."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._key = Keys(storage.prefix).unrecorded()
        self._take = storage.script(_TAKE)

    async def note(self, code: str, race: int, now: int) -> Noted:
        """Note room ``code``'s race ``race`` as finishing at ``now``, before it is stored."""
        noted = Noted(key_part(code), race, now)
        action = f"note race {race} of room {code} for recording"
        await self._storage.send_all(action, [("ZADD", self._key, now + DUE_AFTER_MS, noted.member)])
        return noted

    async def put_off(self, noted: Noted, now: int) -> None:
        """``noted``'s race is being recorded by its own node at ``now``: due for another
        node only :data:`DUE_AFTER_MS` later (if it is still noted)."""
        action = f"put off race {noted.race} of room {noted.code}"
        await self._storage.send_all(action, [("ZADD", self._key, "XX", now + DUE_AFTER_MS, noted.member)])

    async def done(self, noted: Noted) -> None:
        """Everything ``noted``'s race leaves behind is recorded."""
        action = f"clear race {noted.race} of room {noted.code} as recorded"
        await self._storage.send_all(action, [("ZREM", self._key, noted.member)])

    async def take_due(self, now: int, n: int) -> list[Noted]:
        """Up to ``n`` notes due at ``now``, each made due again :data:`DUE_AFTER_MS` later
        (cleared by :meth:`done` once recorded)."""
        members = await self._take.run("take the races due for recording", [self._key], [now, now + DUE_AFTER_MS, n])
        taken = []
        for member in as_list(members):
            code, race, noted = as_text(member).split(" ")
            taken.append(Noted(code, int(race), int(noted)))
        return taken

    async def pending(self) -> int:
        """How many races are noted (for operators and tests)."""
        with self._storage.guard("count the races not recorded"):
            return int(await self._storage.redis.zcard(self._key))
