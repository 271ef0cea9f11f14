"""Moderators' edits of the boards (``python -m server admin``): removing an entry, so the
others re-rank exactly, and showing a new name on the daily boards already written.

Ranks are never stored: a daily board's rank is the member's ZRANK and an all-time or rating
board's the player's, so taking a member out closes the gap for everyone below it.
"""

from __future__ import annotations

from typing import Final

import msgspec

from server.storage.boards import ALL_TIME_BOARDS, Leaderboards

# KEYS: board, entry hash, shown hash; ARGV: player. 1 if the player had an entry.
_REMOVE_DAILY: Final = """
local member = redis.call('HGET', KEYS[2], ARGV[1])
if not member then return 0 end
redis.call('ZREM', KEYS[1], member)
redis.call('HDEL', KEYS[2], ARGV[1])
redis.call('HDEL', KEYS[3], ARGV[1])
return 1
"""


class BoardEdits(Leaderboards):
    """The boards of a :class:`~server.storage.connection.Storage`, with the moderators' edits."""

    async def remove_entry(self, game: str, board: str, player: str, date: str | None = None) -> bool:
        """Take ``player`` off a board (``daily`` of ``date``, an all-time board, or
        ``rating``); False if they were not on it. Their statistics stay."""
        if board == "rating":
            return await self._ratings.remove(game, player)
        action = f"remove {player} from the {board} board of {game}"
        if board == "daily":
            if date is None:
                raise ValueError("a daily board needs its date")
            script = self._store.script(_REMOVE_DAILY)
            return bool(await script.run(action, self._daily_keys(game, date)[:3], [player]))
        with self._store.guard(action):
            if board not in ALL_TIME_BOARDS:
                raise ValueError(f"no board {board!r}")
            return bool(await self._redis.zrem(self._board_key(game, board), player))

    async def rename_daily(self, player: str, name: str) -> int:
        """Show ``name`` for ``player`` on every daily board they are on (a SCAN); how many."""
        changed = 0
        with self._store.guard(f"rename {player} on the daily boards"):
            async for key in self._redis.scan_iter(match=self._key("lb", "*", "daily", "*", "shown"), count=500):
                info = await self._redis.hget(key, player)
                if info is not None:
                    shown = msgspec.json.decode(info)
                    shown["name"] = name
                    await self._redis.hset(key, player, msgspec.json.encode(shown))
                    changed += 1
        return changed
