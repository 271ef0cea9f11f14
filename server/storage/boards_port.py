"""What the leaderboard and statistics requests read of the boards: :class:`BoardsPort`
(:class:`~server.storage.boards.Leaderboards` on Redis; tests have the boards in memory,
held to Redis's behaviour by a contract test that runs the same cases on both).

The semantics are those of the Redis classes, method by method; every method raises
:class:`~server.storage.connection.StoreUnavailable` when storage fails, and ValueError for
a game, player, date, count or span the Redis classes refuse.
"""

from __future__ import annotations

from typing import Protocol

from server.competition.periods import Period
from server.competition.ratings import Rating
from server.storage.boards import AllTimeBoard, Entry, Ranked, Stats
from server.storage.period_boards import Standing
from server.storage.ratings import RatedEntry


class PeriodBoardsPort(Protocol):
    """The weekly and season boards, as :class:`~server.storage.period_boards.PeriodBoards` reads them."""

    async def top(self, game: str, period: Period, n: int) -> list[Standing]:
        """The first ``n`` lines of the board of ``period``: more wins first, then the lower
        total time, then by player id."""

    async def around(self, game: str, period: Period, player: str, span: int) -> list[Standing]:
        """The lines from ``span`` above ``player`` to ``span`` below (cut at the ends);
        empty if the player is not on the board."""


class BoardsPort(Protocol):
    """The daily, all-time, period and rating boards and the statistics of every game."""

    @property
    def periods(self) -> PeriodBoardsPort: ...

    async def top(self, game: str, date: str, n: int) -> list[Entry]:
        """The first ``n`` entries of the daily board of ``date``."""

    async def around(self, game: str, date: str, player: str, span: int) -> list[Entry]:
        """The daily entries from ``span`` above ``player`` to ``span`` below; empty if the
        player is not on the board."""

    async def top_all_time(self, game: str, board: AllTimeBoard, n: int) -> list[Ranked]:
        """The first ``n`` lines of an all-time board (ties by player id)."""

    async def around_all_time(self, game: str, board: AllTimeBoard, player: str, span: int) -> list[Ranked]:
        """The lines of an all-time board around ``player``; empty if not on it."""

    async def top_ratings(self, game: str, n: int) -> list[RatedEntry]:
        """The ``n`` highest-rated players on the rating board (ties by player id)."""

    async def around_ratings(self, game: str, player: str, span: int) -> list[RatedEntry]:
        """The rating board around ``player``; empty if they are not on it."""

    async def stats(self, game: str, player: str, today: str) -> Stats:
        """``player``'s statistics as of the UTC day ``today`` (zeros for a newcomer)."""

    async def rating(self, game: str, player: str) -> Rating:
        """``player``'s rating; a new player's default if they have none."""
