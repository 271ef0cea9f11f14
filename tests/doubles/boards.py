"""Boards in memory (:class:`server.storage.boards_port.BoardsPort`), for unit tests of what
answers leaderboard and statistics requests: the semantics of
:class:`~server.storage.boards.Leaderboards` on Redis (its daily, all-time, period and rating
boards, statistics and streaks), held to them by tests/storage/test_boards_contract.py. Besides
the port it records as the Redis class does (:meth:`MemoryBoards.record_daily`,
:meth:`~MemoryBoards.races_started`, :meth:`~MemoryBoards.daily_result`,
:meth:`~MemoryBoards.set_ratings`), so a test fills it as the server would. It fails on
demand: an outage (:meth:`MemoryBoards.go_down`) fails every operation, doing nothing."""

from __future__ import annotations

import asyncio
import datetime
from collections.abc import Mapping
from dataclasses import dataclass

from server.competition.daily import check_date
from server.competition.periods import PERIOD_BOARDS, Period, period_of, standing, win_score
from server.competition.ratings import Rating
from server.storage.boards import (
    _COUNTERS,
    _MOVES_WIDTH,
    _PROGRESS_TOP,
    _PROGRESS_WIDTH,
    _TIME_WIDTH,
    ALL_TIME_BOARDS,
    AllTimeBoard,
    Entry,
    Ranked,
    Stats,
    _check_part,
    _digits,
    _required_time,
    _streaks,
)
from server.storage.connection import StoreUnavailable
from server.storage.keys import key_part
from server.storage.period_boards import Standing
from server.storage.ratings import RatedEntry

#: A scored board: player -> integer score, read lowest first, then by player id.
Scores = dict[str, int]


class _Outage:
    """Whether storage is down, shared by the boards and their period boards."""

    def __init__(self) -> None:
        self.why: str | None = None

    async def answer(self, action: str) -> None:
        await asyncio.sleep(0)  # never answered within the caller's turn, as over a socket
        if self.why is not None:
            raise StoreUnavailable(f"storage unavailable: cannot {action}: {self.why}")


@dataclass(frozen=True, slots=True)
class _Daily:
    """One entry of a daily board, with what it ranks by."""

    order: tuple[int, ...]
    player: str
    name: str
    finished: bool
    time_ms: int | None
    moves: int
    home: int


class MemoryPeriodBoards:
    """The weekly and season boards (:class:`~server.storage.period_boards.PeriodBoards`);
    they never expire here (Redis keeps a board a year or more after its latest win)."""

    def __init__(self, outage: _Outage) -> None:
        self._outage = outage
        self._boards: dict[tuple[str, str, str], Scores] = {}

    def add_win(self, game: str, player: str, day: datetime.date, time_ms: int) -> None:
        increment = win_score(time_ms)
        for board in PERIOD_BOARDS:
            scores = self._board(game, period_of(board, day))
            scores[key_part(player)] = scores.get(key_part(player), 0) + increment

    async def top(self, game: str, period: Period, n: int) -> list[Standing]:
        scores = self._board(game, period)
        _check_count("n", n)
        if n == 0:
            return []
        await self._outage.answer(f"read the {game} board of {period.name}")
        return _standings(1, _ordered(scores)[:n])

    async def around(self, game: str, period: Period, player: str, span: int) -> list[Standing]:
        scores = self._board(game, period)
        key_part(player)
        _check_count("span", span)
        await self._outage.answer(f"read the {game} board of {period.name} around {player}")
        window = _window(_ordered(scores), player, span)
        return [] if window is None else _standings(*window)

    def _board(self, game: str, period: Period) -> Scores:
        return self._boards.setdefault((key_part(game), period.board, period.name), {})


class MemoryBoards:
    """Every game's boards, statistics and ratings in dicts."""

    def __init__(self) -> None:
        self._outage = _Outage()
        self.periods = MemoryPeriodBoards(self._outage)
        self._daily: dict[tuple[str, str], list[_Daily]] = {}
        self._sequences: dict[tuple[str, str], int] = {}
        self._all_time: dict[tuple[str, AllTimeBoard], Scores] = {}
        self._counters: dict[tuple[str, str], dict[str, int]] = {}
        self._days: dict[tuple[str, str], dict[datetime.date, bool]] = {}
        self._streaks: dict[tuple[str, str], tuple[int, int, str]] = {}  # current, longest, last win
        self._best: dict[str, Scores] = {}  # game -> the statistics' best times
        self._ratings: dict[tuple[str, str], Rating] = {}
        self._rating_board: dict[str, Scores] = {}

    # -- failing on demand ----------------------------------------------------------------

    def go_down(self, why: str = "storage is down") -> None:
        """Every operation raises :class:`StoreUnavailable` (doing nothing) until :meth:`come_back`."""
        self._outage.why = why

    def come_back(self) -> None:
        self._outage.why = None

    # -- daily boards ---------------------------------------------------------------------

    async def record_daily(
        self,
        game: str,
        date: str,
        player: str,
        name: str,
        finished: bool,
        time_ms: int | None,
        moves: int,
        home: int,
        ordered: int,
        release: bool = False,
    ) -> bool:
        """As :meth:`Leaderboards.record_daily <server.storage.boards.Leaderboards.record_daily>`
        (no entry is ever held back here, so ``release`` changes nothing)."""
        board = _daily_key(game, date)
        _check_part("player id", player)
        _digits("moves", moves, _MOVES_WIDTH)
        _digits("home", home, _PROGRESS_WIDTH)
        _digits("ordered", ordered, _PROGRESS_WIDTH)
        if finished:
            time_ms = _required_time(time_ms)
            _digits("time_ms", time_ms, _TIME_WIDTH)
        else:
            time_ms = None
        await self._outage.answer(f"record {player}'s daily {game} attempt of {date}")
        entries = self._daily.setdefault(board, [])
        if any(entry.player == player for entry in entries):
            return False
        sequence = self._sequences[board] = self._sequences.get(board, 0) + 1
        order: tuple[int, ...]
        if time_ms is not None:
            order = (0, time_ms, moves, sequence)
        else:  # more progress first: as the member's 999 - home and 999 - ordered
            order = (1, _PROGRESS_TOP - home, _PROGRESS_TOP - ordered, moves, sequence)
        entries.append(_Daily(order, player, name, finished, time_ms, moves, home))
        entries.sort(key=lambda entry: entry.order)
        return True

    async def top(self, game: str, date: str, n: int) -> list[Entry]:
        board = _daily_key(game, date)
        _check_count("n", n)
        if n == 0:
            return []
        await self._outage.answer(f"read the daily {game} board of {date}")
        return _entries(1, self._daily.get(board, [])[:n])

    async def around(self, game: str, date: str, player: str, span: int) -> list[Entry]:
        board = _daily_key(game, date)
        _check_count("span", span)
        await self._outage.answer(f"read the daily {game} board of {date} around {player}")
        entries = self._daily.get(board, [])
        position = next((k for k, entry in enumerate(entries) if entry.player == player), None)
        if position is None:
            return []
        first = max(0, position - span)
        return _entries(first + 1, entries[first : position + span + 1])

    # -- statistics and all-time boards ---------------------------------------------------

    async def races_started(self, game: str, players: list[str]) -> None:
        keys = [_stats_key(game, player) for player in players]
        await self._outage.answer(f"count a {game} race of {len(players)} player(s)")
        for key in keys:
            counters = self._counters.setdefault(key, {})
            counters["races_started"] = counters.get("races_started", 0) + 1

    async def daily_result(self, game: str, player: str, date: str, finished: bool, time_ms: int | None) -> bool:
        """As :meth:`Leaderboards.daily_result <server.storage.boards.Leaderboards.daily_result>`."""
        key = _stats_key(game, player)
        day = datetime.date.fromisoformat(check_date(date))
        if finished:
            _digits("time_ms", _required_time(time_ms), _TIME_WIDTH)
            key_part(player)  # a win goes on the period boards, whose keys refuse more
        await self._outage.answer(f"record {player}'s daily {game} result of {date}")
        days = self._days.setdefault(key, {})
        if day in days:
            return False
        days[day] = finished
        counters = self._counters.setdefault(key, {})
        counters["daily_attempts"] = counters.get("daily_attempts", 0) + 1
        if finished:
            time = _required_time(time_ms)
            counters["daily_wins"] = counters.get("daily_wins", 0) + 1
            last, current, longest = _streaks(won for won, win in days.items() if win)
            assert last is not None  # this day is a win
            self._streaks[key] = (current, longest, last.isoformat())
            _lower(self._best.setdefault(game, {}), player, time)
            _lower(self._board(game, "best-time"), player, time)
            wins = self._board(game, "wins")
            wins[player] = wins.get(player, 0) - 1
            _lower(self._board(game, "streak"), player, -longest)
            self.periods.add_win(game, player, day, time)
        return True

    async def stats(self, game: str, player: str, today: str) -> Stats:
        key = _stats_key(game, player)
        now = datetime.date.fromisoformat(check_date(today))
        await self._outage.answer(f"read {player}'s {game} statistics")
        counters = self._counters.get(key, {})
        current, longest, last = self._streaks.get(key, (0, 0, ""))
        if last and datetime.date.fromisoformat(last) < now - datetime.timedelta(days=1):
            current = 0  # the run ended: yesterday went by without a win
        return Stats(
            **{name: counters.get(name, 0) for name in _COUNTERS},
            best_time_ms=self._best.get(game, {}).get(player),
            current_streak=current,
            longest_streak=longest,
            last_daily_win=last or None,
        )

    async def top_all_time(self, game: str, board: AllTimeBoard, n: int) -> list[Ranked]:
        scores = self._board(game, board)
        _check_count("n", n)
        if n == 0:
            return []
        await self._outage.answer(f"read the all-time {board} board of {game}")
        return _ranked(board, 1, _ordered(scores)[:n])

    async def around_all_time(self, game: str, board: AllTimeBoard, player: str, span: int) -> list[Ranked]:
        scores = self._board(game, board)
        key_part(player)
        _check_count("span", span)
        await self._outage.answer(f"read the all-time {board} board of {game} around {player}")
        window = _window(_ordered(scores), player, span)
        return [] if window is None else _ranked(board, *window)

    def _board(self, game: str, board: AllTimeBoard) -> Scores:
        if board not in ALL_TIME_BOARDS:
            raise ValueError(f"the all-time boards are {', '.join(ALL_TIME_BOARDS)}, not {board!r}")
        return self._all_time.setdefault((_check_part("game", game), board), {})

    # -- ratings ----------------------------------------------------------------------------

    async def rating(self, game: str, player: str) -> Rating:
        key = (key_part(game), key_part(player))
        await self._outage.answer(f"read {game} ratings")
        return self._ratings.get(key, Rating())

    async def set_ratings(self, game: str, ratings: Mapping[str, Rating]) -> None:
        """Store ratings and show them all on the rating board, as the Redis class does."""
        keys = [(key_part(game), key_part(player)) for player in ratings]
        if not keys:
            return
        await self._outage.answer(f"save {game} ratings")
        board = self._rating_board.setdefault(game, {})
        for key, (player, rating) in zip(keys, ratings.items(), strict=True):
            self._ratings[key] = rating
            board[player] = -round(rating.rating * 1000)

    async def top_ratings(self, game: str, n: int) -> list[RatedEntry]:
        key_part(game)
        _check_count("n", n)
        if n == 0:
            return []
        await self._outage.answer(f"read the {game} rating board")
        return self._rated(game, 1, _ordered(self._rating_board.get(game, {}))[:n])

    async def around_ratings(self, game: str, player: str, span: int) -> list[RatedEntry]:
        key_part(game)
        key_part(player)
        _check_count("span", span)
        await self._outage.answer(f"read the {game} rating board around {player}")
        window = _window(_ordered(self._rating_board.get(game, {})), player, span)
        return [] if window is None else self._rated(game, *window)

    def _rated(self, game: str, first_rank: int, lines: list[tuple[str, int]]) -> list[RatedEntry]:
        return [
            RatedEntry(first_rank + offset, player, self._ratings[game, player])
            for offset, (player, _) in enumerate(lines)
        ]


def _daily_key(game: str, date: str) -> tuple[str, str]:
    return _check_part("game", game), check_date(date)


def _stats_key(game: str, player: str) -> tuple[str, str]:
    return _check_part("game", game), _check_part("player id", player)


def _check_count(what: str, count: int) -> None:
    if count < 0:
        raise ValueError(f"{what} must not be negative, not {count}")


def _lower(scores: Scores, player: str, score: int) -> None:
    """As ZADD LT: add ``player`` at ``score``, or lower theirs to it."""
    scores[player] = min(score, scores.get(player, score))


def _ordered(scores: Scores) -> list[tuple[str, int]]:
    """A scored board's lines as Redis reads a sorted set: lowest score first, then by member."""
    return sorted(scores.items(), key=lambda line: (line[1], line[0].encode()))


def _window(lines: list[tuple[str, int]], player: str, span: int) -> tuple[int, list[tuple[str, int]]] | None:
    """The 1-based rank of the first line and the lines from ``span`` above ``player`` to
    ``span`` below; None if the player has no line."""
    position = next((k for k, (member, _) in enumerate(lines) if member == player), None)
    if position is None:
        return None
    first = max(0, position - span)
    return first + 1, lines[first : position + span + 1]


def _entries(first_rank: int, daily: list[_Daily]) -> list[Entry]:
    return [
        Entry(first_rank + offset, e.player, e.name, e.finished, e.time_ms, e.moves, e.home)
        for offset, e in enumerate(daily)
    ]


def _ranked(board: AllTimeBoard, first_rank: int, lines: list[tuple[str, int]]) -> list[Ranked]:
    sign = 1 if board == "best-time" else -1  # where more is better the score is negated
    return [Ranked(first_rank + offset, player, sign * score) for offset, (player, score) in enumerate(lines)]


def _standings(first_rank: int, lines: list[tuple[str, int]]) -> list[Standing]:
    return [Standing(first_rank + offset, player, *standing(score)) for offset, (player, score) in enumerate(lines)]
