"""Rooms: create, join, spectate, leave, the lobby, and the racers' commands."""

from __future__ import annotations

import logging

from protocol.errors import ErrorCode
from protocol.messages import (
    Ack,
    AskHint,
    AskLegalMoves,
    AskSnapshot,
    CreateRoom,
    Hints,
    Joined,
    JoinRoom,
    Leave,
    LegalMoves,
    ListRooms,
    Lobby,
    PlayMove,
    Ready,
    Rematch,
    Resign,
    RoomOptions,
    Spectate,
    Start,
    Undo,
    Variant,
)
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.features.daily import may_watch_daily, watchable_daily_rooms
from server.features.room_limits import check_room_limits, count_creation
from server.rooms import commands
from server.rooms.errors import RoomError
from server.rooms.record import wants_winnable

logger = logging.getLogger("server.rooms")


async def certified_deal(ctx: Context, variant: Variant, options: RoomOptions, player: str) -> str | None:
    """A certified winnable deal for the next race of a "winnable deals only" room (the game's
    default: on for Scorpion, off for Antares), drawn for ``player``, or None: a random deal
    (the room does not want a certified one, or no solver runs: ``--solver-workers 0`` turns
    the pool off, and the room's view then says its deal is not certified). From the solver's
    pool, or from the deals shipped with the server when the pool is empty or the player has
    drawn their share of it: never a wait."""
    if not wants_winnable(variant, options) or ctx.pool is None:
        return None
    return await ctx.pool.take(variant, player)


async def create_room(ctx: Context, link: ClientLink, message: CreateRoom) -> None:
    player = player_of(link)
    await check_room_limits(ctx, link)
    await count_creation(ctx, link)
    options = message.options
    next_deal = await certified_deal(ctx, message.variant, options, player)
    runner = await ctx.rooms.create(message.variant, options, player, link.name, bot=link.bot, next_deal=next_deal)
    runner.audience.follow_as_racer(link, 0)
    logger.debug("room %s created by %s (%s, %d racers)", runner.code, link.name, message.variant, options.max_racers)
    link.send(Joined(id=message.id, room=runner.code, role="racer", seat=0))
    link.send(runner.snapshot_for(link))


async def join(ctx: Context, link: ClientLink, message: JoinRoom) -> None:
    player = player_of(link)
    runner = await ctx.room(message.room)
    if runner.room.seat_of(player) is None:
        await check_room_limits(ctx, link)
    await runner.run(commands.Join(player, link.name, link.bot), link, message.id, ack=False)
    seat = runner.room.seat_of(player)
    assert seat is not None
    # A racer never also spectates their room, from any of their connections.
    spectating = [other for other in runner.audience.spectators if other.player == player]
    for other in spectating:
        runner.audience.unfollow(other)
    runner.audience.follow_as_racer(link, seat)
    link.send(Joined(id=message.id, room=runner.code, role="racer", seat=seat))
    link.send(runner.snapshot_for(link))
    if spectating:
        runner.spectators_changed()


async def spectate(ctx: Context, link: ClientLink, message: Spectate) -> None:
    player = player_of(link)
    runner = await ctx.room(message.room)
    if runner.room.seat_of(player) is not None:
        raise RoomError(ErrorCode.NOT_ALLOWED, "you race in this room, so you cannot spectate it")
    if not await may_watch_daily(ctx, runner.room, player):
        raise RoomError(ErrorCode.NOT_ALLOWED, "watch today's daily attempts after your own ranked attempt")
    runner.audience.follow_as_spectator(link)
    link.send(Joined(id=message.id, room=runner.code, role="spectator"))
    link.send(runner.snapshot_for(link))
    runner.spectators_changed()


async def leave(ctx: Context, link: ClientLink, message: Leave) -> None:
    player = player_of(link)
    runner = await ctx.room(message.room)
    if runner.room.seat_of(player) is None:
        if runner.code not in link.rooms:
            raise RoomError(ErrorCode.NOT_IN_ROOM, f"you are not in room {runner.code}")
        runner.audience.unfollow(link)
        runner.spectators_changed()
        link.send(Ack(id=message.id, room=runner.code, version=runner.room.version))
        return
    await runner.run(commands.Leave(player), link, message.id)
    for other in list(ctx.by_player.get(player, ())):
        runner.audience.unfollow(other)


async def list_rooms(ctx: Context, link: ClientLink, message: ListRooms) -> None:
    summaries = ctx.rooms.public() + await watchable_daily_rooms(ctx, player_of(link))
    summaries += await ctx.cluster.others_lobby()  # every node's rooms, as of its last beat
    link.send(Lobby(id=message.id, rooms=summaries))


async def ready(ctx: Context, link: ClientLink, message: Ready) -> None:
    runner = await ctx.room(message.room)
    await runner.run(commands.SetReady(player_of(link), message.ready), link, message.id)


async def start(ctx: Context, link: ClientLink, message: Start) -> None:
    runner = await ctx.room(message.room)
    await runner.run(commands.Start(player_of(link)), link, message.id)


async def move(ctx: Context, link: ClientLink, message: PlayMove) -> None:
    runner = await ctx.room(message.room)
    await runner.run(commands.Move(player_of(link), message.move), link, message.id)


async def undo(ctx: Context, link: ClientLink, message: Undo) -> None:
    runner = await ctx.room(message.room)
    await runner.run(commands.TakeBack(player_of(link)), link, message.id)


async def resign(ctx: Context, link: ClientLink, message: Resign) -> None:
    runner = await ctx.room(message.room)
    await runner.run(commands.Resign(player_of(link)), link, message.id)


async def rematch(ctx: Context, link: ClientLink, message: Rematch) -> None:
    runner = await ctx.room(message.room)
    record, player = runner.room.record, player_of(link)
    next_deal = await certified_deal(ctx, record.variant, record.options, player) if runner.finished else None
    await runner.run(commands.Rematch(player, next_deal), link, message.id)


async def hint(ctx: Context, link: ClientLink, message: AskHint) -> None:
    """The racer's hints; a winning line is searched for first, in a worker process, where
    one could add a move (server/live/hint_search.py)."""
    runner, player = await ctx.room(message.room), player_of(link)
    searched = runner.room.hint_search(player)
    if searched is not None and ctx.hints is not None:
        line = await ctx.hints.line(runner.code, player, searched)
        if line is not None:
            runner.room.learn_line(player, searched, line)
    link.send(Hints(id=message.id, room=runner.code, hints=runner.room.hints(player)))


async def legal_moves(ctx: Context, link: ClientLink, message: AskLegalMoves) -> None:
    runner = await ctx.room(message.room)
    link.send(LegalMoves(id=message.id, room=runner.code, moves=runner.room.legal_moves(player_of(link))))


async def snapshot(ctx: Context, link: ClientLink, message: AskSnapshot) -> None:
    runner = await ctx.room(message.room)
    if runner.code not in link.rooms:
        raise RoomError(ErrorCode.NOT_IN_ROOM, f"join or spectate room {runner.code} first")
    link.send(runner.snapshot_for(link, message.id))
