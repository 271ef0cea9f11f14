"""Windows of a scored board: the entries around a player, read in one script (every board shares it)."""

from __future__ import annotations

from server.storage.connection import Storage, as_list, as_text
from server.storage.keys import key_part

# KEYS: a scored board; ARGV: player, span. The player's 0-based rank and the entries from
# span above to span below them (member, score, ...), read together; nil if not on the board.
AROUND_SCRIPT = """
local rank = redis.call('ZRANK', KEYS[1], ARGV[1])
if not rank then return false end
local first = math.max(0, rank - tonumber(ARGV[2]))
return {first, redis.call('ZRANGE', KEYS[1], first, rank + tonumber(ARGV[2]), 'WITHSCORES')}
"""


class Windows:
    """Reads windows of the sorted sets of a :class:`Storage`."""

    def __init__(self, storage: Storage) -> None:
        self._around = storage.script(AROUND_SCRIPT)

    async def around(self, action: str, key: str, player: str, span: int) -> tuple[int, list[tuple[str, float]]] | None:
        """The 1-based rank of the first line and the (member, score) lines around ``player``;
        raises :class:`StoreUnavailable` saying ``action`` failed if Redis fails."""
        key_part(player)
        if span < 0:
            raise ValueError(f"span must not be negative, not {span}")
        reply = await self._around.run(action, [key], [player, span])
        if reply is None:
            return None
        first, lines = as_list(reply)
        flat = as_list(lines)
        return integer_reply(first) + 1, [(as_text(flat[i]), number_reply(flat[i + 1])) for i in range(0, len(flat), 2)]


def integer_reply(reply: object) -> int:
    if isinstance(reply, bool) or not isinstance(reply, int | bytes | str):
        raise TypeError(f"unexpected reply from Redis: {reply!r}")
    return int(reply)


def number_reply(reply: object) -> float:
    if isinstance(reply, bool) or not isinstance(reply, int | float | bytes | str):
        raise TypeError(f"unexpected reply from Redis: {reply!r}")
    return float(reply)
