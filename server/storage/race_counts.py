"""A finished race's results in its racers' statistics (:mod:`server.storage.boards` reads
them): races finished and won, and the best time. Counted once per race, whoever records it
and however often (:mod:`server.storage.unrecorded`): a marker in the game's Cluster slot says
the race was counted, set by the same script that counts it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from server.storage.boards import game_key
from server.storage.connection import Storage
from server.storage.keys import key_part

#: Seconds a race is remembered as counted: longer than it may wait to be recorded.
COUNTED_KEPT_S: Final = 2 * 86_400
_TIME_TOP: Final = 10**12 - 1  # the widest time the boards encode

# KEYS: the race's counted marker, the best-time board, then each racer's statistics; ARGV:
# the marker's TTL, then four a racer (player, finished, won, time ms or '').
_COUNT_RACE = """
if not redis.call('SET', KEYS[1], '1', 'NX', 'EX', ARGV[1]) then return 0 end
for i = 3, #KEYS do
  local a = 2 + (i - 3) * 4
  redis.call('HINCRBY', KEYS[i], 'races_finished', ARGV[a + 1])
  redis.call('HINCRBY', KEYS[i], 'races_won', ARGV[a + 2])
  if ARGV[a + 3] ~= '' then redis.call('ZADD', KEYS[2], 'LT', ARGV[a + 3], ARGV[a]) end
end
return 1
"""


@dataclass(frozen=True, slots=True)
class RaceResult:
    """How one racer's race ended: ``finished`` (in ``time_ms``, which then counts for their
    best time) and/or ``won`` (placed first)."""

    player: str
    finished: bool
    won: bool
    time_ms: int | None = None

    def __post_init__(self) -> None:
        if self.finished and (self.time_ms is None or not 0 <= self.time_ms <= _TIME_TOP):
            raise ValueError(f"a finished race needs its time, from 0 to {_TIME_TOP} ms, not {self.time_ms!r}")


class RaceCounts:
    """Counts races' results in the statistics of ``storage``."""

    def __init__(self, storage: Storage) -> None:
        self._storage = storage
        self._count = storage.script(_COUNT_RACE)

    async def count(self, game: str, race: str, results: Sequence[RaceResult]) -> bool:
        """Count the results of race ``race`` (its id: ``<room code>:<race number>``) of
        ``game``, once: False, and nothing changed, if it was counted before."""
        prefix = self._storage.prefix
        keys = [
            game_key(prefix, "stats", key_part(game), "counted", race),
            game_key(prefix, "stats", game, "best-time"),
        ]
        args: list[str | int] = [COUNTED_KEPT_S]
        for result in results:
            keys.append(game_key(prefix, "stats", game, "player", key_part(result.player)))
            time = result.time_ms if result.finished and result.time_ms is not None else ""
            args += [result.player, int(result.finished), int(result.won), time]
        return bool(await self._count.run(f"count the results of {game} race {race}", keys, args))
