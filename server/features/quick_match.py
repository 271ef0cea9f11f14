"""Quick match: joining and leaving the line, and forming races from it."""

from __future__ import annotations

import logging
import time

from protocol.errors import ErrorCode
from protocol.messages import Ack, Joined, LeaveQueue, QuickMatch, RoomOptions, Variant
from server.competition.matchmaking import Waiting
from server.features.context import Context, player_of
from server.features.room_limits import check_room_limits
from server.net.link import ClientLink
from server.rooms.commands import Join, Presence, SetReady
from server.rooms.errors import RoomError

logger = logging.getLogger("server.quick")


async def quick_match(ctx: Context, link: ClientLink, message: QuickMatch) -> None:
    player = player_of(link)
    check_room_limits(ctx, link)
    rating = await ctx.boards.rating(message.variant, player)
    ctx.queues[message.variant].join(player, link.name, rating.rating, time.monotonic())
    ctx.queued[(message.variant, player)] = (link, message.id)
    link.send(Ack(id=message.id))


async def leave_queue(ctx: Context, link: ClientLink, message: LeaveQueue) -> None:
    player = player_of(link)
    if not ctx.queues[message.variant].leave(player):
        raise RoomError(ErrorCode.NOT_IN_QUEUE, f"you are not waiting for a {message.variant} quick match")
    ctx.queued.pop((message.variant, player), None)
    link.send(Ack(id=message.id))


def dropped(ctx: Context, link: ClientLink) -> None:
    """A dropped connection's player leaves every line it waited in."""
    for key, (queued, _) in list(ctx.queued.items()):
        if queued is link:
            ctx.queues[key[0]].leave(key[1])
            del ctx.queued[key]


async def match(ctx: Context, now: float) -> int:
    """Start every quick-match race that can form at ``now`` (monotonic seconds); return how many."""
    started = 0
    for variant, queue in ctx.queues.items():
        for race in queue.form(now):
            await _start_race(ctx, variant, race)  # type: ignore[arg-type]
            started += 1
    return started


async def _start_race(ctx: Context, variant: Variant, race: list[Waiting]) -> None:
    # A player may have dropped while an earlier race of this round was being set up.
    present = [waiting for waiting in race if (variant, waiting.player) in ctx.queued]
    if len(present) < 2:
        for waiting in present:  # back in line, in their old place
            ctx.queues[variant].join(waiting.player, waiting.name, waiting.rating, waiting.since)
        return
    entries = [(waiting, *ctx.queued.pop((variant, waiting.player))) for waiting in present]
    first, first_link, _ = entries[0]
    runner = await ctx.rooms.create(
        variant, RoomOptions(max_racers=len(present)), first.player, first.name, bot=first_link.bot
    )
    for waiting, link, _ in entries[1:]:
        await runner.run(Join(waiting.player, waiting.name, link.bot))
    # Everyone is ready: a full room of ready racers counts down by itself.
    for waiting, _, _ in entries:
        await runner.run(SetReady(waiting.player, True))
    for waiting, link, request_id in entries:
        seat = runner.room.seat_of(waiting.player)
        if seat is None:
            continue
        runner.audience.follow_as_racer(link, seat)
        link.send(Joined(id=request_id, room=runner.code, role="racer", seat=seat))
        link.send(runner.snapshot_for(link))
        if link not in ctx.links:  # gone while the room was set up: the grace period starts
            await runner.run(Presence(waiting.player, False))
    logger.debug("quick match: %s race in room %s for %s", variant, runner.code, ", ".join(w.name for w in present))
