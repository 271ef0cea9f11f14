"""Ranked daily entries held back by the anti-cheat check (:mod:`server.competition.studied`),
next to their board: ``sr:lb:{<game>}:daily:<date>:held``, a hash of player -> :class:`Held`
(JSON), in the board's Cluster slot.

A held entry is on no board and in no statistics: the board's own script refuses to record
a player who has one (:meth:`Leaderboards.record_daily <server.storage.boards.Leaderboards.record_daily>`),
so a retried recording cannot put it back. A moderator's ``admin clear-flag`` releases it
(:meth:`HeldEntries.release`): its statistics are counted, then one script takes the hold off
and records the entry, so it is never both held and shown, nor lost between the two. An
entry refused at machine speed is held for good: :meth:`HeldEntries.release` never shows it.
"""

from __future__ import annotations

import enum
from typing import Final

import msgspec

from server.storage.boards import Leaderboards

# KEYS: entry hash, held hash; ARGV: player, held JSON. 1 if held now, 0 if the player is on
# the board already or held already (holding is idempotent, and never hides a shown entry).
_HOLD: Final = """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 0 end
return redis.call('HSETNX', KEYS[2], ARGV[1], ARGV[2])
"""


class Held(msgspec.Struct, frozen=True):
    """What a held entry would show, as :meth:`Leaderboards.record_daily` takes it, with when
    it was held (Unix ms) and whether it was refused (machine speed: never released)."""

    name: str
    finished: bool
    time_ms: int | None
    moves: int
    home: int
    ordered: int
    held: int
    refused: bool = False


class Released(enum.Enum):
    RELEASED = "released"  # now on the board, and counted in the statistics
    NOT_HELD = "not held"  # nothing held for that player, game and day
    REFUSED = "refused"  # held for good: a machine-speed attempt


class HeldEntries(Leaderboards):
    """The daily boards of a :class:`~server.storage.connection.Storage`, with their held entries."""

    async def hold(self, game: str, date: str, player: str, entry: Held) -> bool:
        """Hold ``player``'s entry of ``game`` and ``date`` back; False if the player is on
        that board already or has an entry held (then nothing changes)."""
        _, entries, _, _, held = self._daily_keys(game, date)
        script = self._store.script(_HOLD)
        action = f"hold {player}'s daily {game} entry of {date}"
        return bool(await script.run(action, [entries, held], [player, msgspec.json.encode(entry)]))

    async def held(self, game: str, date: str, player: str) -> Held | None:
        """``player``'s held entry of ``game`` and ``date``, or None."""
        with self._store.guard(f"read {player}'s held daily {game} entry of {date}"):
            raw = await self._redis.hget(self._daily_keys(game, date)[4], player)
        return None if raw is None else msgspec.json.decode(raw, type=Held)

    async def release(self, game: str, date: str, player: str) -> Released:
        """Put ``player``'s held entry on the board of ``game`` and ``date`` and count it in
        their statistics (those first, as a recording does). Safe to repeat after a failure
        part way: both writes are idempotent, and the hold goes only with the board write."""
        entry = await self.held(game, date, player)
        if entry is None:
            return Released.NOT_HELD
        if entry.refused:
            return Released.REFUSED
        await self.daily_result(game, player, date, entry.finished, entry.time_ms)
        await self.record_daily(
            game,
            date,
            player,
            entry.name,
            entry.finished,
            entry.time_ms,
            entry.moves,
            entry.home,
            entry.ordered,
            release=True,
        )
        return Released.RELEASED
