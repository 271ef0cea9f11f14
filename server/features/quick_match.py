"""Quick match: joining and leaving the line, and forming races from it.

The lines live in Redis (:mod:`server.storage.match_line`), so players waiting on any node
of the service meet; one node at a time (the holder of the matcher lease, see
:mod:`server.app`) forms the races and runs their rooms, answering players on other nodes
through their proxy links.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import get_args

from protocol.errors import ErrorCode
from protocol.messages import Ack, LeaveQueue, QuickMatch, RoomOptions, Variant
from server.competition.matchmaking import MatchQueue
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.features.joining import joined
from server.features.room_limits import check_room_limits
from server.ops.log_limits import LogLimiter
from server.rooms.commands import Join, Presence, SetReady
from server.rooms.errors import RoomError
from server.storage.connection import StoreUnavailable
from server.storage.match_line import LineEntry

logger = logging.getLogger("server.quick")
#: Lines a client's doing (or an outage) can cause, limited: never a flood.
_log = LogLimiter(logger)
_tasks: set[asyncio.Task[None]] = set()  # line departures of dropped connections


async def quick_match(ctx: Context, link: ClientLink, message: QuickMatch) -> None:
    player = player_of(link)
    await check_room_limits(ctx, link)
    rating = await ctx.boards.rating(message.variant, player)
    entry = LineEntry(player, link.name, rating.rating, time.time(), ctx.cluster.id, link.id, message.id, link.bot)
    await ctx.line.join(message.variant, entry)
    ctx.queued[(message.variant, player)] = (link, message.id)
    link.send(Ack(id=message.id))


async def leave_queue(ctx: Context, link: ClientLink, message: LeaveQueue) -> None:
    player = player_of(link)
    ctx.queued.pop((message.variant, player), None)
    if not await ctx.line.leave(message.variant, player):
        raise RoomError(ErrorCode.NOT_IN_QUEUE, f"you are not waiting for a {message.variant} quick match")
    link.send(Ack(id=message.id))


def dropped(ctx: Context, link: ClientLink) -> None:
    """A dropped connection's player leaves every line it waited in."""
    for key, (queued, _) in list(ctx.queued.items()):
        if queued is link:
            del ctx.queued[key]
            task = asyncio.ensure_future(_leave(ctx, *key))
            _tasks.add(task)
            task.add_done_callback(_tasks.discard)


async def _leave(ctx: Context, variant: str, player: str) -> None:
    try:
        await ctx.line.leave(variant, player)
    except StoreUnavailable as error:
        _log.log(logging.WARNING, "line-leave", "%s stays in the %s line after dropping: %s", player, variant, error)


async def match(ctx: Context, now: float | None = None) -> int:
    """Start every quick-match race that can form at ``now`` (wall-clock seconds); return
    how many. Run by one node of the service at a time."""
    now = time.time() if now is None else now
    started = 0
    variant: Variant
    for variant in get_args(Variant):
        started += await form_races(ctx, variant, variant, now)
    return started


async def form_races(ctx: Context, line: str, variant: Variant, now: float, options: RaceOptions | None = None) -> int:
    """Start the races that can form at ``now`` from the players waiting in ``line`` (a
    game's quick-match line, or an arena's), as ``options`` say; how many started."""
    waiting = await ctx.line.waiting(line)
    if len(waiting) < 2:
        return 0
    alive = await ctx.cluster.alive({entry.node for entry in waiting})
    for entry in [entry for entry in waiting if entry.node not in alive]:
        await ctx.line.leave(line, entry.player)  # their server is gone
    waiting = [entry for entry in waiting if entry.node in alive]
    entries = {entry.player: entry for entry in waiting}
    queue = MatchQueue(gather_seconds=ctx.config.quick_match_wait)
    for entry in waiting:
        queue.join(entry.player, entry.name, entry.rating, entry.since)
    started = 0
    for race in queue.form(now):
        taken = await ctx.line.take(line, [w.player for w in race])
        chosen = [entries[w.player] for w in race if w.player in taken]
        await _start_race(ctx, line, variant, chosen, options or RaceOptions())
        started += 1
    return started


@dataclass(frozen=True, slots=True)
class RaceOptions:
    """How a race formed from a line is set up: its deal, spectator delay and arena, and
    what to call once its room is made (an arena notes who races where)."""

    deal: Callable[[Variant, str], Awaitable[str | None]] | None = None
    spectator_delay: float | None = None
    arena: str | None = None
    started: Callable[[list[tuple[str, str]], str], Awaitable[None]] | None = None


def _link_of(ctx: Context, line: str, entry: LineEntry) -> tuple[ClientLink, int] | None:
    """The connection to answer ``entry`` on: its own here, or a proxy of another node's."""
    if entry.node == ctx.cluster.id:
        return ctx.queued.pop((line, entry.player), None)
    return ctx.cluster.proxy(entry.node, entry.link, entry.player, entry.name, entry.bot), entry.request


async def _start_race(ctx: Context, line: str, variant: Variant, race: list[LineEntry], how: RaceOptions) -> None:
    # A player may have dropped while an earlier race of this round was being set up.
    entries = [(entry, found) for entry in race if (found := _link_of(ctx, line, entry)) is not None]
    if len(entries) < 2:
        await ctx.line.put_back(line, [entry for entry, _ in entries])  # back in their old place
        for entry, (link, request_id) in entries:
            if link.relay is None:
                ctx.queued[(line, entry.player)] = (link, request_id)
        return
    first = entries[0][0]
    options = RoomOptions(max_racers=len(entries), spectator_delay=how.spectator_delay)
    next_deal = await how.deal(variant, first.player) if how.deal is not None else None
    runner = await ctx.rooms.create(
        variant, options, first.player, first.name, bot=first.bot, next_deal=next_deal, arena=how.arena
    )
    for entry, _ in entries[1:]:
        await runner.run(Join(entry.player, entry.name, entry.bot))
    # Everyone is ready: a full room of ready racers counts down by itself.
    for entry, _ in entries:
        await runner.run(SetReady(entry.player, True))
    if how.started is not None:
        await how.started([(entry.player, entry.name) for entry, _ in entries], runner.code)
    for entry, (link, request_id) in entries:
        seat = runner.room.seat_of(entry.player)
        if seat is None:
            continue
        runner.audience.follow_as_racer(link, seat)
        link.send(joined(ctx, link, request_id, runner.code, "racer", seat))
        link.send(runner.snapshot_for(link))
        if link.relay is None and link not in ctx.links:  # gone while the room was set up: the grace period starts
            await runner.run(Presence(entry.player, False))
    names = ", ".join(entry.name for entry, _ in entries)
    logger.debug("%s: %s race in room %s for %s", line, variant, runner.code, names)
