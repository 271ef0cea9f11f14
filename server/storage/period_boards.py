"""Weekly and season boards of every game: the daily challenges each player won in a week or
a season, and the total time of those wins (the rule: :mod:`server.competition.periods`).

Key layout, shown with the default prefix ``sr:``, in the game's Cluster slot like every board:

==========================================  ======  ==================================================
key                                         type    holds
==========================================  ======  ==================================================
``sr:lb:{<game>}:weekly:<week>``            zset    player -> score of their wins in the ISO week
                                                    (``2026-W49``)
``sr:lb:{<game>}:season:<season>``          zset    player -> score of their wins in the quarter
                                                    (``2026-Q4``)
==========================================  ======  ==================================================

A board is fed only by :meth:`Leaderboards.daily_result <server.storage.boards.Leaderboards.daily_result>`:
its transaction, which records one result per player, game and day, adds a win to both boards
of the day (:meth:`PeriodBoards.add_win`), so a retried or repeated result never counts twice,
and a held entry counts once a moderator releases it. Each win renews its boards' expiry
(:data:`~server.competition.periods.KEPT_SECONDS`): a week is kept 53 weeks after its latest
win, a season 1,200 days. Players with equal scores are ordered by player id (bytes).

Every method raises :class:`~server.storage.connection.StoreUnavailable` when Redis fails.
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass

from redis.asyncio.client import Pipeline

from server.competition.periods import KEPT_SECONDS, PERIOD_BOARDS, Period, period_of, standing, win_score
from server.storage.connection import Storage, as_text
from server.storage.keys import key_part
from server.storage.ranking import Windows, number_reply


@dataclass(frozen=True, slots=True)
class Standing:
    """One line of a weekly or season board: ``rank`` is 1-based; ``wins`` the daily challenges
    won in the period, ``total_ms`` the sum of their times."""

    rank: int
    player: str
    wins: int
    total_ms: int


class PeriodBoards:
    """The weekly and season boards of every game, in ``store``'s Redis."""

    def __init__(self, store: Storage) -> None:
        self._store = store
        self._windows = Windows(store)

    def add_win(self, pipe: Pipeline, game: str, player: str, day: datetime.date, time_ms: int) -> None:
        """Queue, on the transaction ``pipe``, ``player``'s daily win of ``day`` in ``time_ms``
        on the week's and the season's boards of ``game``, renewing their expiry."""
        increment = win_score(time_ms)
        for board in PERIOD_BOARDS:
            key = self.key(game, period_of(board, day))
            pipe.zincrby(key, increment, key_part(player))
            pipe.expire(key, KEPT_SECONDS[board])

    async def top(self, game: str, period: Period, n: int) -> list[Standing]:
        """The first ``n`` lines of the board of ``period`` (fewer if it has fewer)."""
        key = self.key(game, period)
        if n < 0:
            raise ValueError(f"n must not be negative, not {n}")
        if n == 0:
            return []
        with self._store.guard(f"read the {game} board of {period.name}"):
            scored = await self._store.redis.zrange(key, 0, n - 1, withscores=True)
        return _standings(1, _scored(scored))

    async def around(self, game: str, period: Period, player: str, span: int) -> list[Standing]:
        """The lines of the board of ``period`` from ``span`` above ``player`` to ``span``
        below (cut at the ends); empty if the player is not on it."""
        key = self.key(game, period)
        action = f"read the {game} board of {period.name} around {player}"
        window = await self._windows.around(action, key, player, span)
        return [] if window is None else _standings(*window)

    def key(self, game: str, period: Period) -> str:
        """The key of ``game``'s board of ``period`` (see the module docstring)."""
        return f"{self._store.prefix}lb:{{{key_part(game)}}}:{period.board}:{period.name}"


def _scored(reply: object) -> list[tuple[str, float]]:
    """The (player, score) lines of a ZRANGE ... WITHSCORES reply."""
    if not isinstance(reply, list) or not all(isinstance(pair, tuple | list) and len(pair) == 2 for pair in reply):
        raise TypeError(f"unexpected reply from Redis: {reply!r}")
    return [(as_text(player), number_reply(score)) for player, score in reply]


def _standings(first_rank: int, scored: list[tuple[str, float]]) -> list[Standing]:
    return [
        Standing(first_rank + offset, player, *standing(int(score))) for offset, (player, score) in enumerate(scored)
    ]
