"""Ghost races: race a recorded run on its deal, at any hour (:mod:`server.rooms.ghost`).

The run comes from a finished race (as a replay names it) or from the best runs kept per
deal (:mod:`server.storage.best_runs`: a player's own, another's, the fastest of a past
daily). The rule that keeps the daily challenge secret holds here too, whichever way the
run is named: a run of today's daily is refused (:func:`check_daily_over`), and so is any
run on today's daily deal, so nobody races the day's deal before their ranked attempt.
"""

from __future__ import annotations

import logging

from protocol.errors import ErrorCode
from protocol.messages import RaceGhost, RoomOptions, Variant
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.features.daily import check_daily_over, today
from server.features.joining import joined
from server.features.replays import finished_race
from server.features.room_limits import check_room_limits, count_creation
from server.features.run_secrecy import check_run_public
from server.games import Deal, GameError
from server.rooms.commands import SetReady
from server.rooms.errors import RoomError
from server.rooms.ghost import GhostRun, ghost_options, run_of
from server.rooms.record import SeatStatus

logger = logging.getLogger("server.ghosts")


async def race_ghost(ctx: Context, link: ClientLink, message: RaceGhost) -> None:
    player = player_of(link)
    variant, options, run = await (_replayed_run(ctx, message) if message.room else _kept_run(ctx, player, message))
    assert options.deal is not None
    await _check_not_todays_deal(ctx, variant, options.deal)
    await check_room_limits(ctx, link)
    await count_creation(ctx, link)
    runner = await ctx.rooms.create(variant, options, player, link.name, bot=link.bot, ghost=run)
    runner.audience.follow_as_racer(link, 0)
    await runner.run(SetReady(player, True))
    link.send(joined(ctx, link, message.id, runner.code, "racer", 0))
    link.send(runner.snapshot_for(link))
    logger.debug("ghost race %s: %s races %s (%s)", runner.code, link.name, run.name, run.source)


async def _replayed_run(ctx: Context, message: RaceGhost) -> tuple[Variant, RoomOptions, GhostRun]:
    """The run of seat ``message.seat`` in a finished race of ``message.room``."""
    assert message.room is not None
    runner = await ctx.room(message.room)
    record = await finished_race(ctx, runner, message.race)
    await check_run_public(ctx, record)
    seat = next((s for s in record.seats if s.seat == message.seat), None)
    if seat is None:
        raise RoomError(ErrorCode.NO_SUCH_SEAT, f"nobody raced in seat {message.seat}")
    assert record.deal is not None  # a finished race keeps its deal, start and end
    assert record.started is not None
    assert record.finished is not None
    entries, times = await ctx.rooms.store.seat_log(runner.code, record.race, seat.seat)
    if len(times) != len(entries):
        raise RoomError(ErrorCode.NO_SUCH_RACE, "that run was stored without its timing: it cannot be raced")
    finished_ms = seat.finished_ms if seat.status is SeatStatus.FINISHED else None
    source = f"{runner.code}/{record.race}/{seat.seat}"
    run = run_of(seat.name, entries, list(times), record.started, record.finished, finished_ms, source)
    return record.variant, ghost_options(record.options, record.deal), run


async def _kept_run(ctx: Context, player: str, message: RaceGhost) -> tuple[Variant, RoomOptions, GhostRun]:
    """A kept best run on the deal ``message`` names (directly, or as a past daily's)."""
    variant = message.variant
    if variant is None or (message.deal is None) == (message.date is None):
        raise RoomError(
            ErrorCode.INVALID_OPTIONS, "name a run by its room and seat, or by a game and one of a deal or a day"
        )
    deal = None if message.deal is None else _deal_text(message.deal)
    if message.date is not None:
        check_daily_over(message.date)
        daily = await ctx.daily.stored(variant, message.date) if ctx.daily is not None else None
        if daily is None:
            raise RoomError(ErrorCode.DAILY_UNAVAILABLE, f"there was no {variant} daily challenge on {message.date}")
        deal = daily.deal
    assert deal is not None
    runs = ctx.runs
    if message.rank is not None:
        best = await runs.ranked(variant, deal, message.rank)
        missing = f"no run on that deal is kept at rank {message.rank}"
    else:
        best = await runs.best(variant, deal, message.player or player)
        missing = "no winning run of that player on that deal is kept"
    if best is None:
        raise RoomError(ErrorCode.NO_SUCH_RACE, missing)
    return variant, best.options, best.run


def _deal_text(text: str) -> str:
    """A deal as the server spells it (``00617`` is deal ``617``); ``invalid-options`` if none."""
    try:
        return str(Deal.parse(text))
    except GameError as error:
        raise RoomError(ErrorCode.INVALID_OPTIONS, str(error)) from None


async def _check_not_todays_deal(ctx: Context, variant: Variant, deal: str) -> None:
    """``daily-secret`` if ``deal`` is today's daily deal of ``variant``: a ghost would show it."""
    daily = await ctx.daily.stored(variant, today()) if ctx.daily is not None else None
    if daily is not None and daily.deal == deal:
        raise RoomError(ErrorCode.DAILY_SECRET, "today's daily deal is raced once, ranked: race its ghosts tomorrow")
