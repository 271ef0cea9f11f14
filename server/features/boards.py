"""Leaderboards and statistics. Each request's handler passes its pieces of the context to a
function that needs only the boards (:class:`~server.storage.boards_port.BoardsPort`) and
players' names, so the answers can be checked on boards held in memory."""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable

from protocol.errors import ErrorCode
from protocol.messages import AskLeaderboard, AskStats, BoardPeriod, Leaderboard, LeaderboardEntry, PlayerStats
from server.competition.periods import Period, PeriodBoard, parse_period, period_of
from server.connections.link import ClientLink
from server.errors import Refused
from server.features.context import Context, player_of
from server.features.daily import today
from server.storage.boards_port import BoardsPort

#: What a period of each period board is called in a refusal.
_KIND: dict[PeriodBoard, str] = {"weekly": "week", "season": "season"}

#: A player's name by id, None for an unknown player (as :meth:`server.storage.players.PlayerStore.name`).
Names = Callable[[str], Awaitable[str | None]]


async def leaderboard(ctx: Context, link: ClientLink, message: AskLeaderboard) -> None:
    await send_leaderboard(ctx.boards, ctx.players.name, link, message)


async def send_leaderboard(boards: BoardsPort, names: Names, link: ClientLink, message: AskLeaderboard) -> None:
    """Send ``link``'s player the board ``message`` asks for, with their own line as ``me``
    when it is among the entries shown."""
    player, variant = player_of(link), message.variant
    span = message.limit // 2
    date = shown = None
    entries: list[LeaderboardEntry]
    if message.board == "weekly" or message.board == "season":
        period = _period(message.board, message.period)
        standings = (
            await boards.periods.around(variant, period, player, span)
            if message.around
            else await boards.periods.top(variant, period, message.limit)
        )
        entries = [
            LeaderboardEntry(
                rank=e.rank, player=e.player, name=await _name(names, e.player), value=e.wins, total_time_ms=e.total_ms
            )
            for e in standings
        ]
        shown = _shown(period)
    elif message.board == "daily":
        date = message.date or today()
        try:
            datetime.date.fromisoformat(date)
        except ValueError:
            raise Refused(ErrorCode.INVALID_MESSAGE, f"{date} is not a day") from None
        daily = (
            await boards.around(variant, date, player, span)
            if message.around
            else await boards.top(variant, date, message.limit)
        )
        entries = [
            LeaderboardEntry(
                rank=e.rank,
                player=e.player,
                name=e.name,
                value=e.time_ms if e.time_ms is not None else e.home,
                finished=e.finished,
                moves=e.moves,
                home=e.home,
            )
            for e in daily
        ]
    elif message.board == "rating":
        rated = (
            await boards.around_ratings(variant, player, span)
            if message.around
            else await boards.top_ratings(variant, message.limit)
        )
        entries = [
            LeaderboardEntry(rank=e.rank, player=e.player, name=await _name(names, e.player), value=e.rating.rating)
            for e in rated
        ]
    else:
        ranked = (
            await boards.around_all_time(variant, message.board, player, span)
            if message.around
            else await boards.top_all_time(variant, message.board, message.limit)
        )
        entries = [
            LeaderboardEntry(rank=e.rank, player=e.player, name=await _name(names, e.player), value=e.value)
            for e in ranked
        ]
    me = next((entry for entry in entries if entry.player == player), None)
    link.send(
        Leaderboard(
            id=message.id, variant=variant, board=message.board, entries=entries, date=date, me=me, period=shown
        )
    )


def _period(board: PeriodBoard, name: str | None) -> Period:
    """The period ``name`` of ``board`` (the current one when None); ``invalid-message`` for a
    name that is no period of that board, as for a daily board's date that is no day."""
    if name is None:
        return period_of(board, today())
    try:
        return parse_period(board, name)
    except ValueError:
        raise Refused(ErrorCode.INVALID_MESSAGE, f"{name} is not a {_KIND[board]}") from None


def _shown(period: Period) -> BoardPeriod:
    before, after = period.previous(), period.next()
    return BoardPeriod(
        name=period.name,
        first_day=period.first_day.isoformat(),
        last_day=period.last_day.isoformat(),
        previous=None if before is None else before.name,
        next=None if after is None else after.name,
    )


async def _name(names: Names, player: str) -> str:
    return await names(player) or "?"


async def stats(ctx: Context, link: ClientLink, message: AskStats) -> None:
    await send_stats(ctx.boards, ctx.players.name, link, message)


async def send_stats(boards: BoardsPort, names: Names, link: ClientLink, message: AskStats) -> None:
    """Send ``link``'s player the statistics and rating of ``message.player`` (their own by default)."""
    player = message.player or player_of(link)
    if not player.isascii() or not player.isalnum():
        raise Refused(ErrorCode.INVALID_MESSAGE, "a player id has only letters and digits")
    figures = await boards.stats(message.variant, player, today())
    rating = await boards.rating(message.variant, player)
    link.send(
        PlayerStats(
            id=message.id,
            variant=message.variant,
            player=player,
            name=await _name(names, player),
            races_started=figures.races_started,
            races_won=figures.races_won,
            races_finished=figures.races_finished,
            daily_attempts=figures.daily_attempts,
            daily_wins=figures.daily_wins,
            best_time_ms=figures.best_time_ms,
            current_streak=figures.current_streak,
            longest_streak=figures.longest_streak,
            rating=rating.rating,
            rating_deviation=rating.rd,
        )
    )
