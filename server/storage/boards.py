"""Leaderboards, player statistics and ratings, kept in Redis next to the race server's keys.

Every method raises :class:`~server.storage.connection.StoreUnavailable` when Redis fails.
Games, player ids and dates become parts of keys: games and player ids must be non-empty
without ``:``; dates are UTC days written ``YYYY-MM-DD``. The caller passes every date (the day
of a daily deal, and ``today`` when reading statistics), so the clock stays injectable.

Daily boards: exact order by member bytes
-----------------------------------------
A daily board is a sorted set in which every member has the score 0, so Redis orders the
members by their bytes (memcmp), never by a float. Each member is a fixed-width string of
decimal digits that sorts exactly like the ranking::

    finisher:      0:<time ms, 12 digits>:<moves, 9 digits>:<sequence, 12 digits>:<player>
    non-finisher:  1:<999 - home, 3 digits>:<999 - ordered, 3 digits>:<moves, 9 digits>:<sequence, 12 digits>:<player>

``home`` is the number of cards on the foundations and ``ordered`` the cards in order
(:meth:`server.games.Game.progress`); subtracting them from 999 makes more progress sort
first. The sequence is the board's own counter (INCR), taken when the entry is recorded, so
among otherwise equal entries the one recorded first (who finished first) ranks first; it is
unique on the board, so the player id never decides. Every field is zero-padded to its
width, so comparing two members byte by byte compares ``0`` (finished) before ``1``, then
time, then moves, then sequence (finishers), or home descending, ordered descending, moves,
then sequence (the others). Limits that keep the widths fixed: time below 10^12 ms (31
years), moves below 10^9, home and ordered from 0 to 999, sequence below 10^12 entries.

Next to the set, a hash maps each player to their member (for their rank) and another to
what the board shows (name, finished, time, moves, home, as JSON). One Lua script records
an entry (check, INCR, ZADD, both HSETs): never half an entry, never two for a player, and
none held back (:mod:`server.storage.held`) unless ``release`` takes the hold off first.

Other boards: integer scores
----------------------------
The all-time boards and the rating board are sorted sets with integer scores, which a double
holds exactly (below 2^53); every board is read lowest score first, so "higher is better"
boards store the negated figure: best daily time in ms (lower first), minus the number of
daily wins, minus the longest daily streak in days, minus ``round(rating * 1000)``. Players
with equal scores are ordered by player id (bytes).

Ratings are Glicko-2 (:mod:`server.ratings`): the hash keeps each player's exact rating, RD
and volatility (float reprs, which read back bit for bit); the board only orders them.

Key layout, shown with the default prefix ``sr:``; nothing expires but the weekly and season boards:

===========================================  ======  ====================================================
key                                          type    holds
===========================================  ======  ====================================================
``sr:lb:{<game>}:daily:<date>``                zset    the daily board: members encoded as above, score 0
``sr:lb:{<game>}:daily:<date>:entry``          hash    player -> their member of the board
``sr:lb:{<game>}:daily:<date>:shown``          hash    player -> JSON {name, finished, time_ms, moves, home}
``sr:lb:{<game>}:daily:<date>:seq``            string  the board's sequence counter (INCR)
``sr:lb:{<game>}:daily:<date>:held``           hash    player -> JSON of an entry held back (storage/held.py)
``sr:lb:{<game>}:best-time``                   zset    player -> best finished daily time, ms
``sr:lb:{<game>}:wins``                        zset    player -> minus the number of daily wins
``sr:lb:{<game>}:streak``                      zset    player -> minus the longest daily streak, days
``sr:lb:{<game>}:weekly:<week>``               zset    a weekly board (storage/period_boards.py; expires)
``sr:lb:{<game>}:season:<season>``             zset    a season board (storage/period_boards.py; expires)
``sr:stats:{<game>}:player:<player>``          hash    counters (``races_started``, ``races_won``,
                                                     ``races_finished``, ``daily_attempts``,
                                                     ``daily_wins``) and the streak (``current_streak``,
                                                     ``longest_streak``, ``last_daily_win``: a date)
``sr:stats:{<game>}:player:<player>:days``     hash    date -> ``1`` (finished) or ``0``: every day with a
                                                     recorded daily result
``sr:stats:{<game>}:best-time``                zset    player -> best time of any finished race or daily
                                                     attempt, ms (the statistics' best time)
``sr:stats:{<game>}:counted:<code>:<race>``    string  the race's results are counted (storage/race_counts.py)
``sr:rating:{<game>}:player:<id>``           string  ``"<rating> <rd> <volatility>"`` (storage/ratings.py)
``sr:rating:{<game>}:board``                 zset    player -> minus ``round(rating * 1000)``
===========================================  ======  ====================================================

Streaks: a daily win is a finished daily attempt; a streak is a run of consecutive UTC days
with a win. They are computed from the ``days`` hash, so a result that arrives late (an
attempt finished after the next day's) still joins its run.
"""

from __future__ import annotations

import contextlib
import datetime
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import msgspec
from redis import exceptions as redis_errors

from server.competition.daily import check_date
from server.competition.ratings import Rating
from server.storage.connection import Storage, as_bytes, as_text
from server.storage.period_boards import PeriodBoards
from server.storage.ranking import Windows, integer_reply, number_reply
from server.storage.ratings import RatedEntry, RatingStore

AllTimeBoard = Literal["best-time", "wins", "streak"]
"""The all-time boards of a game: best daily time, most daily wins, longest daily streak."""

ALL_TIME_BOARDS: tuple[AllTimeBoard, ...] = ("best-time", "wins", "streak")

_TIME_WIDTH, _MOVES_WIDTH, _SEQUENCE_WIDTH, _PROGRESS_WIDTH = 12, 9, 12, 3
_PROGRESS_TOP = 10**_PROGRESS_WIDTH - 1

# How often a daily result is retried when another write to the same player's days hash
# slipped in between its read and its write (WATCH); only that player's own concurrent
# results can cause it, so a few tries always suffice in practice.
_WATCH_TRIES = 8

# KEYS: board, entry, shown, sequence, held; ARGV: player, member head, shown JSON, "1" to
# release a held entry. The member: head, zero-padded sequence, ":", player (see the docstring).
_RECORD_DAILY = f"""
if ARGV[4] == '1' then redis.call('HDEL', KEYS[5], ARGV[1]) end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) + redis.call('HEXISTS', KEYS[5], ARGV[1]) > 0 then return 0 end
local sequence = redis.call('INCR', KEYS[4])
local member = ARGV[2] .. string.format('%0{_SEQUENCE_WIDTH}d', sequence) .. ':' .. ARGV[1]
redis.call('ZADD', KEYS[1], 0, member)
redis.call('HSET', KEYS[2], ARGV[1], member)
redis.call('HSET', KEYS[3], ARGV[1], ARGV[3])
return 1
"""


@dataclass(frozen=True, slots=True)
class Entry:
    """One line of a daily board. ``rank`` is 1-based; ``time_ms`` is None for a non-finisher."""

    rank: int
    player: str
    name: str
    finished: bool
    time_ms: int | None
    moves: int
    home: int


@dataclass(frozen=True, slots=True)
class Ranked:
    """One line of an all-time board: ``value`` is the time in ms, the wins or the streak in days."""

    rank: int
    player: str
    value: int


@dataclass(frozen=True, slots=True)
class Stats:
    """A player's statistics in one game (all zero / None for a player who never played it).

    ``best_time_ms`` is the best time of any finished race or daily attempt.
    ``current_streak`` counts the run of daily wins ending with ``last_daily_win``, and is 0
    when that day is older than yesterday (as of the ``today`` given to :meth:`Leaderboards.stats`).
    """

    races_started: int = 0
    races_won: int = 0
    races_finished: int = 0
    daily_attempts: int = 0
    daily_wins: int = 0
    best_time_ms: int | None = None
    current_streak: int = 0
    longest_streak: int = 0
    last_daily_win: str | None = None


class _Shown(msgspec.Struct, frozen=True):
    """What a daily board shows of an entry (the ``shown`` hash), beside its rank."""

    name: str
    finished: bool
    time_ms: int | None
    moves: int
    home: int


_COUNTERS = ("races_started", "races_won", "races_finished", "daily_attempts", "daily_wins")


class Leaderboards:
    """Daily and all-time boards, statistics and ratings of every game, in ``store``'s Redis."""

    def __init__(self, store: Storage) -> None:
        self._store = store
        self._redis = store.redis
        self._record_daily = store.script(_RECORD_DAILY)
        self._windows = Windows(store)
        self._ratings = RatingStore(store)
        self.periods = PeriodBoards(store)

    # -- daily boards ------------------------------------------------------------------

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
        """Put ``player``'s ranked attempt on the daily board of ``game`` and ``date``.

        ``time_ms`` is the finishing time (required when ``finished``; ignored otherwise),
        ``moves`` the moves played, ``home``/``ordered`` the progress. One entry per player
        and board: False, and the board unchanged, if the player has one (or one held back).
        """
        keys = self._daily_keys(game, date)
        _check_part("player id", player)
        played = _digits("moves", moves, _MOVES_WIDTH)
        left = _digits("home", home, _PROGRESS_WIDTH, inverted=True)
        unordered = _digits("ordered", ordered, _PROGRESS_WIDTH, inverted=True)
        if finished:
            head = f"0:{_digits('time_ms', _required_time(time_ms), _TIME_WIDTH)}:{played}:"
        else:
            time_ms = None
            head = f"1:{left}:{unordered}:{played}:"
        shown = msgspec.json.encode(_Shown(name, finished, time_ms, moves, home))
        action = f"record {player}'s daily {game} attempt of {date}"
        return bool(await self._record_daily.run(action, keys, [player, head, shown, int(release)]))

    async def top(self, game: str, date: str, n: int) -> list[Entry]:
        """The first ``n`` entries of the daily board (fewer if it has fewer)."""
        board, _, shown, *_ = self._daily_keys(game, date)
        if n < 0:
            raise ValueError(f"n must not be negative, not {n}")
        if n == 0:
            return []
        with self._unavailable(f"read the daily {game} board of {date}"):
            members = await self._redis.zrange(board, 0, n - 1)
            return await self._entries(shown, 1, [as_text(m) for m in members])

    async def rank(self, game: str, date: str, player: str) -> int | None:
        """``player``'s 1-based rank on the daily board, or None if they are not on it."""
        board, entry, *_ = self._daily_keys(game, date)
        with self._unavailable(f"read {player}'s rank on the daily {game} board of {date}"):
            member = await self._redis.hget(entry, player)
            if member is None:
                return None
            position = await self._redis.zrank(board, member)
        return None if position is None else integer_reply(position) + 1

    async def around(self, game: str, date: str, player: str, span: int) -> list[Entry]:
        """The entries ranked from ``span`` above ``player`` to ``span`` below (their own
        included; cut at the ends of the board); empty if the player is not on the board."""
        board, entry, shown, *_ = self._daily_keys(game, date)
        if span < 0:
            raise ValueError(f"span must not be negative, not {span}")
        with self._unavailable(f"read the daily {game} board of {date} around {player}"):
            member = await self._redis.hget(entry, player)
            if member is None:
                return []
            # Members never change once written, so the rank and both neighbourhoods are read
            # in one transaction around the player's member: a consistent window.
            async with self._store.transaction(board) as pipe:
                pipe.zrank(board, member)
                pipe.zrevrangebylex(board, b"(" + as_bytes(member), b"-", start=0, num=span)
                pipe.zrangebylex(board, b"[" + as_bytes(member), b"+", start=0, num=span + 1)
                position, above, below = await pipe.execute()
            if position is None:
                return []
            members = [as_text(m) for m in [*reversed(above), *below]]
            return await self._entries(shown, integer_reply(position) + 1 - len(above), members)

    async def _entries(self, shown: str, first_rank: int, members: list[str]) -> list[Entry]:
        """The entries for consecutive board members starting at ``first_rank``."""
        if not members:
            return []
        players = [_player_of(member) for member in members]
        infos = await self._redis.hmget(shown, players)
        entries = []
        for offset, (player, info) in enumerate(zip(players, infos, strict=True)):
            if info is None:  # cannot happen: the script writes both; skip rather than fail a read
                continue
            s = msgspec.json.decode(info, type=_Shown)
            entries.append(Entry(first_rank + offset, player, s.name, s.finished, s.time_ms, s.moves, s.home))
        return entries

    def _daily_keys(self, game: str, date: str) -> list[str]:
        board = self._key("lb", _check_part("game", game), "daily", check_date(date))
        return [board, f"{board}:entry", f"{board}:shown", f"{board}:seq", f"{board}:held"]

    # -- statistics and all-time boards ---------------------------------------------------

    async def races_started(self, game: str, players: list[str]) -> None:
        """Count a race each of ``players`` started in ``game`` (one round trip, no transaction)."""
        commands = [("HINCRBY", self._stats_key(game, player), "races_started", 1) for player in players]
        await self._store.send_all(f"count a {game} race of {len(players)} player(s)", commands)

    async def daily_result(self, game: str, player: str, date: str, finished: bool, time_ms: int | None) -> bool:
        """Count ``player``'s ranked daily attempt of ``date``: attempts, wins (a finished
        attempt), best time, streaks, the all-time boards (best daily time, wins, streak) and,
        for a win, the weekly and season boards of ``date``'s week and quarter.

        One result per player, game and day: False, and nothing changed, if ``date`` already
        has one (a retried or repeated call).
        """
        stats = self._stats_key(game, player)
        days = f"{stats}:days"
        day = check_date(date)
        if finished:
            _digits("time_ms", _required_time(time_ms), _TIME_WIDTH)
        action = f"record {player}'s daily {game} result of {date}"
        with self._unavailable(action):
            for _ in range(_WATCH_TRIES):
                async with self._store.transaction(days) as pipe:
                    try:
                        # Watching the days hash makes the streaks (computed from all the
                        # days) and the one-result-per-day check exact under concurrent calls.
                        await pipe.watch(days)
                        recorded = await pipe.hgetall(days)
                        if day in {as_text(k) for k in recorded}:
                            return False
                        wins = [_day(as_text(k)) for k, v in recorded.items() if as_text(v) == "1"]
                        if finished:
                            wins.append(datetime.date.fromisoformat(day))
                        last, current, longest = _streaks(wins)
                        pipe.multi()  # type: ignore[no-untyped-call]  # redis-py leaves it unannotated
                        pipe.hset(days, day, "1" if finished else "0")
                        pipe.hincrby(stats, "daily_attempts", 1)
                        if finished:
                            time = _required_time(time_ms)
                            pipe.hincrby(stats, "daily_wins", 1)
                            pipe.hset(
                                stats,
                                mapping={
                                    "current_streak": current,
                                    "longest_streak": longest,
                                    "last_daily_win": "" if last is None else last.isoformat(),
                                },
                            )
                            pipe.zadd(self._key("stats", game, "best-time"), {player: time}, lt=True)
                            pipe.zadd(self._board_key(game, "best-time"), {player: time}, lt=True)
                            pipe.zincrby(self._board_key(game, "wins"), -1, player)
                            pipe.zadd(self._board_key(game, "streak"), {player: -longest}, lt=True)
                            self.periods.add_win(pipe, game, player, _day(day), time)
                        await pipe.execute()
                        return True
                    except redis_errors.WatchError:
                        continue
            raise redis_errors.WatchError(f"the days of {player} kept changing")

    async def stats(self, game: str, player: str, today: str) -> Stats:
        """``player``'s statistics in ``game`` as of the UTC day ``today``."""
        stats = self._stats_key(game, player)
        now = datetime.date.fromisoformat(check_date(today))
        with self._unavailable(f"read {player}'s {game} statistics"):
            async with self._store.transaction(stats) as pipe:
                pipe.hgetall(stats)
                pipe.zscore(self._key("stats", game, "best-time"), player)
                fields, best = await pipe.execute()
        values = {as_text(k): as_text(v) for k, v in fields.items()}
        counters = {name: int(values.get(name, 0)) for name in _COUNTERS}
        last = values.get("last_daily_win") or None
        current = int(values.get("current_streak", 0))
        if last is not None and _day(last) < now - datetime.timedelta(days=1):
            current = 0  # the run ended: yesterday went by without a win
        return Stats(
            **counters,
            best_time_ms=None if best is None else int(best),
            current_streak=current,
            longest_streak=int(values.get("longest_streak", 0)),
            last_daily_win=last,
        )

    async def top_all_time(self, game: str, board: AllTimeBoard, n: int) -> list[Ranked]:
        """The first ``n`` of an all-time board: ``"best-time"`` (best daily time, lowest
        first), ``"wins"`` (most daily wins) or ``"streak"`` (longest daily streak)."""
        key = self._board_key(game, board)
        if n < 0:
            raise ValueError(f"n must not be negative, not {n}")
        if n == 0:
            return []
        with self._unavailable(f"read the all-time {board} board of {game}"):
            scored = await self._redis.zrange(key, 0, n - 1, withscores=True)
        return _ranked(board, 1, [(as_text(member), number_reply(score)) for member, score in _pairs(scored)])

    async def around_all_time(self, game: str, board: AllTimeBoard, player: str, span: int) -> list[Ranked]:
        """The lines of an all-time board from ``span`` above ``player`` to ``span`` below
        (cut at the ends); empty if the player is not on it."""
        key = self._board_key(game, board)
        action = f"read the all-time {board} board of {game} around {player}"
        window = await self._windows.around(action, key, player, span)
        return [] if window is None else _ranked(board, *window)

    def _board_key(self, game: str, board: AllTimeBoard) -> str:
        if board not in ALL_TIME_BOARDS:
            raise ValueError(f"the all-time boards are {', '.join(ALL_TIME_BOARDS)}, not {board!r}")
        return self._key("lb", _check_part("game", game), board)

    def _stats_key(self, game: str, player: str) -> str:
        return self._key("stats", _check_part("game", game), "player", _check_part("player id", player))

    # -- ratings (read; updates are storage.ratings.rate_race_once) ---------------------

    async def rating(self, game: str, player: str) -> Rating:
        """``player``'s rating in ``game``; a new player's default if they have none."""
        return await self._ratings.rating(game, player)

    async def ratings(self, game: str, players: Sequence[str]) -> list[Rating]:
        return await self._ratings.ratings(game, players)

    async def set_ratings(self, game: str, ratings: Mapping[str, Rating]) -> None:
        await self._ratings.set_ratings(game, ratings)

    async def show_rating(self, game: str, player: str) -> None:
        """Put ``player``'s rating on the rating board (an account's is shown, a guest's not)."""
        await self._ratings.show(game, player)

    async def top_ratings(self, game: str, n: int) -> list[RatedEntry]:
        return await self._ratings.top(game, n)

    async def around_ratings(self, game: str, player: str, span: int) -> list[RatedEntry]:
        return await self._ratings.around(game, player, span)

    def _key(self, kind: str, game: str, *parts: str) -> str:
        return game_key(self._store.prefix, kind, game, *parts)

    def _unavailable(self, action: str) -> contextlib.AbstractContextManager[None]:
        return self._store.guard(action)


def game_key(prefix: str, kind: str, game: str, *parts: str) -> str:
    """The key of one of ``game``'s boards or statistics (``kind``: ``lb``, ``stats``...)."""
    # Every board and statistic of a game shares the hash tag {<game>}: a result's
    # transaction (the player's statistics and the game's boards) stays in one Cluster slot.
    return prefix + ":".join((kind, f"{{{game}}}", *parts))


def _ranked(board: AllTimeBoard, first_rank: int, scored: Iterable[tuple[str, float]]) -> list[Ranked]:
    # Boards where more is better store the negated figure (see the module docstring).
    sign = 1 if board == "best-time" else -1
    return [Ranked(first_rank + offset, player, sign * int(score)) for offset, (player, score) in enumerate(scored)]


def _streaks(wins: Iterable[datetime.date]) -> tuple[datetime.date | None, int, int]:
    """The last win day, the length of the run of consecutive days ending with it, and the
    longest run, of these win days (repeats count once)."""
    last: datetime.date | None = None
    run = longest = 0
    for day in sorted(set(wins)):
        run = run + 1 if last is not None and day - last == datetime.timedelta(days=1) else 1
        longest = max(longest, run)
        last = day
    return last, run, longest


def _player_of(member: str) -> str:
    """The player id at the end of a daily board member (see the module docstring)."""
    fields = 4 if member.startswith("0:") else 5
    return member.split(":", fields)[fields]


def _digits(what: str, value: int, width: int, inverted: bool = False) -> str:
    """``value`` zero-padded to ``width`` digits (or its complement to 10^width - 1)."""
    top = 10**width - 1
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= top:
        raise ValueError(f"{what} must be an integer from 0 to {top}, not {value!r}")
    return str(top - value if inverted else value).zfill(width)


def _required_time(time_ms: int | None) -> int:
    if time_ms is None:
        raise ValueError("a finished game needs its time")
    return time_ms


def _check_part(what: str, text: str) -> str:
    """``text`` as one component of a key: a ``:`` in it could make two keys collide."""
    if not text or ":" in text:
        raise ValueError(f"a {what} must be non-empty and contain no ':', not {text!r}")
    return text


def _pairs(reply: object) -> list[tuple[object, object]]:
    """The (member, score) pairs of a ZRANGE ... WITHSCORES reply."""
    if not isinstance(reply, list) or not all(isinstance(pair, tuple | list) and len(pair) == 2 for pair in reply):
        raise TypeError(f"unexpected reply from Redis: {reply!r}")
    return [(member, score) for member, score in reply]


def _day(text: str) -> datetime.date:
    return datetime.date.fromisoformat(check_date(text))
