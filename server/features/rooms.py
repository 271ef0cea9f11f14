"""Rooms: create, join, spectate, leave, the lobby, and the racers' commands."""

from __future__ import annotations

import heapq
import logging
from collections.abc import Iterable
from operator import itemgetter
from typing import TypeVar

import msgspec

from protocol.errors import ErrorCode
from protocol.messages import (
    LOBBY_PAGE,
    Ack,
    AskHint,
    AskLegalMoves,
    AskSnapshot,
    CreateRoom,
    Hints,
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
    RoomSummary,
    Spectate,
    Start,
    Undo,
    Variant,
)
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.features.daily import may_watch_daily, watchable_daily_rooms
from server.features.joining import joined
from server.features.room_limits import (
    check_room_limits,
    count_creation,
    count_public,
    count_public_room,
    uncount_public_room,
)
from server.features.run_secrecy import check_challenge_over, check_round_closed
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
    options = message.options
    await check_room_limits(ctx, link)
    # A public room takes its address's place in the lobby first: one refused for that does
    # not count toward the player's rooms an hour.
    code = await count_public_room(ctx, link) if options.public else None
    try:
        await count_creation(ctx, link)
        next_deal = await certified_deal(ctx, message.variant, options, player)
        runner = await ctx.rooms.create(
            message.variant, options, player, link.name, bot=link.bot, next_deal=next_deal, code=code
        )
    except BaseException:
        if code is not None:
            await uncount_public_room(ctx, link, code)
            await ctx.rooms.leases.release(code)
        raise
    runner.audience.follow_as_racer(link, 0)
    logger.debug("room %s created by %s (%s, %d racers)", runner.code, link.name, message.variant, options.max_racers)
    link.send(joined(ctx, link, message.id, runner.code, "racer", 0))
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
    link.send(joined(ctx, link, message.id, runner.code, "racer", seat))
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
    await check_challenge_over(ctx, runner.room.record.challenge)
    await check_round_closed(ctx, runner.room.record.bracket)
    runner.audience.follow_as_spectator(link)
    link.send(joined(ctx, link, message.id, runner.code, "spectator"))
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


#: A lobby line's place: the room's creation time (Unix ms) and code. The greatest comes
#: first: the newest room, then by code (every line has its own place, so a page's cursor
#: says exactly where the next page starts).
LobbyPlace = tuple[int, str]
_Line = TypeVar("_Line")


def lobby_place(summary: RoomSummary) -> LobbyPlace:
    return summary.created, summary.code


def lobby_cursor(place: LobbyPlace) -> str:
    """The cursor (a :data:`~protocol.values.LobbyCursor`) of a page whose last line is at ``place``."""
    return f"{place[0]}.{place[1]}"


def lobby_start(cursor: str | None) -> LobbyPlace | None:
    """Where the page after ``cursor`` starts (every line placed before it); None: the first page."""
    if cursor is None:
        return None
    created, _, code = cursor.partition(".")  # LobbyCursor's pattern holds: digits, a dot, a code
    return int(created), code


def _page_and_one(lines: Iterable[tuple[LobbyPlace, _Line]]) -> list[tuple[LobbyPlace, _Line]]:
    """The first :data:`LOBBY_PAGE` of ``lines`` by place, greatest first, and one more (to
    know whether another page follows): a heap, not a sort of them all."""
    return heapq.nlargest(LOBBY_PAGE + 1, lines, key=itemgetter(0))


def lobby_page(lines: Iterable[tuple[LobbyPlace, _Line]]) -> tuple[list[tuple[LobbyPlace, _Line]], str | None]:
    """The first :data:`LOBBY_PAGE` of ``lines`` by place, greatest first, and the cursor of
    the page after them (None when no line is left)."""
    page = _page_and_one(lines)
    if len(page) <= LOBBY_PAGE:
        return page, None
    return page[:LOBBY_PAGE], lobby_cursor(page[LOBBY_PAGE - 1][0])


async def list_rooms(ctx: Context, link: ClientLink, message: ListRooms) -> None:
    """A page of the lobby: every node's public rooms that are not finished (and the daily
    attempts this player may watch), newest first, ``message.variant``'s only if it names one."""
    variant, start = message.variant, lobby_start(message.after)

    def wanted(place: LobbyPlace, room_variant: Variant) -> bool:
        return (variant is None or room_variant == variant) and (start is None or place < start)

    # This node's rooms, as Registry.public lists them (with the live spectator count), but
    # with a line made only for those that may be on the page: the lobby is polled. Read off
    # the records, and newest first (rooms are kept in the order they came), so the heap
    # rarely changes after its first page.
    here = _page_and_one(
        ((record.created, record.code), runner)
        for runner in reversed(ctx.rooms.runners())
        if (record := runner.room.record).options.public
        and record.state != "finished"
        and wanted((record.created, record.code), record.variant)
    )
    lines = [
        (place, msgspec.structs.replace(runner.room.summary(), spectators=runner.audience.spectator_count()))
        for place, runner in here
    ]
    # Every other node's rooms, as of its last beat (a line from a server too old to say when
    # its room was created is placed as the oldest), and the daily attempts this player may watch.
    others, others_daily = await ctx.cluster.others_lobby()
    lines += [(place, s) for s in others if wanted(place := lobby_place(s), s.variant)]
    for summary in await watchable_daily_rooms(ctx, player_of(link), others_daily):
        if wanted(place := lobby_place(summary), summary.variant):
            lines.append((place, summary))
    page, following = lobby_page(lines)
    link.send(Lobby(id=message.id, rooms=[summary for _, summary in page], next=following))


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
    """A finished public room comes back to the lobby: it counts again for the address of the
    racer who asks (``address-limit`` past the cap)."""
    runner = await ctx.room(message.room)
    record, player = runner.room.record, player_of(link)
    next_deal = None
    if runner.finished:
        if record.options.public:
            await count_public(ctx, link, runner.code)
        next_deal = await certified_deal(ctx, record.variant, record.options, player)
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
