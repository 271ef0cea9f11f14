"""Daily challenges: the day's information, starting an attempt, and who may watch attempts."""

from __future__ import annotations

import logging
from typing import Final

from protocol.errors import ErrorCode
from protocol.messages import (
    AskDaily,
    DailyAccess,
    DailyInfo,
    DailyReveal,
    RoomOptions,
    RoomSummary,
    StartDaily,
    Variant,
)
from server.clock import now_ms
from server.cluster.cluster import DailyAttempt
from server.cluster.lobby import DailyLine
from server.competition.daily import DailyDeal, check_date, day_end_ms, day_start_ms, previous_date, utc_date
from server.connections.link import ClientLink
from server.errors import Refused
from server.features.context import Context, player_of
from server.features.joining import joined
from server.features.room_limits import check_room_limits, count_creation
from server.rooms.commands import SetReady
from server.rooms.errors import RoomError
from server.rooms.lifecycle import State
from server.rooms.room import Room

logger = logging.getLogger("server.daily")


def today() -> str:
    return utc_date(now_ms())


async def _deal(ctx: Context, variant: str, date: str) -> DailyDeal:
    if ctx.daily is None:
        raise RoomError(ErrorCode.DAILY_UNAVAILABLE, "this server offers no daily challenge")
    return await ctx.daily.get(variant, date)


async def daily_info(ctx: Context, link: ClientLink, message: AskDaily) -> None:
    player, date = player_of(link), today()
    deal = await _deal(ctx, message.variant, date)
    yesterday = None
    if ctx.daily is not None:
        before = await ctx.daily.stored(message.variant, previous_date(date))
        if before is not None:
            yesterday = DailyReveal(
                date=before.date,
                deal=before.deal,
                salt=before.salt,
                commitment=before.commitment,
                solution=list(before.solution),
            )
    link.send(
        DailyInfo(
            id=message.id,
            variant=message.variant,
            date=date,
            commitment=deal.commitment,
            par=deal.par,
            attempted=await ctx.players.attempted_daily(message.variant, date, player),
            ends=day_end_ms(date),
            access=await daily_access(ctx, link, message.variant, date),
            yesterday=yesterday,
        )
    )


#: Why ``start_daily`` of today's deal is refused, by :data:`DailyAccess`.
_CLOSED: Final[dict[DailyAccess, str]] = {
    "used": "you have started your one attempt at today's deal: it opens to practice once the day is over",
    "guest": "today's deal is for accounts, once each, ranked: register to play it, or practise an earlier day's",
    "bot": "bots do not play today's deal: it is the players' competition",
    "new-account": "your account is newer than today's deal: it opens for you with tomorrow's",
}


async def daily_access(ctx: Context, link: ClientLink, variant: Variant, date: str) -> DailyAccess:
    """What ``start_daily`` of today's deal does for ``link``'s player (see :data:`DailyAccess`).

    Today's deal is played once per account, ranked, and in no other way until the day is
    over, so that nobody studies it first: not as a guest or a second connection, not by
    saying ``bot``, and not with an account registered once the deal was out (the rule
    against registering accounts to study it on)."""
    if link.bot:
        return "bot"
    if link.generation <= 0:
        return "guest"
    account = await ctx.accounts.get(player_of(link))
    if account is None:
        return "guest"
    if account.created >= day_start_ms(date):
        return "new-account"
    if await ctx.players.attempted_daily(variant, date, player_of(link)):
        return "used"
    return "ranked"


async def start_daily(ctx: Context, link: ClientLink, message: StartDaily) -> None:
    player, date = player_of(link), message.date or today()
    try:
        check_date(date)
    except ValueError:
        raise Refused(ErrorCode.INVALID_MESSAGE, f"{date} is not a day") from None
    await check_room_limits(ctx, link)
    if date > today():
        raise RoomError(ErrorCode.DAILY_UNAVAILABLE, f"the daily challenge of {date} is not out yet")
    if date < today():
        await _practise(ctx, link, message, date)
        return
    deal = await _deal(ctx, message.variant, date)
    access = await daily_access(ctx, link, message.variant, date)
    if access != "ranked":
        raise RoomError(ErrorCode.DAILY_CLOSED, _CLOSED[access])
    # The attempt names its room, so whether it is over is read from the room's stored
    # record by any node (server/cluster/cluster.py), never from the rooms of this process.
    code = await ctx.rooms.reserve_code()
    if not await ctx.players.start_daily_attempt(message.variant, date, player, code):
        raise RoomError(ErrorCode.DAILY_CLOSED, _CLOSED["used"])  # another connection's came first
    await count_creation(ctx, link)
    # Ranked attempts have no hints: everyone races the same deal with the same tools. An
    # attempt ends with its day, when the day's deal and solution are published.
    left = (day_end_ms(date) - now_ms()) // 1000
    options = RoomOptions(max_racers=1, hints=False, time_limit=int(min(max(left, 30), 86_400)))
    await _open_attempt(ctx, link, message, options, deal.deal, deal.salt, date, code, ranked=True)


async def _practise(ctx: Context, link: ClientLink, message: StartDaily, date: str) -> None:
    """An earlier day's deal, as practice: hints, no clock, as often as the room limits allow."""
    if ctx.daily is None:
        raise RoomError(ErrorCode.DAILY_UNAVAILABLE, "this server offers no daily challenge")
    deal = await ctx.daily.stored(message.variant, date)
    if deal is None:
        raise RoomError(ErrorCode.DAILY_UNAVAILABLE, f"there was no {message.variant} daily challenge on {date}")
    await count_creation(ctx, link)
    code = await ctx.rooms.reserve_code()
    await _open_attempt(ctx, link, message, RoomOptions(max_racers=1), deal.deal, deal.salt, date, code, ranked=False)


async def _open_attempt(
    ctx: Context,
    link: ClientLink,
    message: StartDaily,
    options: RoomOptions,
    deal: str,
    salt: str,
    date: str,
    code: str,
    ranked: bool,
) -> None:
    player = player_of(link)
    runner = await ctx.rooms.create(
        message.variant,
        options,
        player,
        link.name,
        bot=link.bot,
        next_deal=deal,
        next_salt=salt,  # the day's commitment, the same for every attempt
        daily=date,
        ranked=ranked,
        code=code,
    )
    runner.audience.follow_as_racer(link, 0)
    await runner.run(SetReady(player, True))
    link.send(joined(ctx, link, message.id, runner.code, "racer", 0))
    link.send(runner.snapshot_for(link))
    kind = "ranked" if ranked else "practice"
    logger.debug("daily %s %s: %s started a %s attempt", message.variant, date, link.name, kind)


def check_daily_over(date: str | None) -> None:
    """Daily attempts replay only once their day is over: the deal is everyone's until then."""
    if date is not None and date >= today():
        raise RoomError(ErrorCode.DAILY_SECRET, "daily attempts can be replayed once the day is over")


async def may_watch_daily(ctx: Context, room: Room, player: str) -> bool:
    """A live daily attempt may be watched by an account that has used its own ranked
    attempt that day; once the day is over, by anyone."""
    date = room.record.daily
    if date is None or date < today():
        return True
    return await used_ranked_attempt(ctx, room.record.variant, date, player)


async def used_ranked_attempt(ctx: Context, variant: Variant, date: str, player: str) -> bool:
    """Whether ``player``'s ranked attempt at ``variant`` on ``date`` is started and over,
    on whichever node it ran: one still playing it would copy the moves they watch. Never
    for a guest (who has no ranked attempt, and could be anyone's second identity)."""
    if not await ctx.accounts.generation(player):
        return False
    return await ctx.cluster.daily_attempt(variant, date, player) is DailyAttempt.OVER


async def watchable_daily_rooms(ctx: Context, player: str, elsewhere: list[DailyLine]) -> list[RoomSummary]:
    """Live daily attempts, this node's and those ``elsewhere`` (the other nodes' shares of the
    lobby), for the lobby of one who may watch them (whose own ranked attempt at that game is over)."""
    date, summaries = today(), []
    # This node's rooms are summarised only once the player may watch them: the lobby is a
    # hot request, and so is storage asked only when there is something to watch.
    here = [
        runner
        for runner in ctx.rooms.runners()
        if runner.room.record.daily == date
        and runner.room.state is State.RACING
        and runner.room.seat_of(player) is None
    ]
    there = [line.room for line in elsewhere if line.date == date and player not in line.players]
    for variant in sorted({runner.room.record.variant for runner in here} | {room.variant for room in there}):
        if await used_ranked_attempt(ctx, variant, date, player):
            summaries += [runner.room.summary() for runner in here if runner.room.record.variant == variant]
            summaries += [room for room in there if room.variant == variant]
    return summaries
