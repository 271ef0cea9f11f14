"""Arena tournaments: joining and leaving an arena's line, its standings, and pairing its
players (the rules: :mod:`server.competition.arena`; the stored arenas and standings:
:mod:`server.storage.arenas`).

An arena's line is a quick-match line of its own (``arena-<id>``, in Redis), so players on
any node meet; the node holding the arena's scheduler lease (:mod:`server.cluster.schedulers`)
pairs them (:func:`match`), as quick match does, on certified deals, with the public rooms'
spectator delay (every racer of a race has the same deal). A race's points are added when
it ends (:mod:`server.live.arena_results`).
"""

from __future__ import annotations

import logging
import time
from typing import Final

from protocol.errors import ErrorCode
from protocol.messages import (
    Ack,
    ArenaInfo,
    ArenaLine,
    Arenas,
    ArenaStandings,
    AskArena,
    JoinArena,
    LeaveArena,
    ListArenas,
    RoomOptions,
    Variant,
)
from server.clock import now_ms
from server.competition.arena import Arena, ArenaState, arena_state, on_streak, race_tag
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.features.quick_match import RaceOptions, form_races
from server.features.room_limits import check_room_limits
from server.features.rooms import certified_deal
from server.ops.log_limits import LogLimiter
from server.rooms.errors import RoomError
from server.rooms.record import decode_record
from server.rooms.room import PUBLIC_SPECTATOR_DELAY
from server.storage.arenas import Standing
from server.storage.connection import StoreUnavailable
from server.storage.match_line import LineEntry
from server.storage.rooms import VersionConflict

logger = logging.getLogger("server.arenas")
_log = LogLimiter(logger)

#: How far back :func:`list_arenas` looks for arenas that ended.
LISTED_SINCE_MS: Final = 86_400_000
#: Ms after an arena's end during which its line is emptied.
CLEAR_LINE_MS: Final = 60_000


def line_of(arena: str) -> str:
    """The name of an arena's waiting line (beside the games' quick-match lines)."""
    return f"arena-{arena}"


async def list_arenas(ctx: Context, link: ClientLink, message: ListArenas) -> None:
    now = now_ms()
    arenas = [a for a in await ctx.arenas.recent(now - LISTED_SINCE_MS) if a.ends > now - LISTED_SINCE_MS]
    link.send(Arenas(id=message.id, arenas=[await _info(ctx, a, now) for a in arenas]))


async def join_arena(ctx: Context, link: ClientLink, message: JoinArena) -> None:
    player = player_of(link)
    arena = await _arena(ctx, message.arena)
    if arena_state(arena, now_ms()) is not ArenaState.LIVE:
        raise RoomError(ErrorCode.NOT_ALLOWED, f"arena {arena.name!r} is not running now")
    racing = await ctx.arenas.racing_in(arena.id, player)
    if racing is not None and await _still_racing(ctx, racing, player):
        raise RoomError(ErrorCode.NOT_ALLOWED, f"you race in this arena now (room {racing}): finish that race first")
    await check_room_limits(ctx, link)
    rating = await ctx.boards.rating(arena.variant, player)
    line = line_of(arena.id)
    entry = LineEntry(player, link.name, rating.rating, time.time(), ctx.cluster.id, link.id, message.id, link.bot)
    await ctx.line.join(line, entry)
    ctx.queued[(line, player)] = (link, message.id)
    link.send(Ack(id=message.id))


async def leave_arena(ctx: Context, link: ClientLink, message: LeaveArena) -> None:
    player = player_of(link)
    line = line_of(message.arena.strip().upper())
    ctx.queued.pop((line, player), None)
    if not await ctx.line.leave(line, player):
        raise RoomError(ErrorCode.NOT_IN_QUEUE, "you are not waiting in that arena")
    link.send(Ack(id=message.id))


async def standings(ctx: Context, link: ClientLink, message: AskArena) -> None:
    player, now = player_of(link), now_ms()
    arena = await _arena(ctx, message.arena)
    rank = await ctx.arenas.rank(arena.id, player)
    first = max(1, rank - message.limit // 2) if message.around and rank is not None else 1
    lines = [_line(s) for s in await ctx.arenas.top(arena.id, first, message.limit)]
    mine = next((line for line in lines if line.player == player), None)
    if mine is None and rank is not None:
        mine = next(iter(_line(s) for s in await ctx.arenas.top(arena.id, rank, 1)), None)
    link.send(ArenaStandings(id=message.id, arena=await _info(ctx, arena, now), lines=lines, me=mine))


async def match(ctx: Context, now: float | None = None) -> int:
    """Pair the waiting players of every live arena this node schedules (one node an arena,
    service-wide); how many races started. Run by every node, twice a second."""
    now = time.time() if now is None else now
    started = 0
    arenas = await ctx.arenas.recent(int(now * 1000) - LISTED_SINCE_MS)
    mine = await ctx.cluster.scheduled("arena", [arena.id for arena in arenas])
    for arena in arenas:
        if arena.id in mine:
            try:
                started += await _match_arena(ctx, arena, now)
            except (StoreUnavailable, VersionConflict):
                raise  # Redis away: every arena waits, one line says so
            except Exception:
                _log.exception("arena", "arena %s: its players not paired", arena.id)  # the others are
    return started


async def _match_arena(ctx: Context, arena: Arena, now: float) -> int:
    """Pair the waiting players of ``arena`` if it is live (empty its line once it is over)."""
    state = arena_state(arena, int(now * 1000))
    if state is ArenaState.OVER and now * 1000 - arena.ends < CLEAR_LINE_MS:
        # Nobody is paired once it is over: the line empties (clients see the arena over).
        for entry in await ctx.line.waiting(line_of(arena.id)):
            await ctx.line.leave(line_of(arena.id), entry.player)
    if state is not ArenaState.LIVE:
        return 0

    async def deal(variant: Variant, player: str) -> str | None:
        return await certified_deal(ctx, variant, RoomOptions(), player)

    async def racing(players: list[tuple[str, str]], room: str) -> None:
        await ctx.arenas.playing(arena, players, room, now_ms())

    # The race's room keeps the arena's name with its id, for its view.
    how = RaceOptions(deal=deal, spectator_delay=PUBLIC_SPECTATOR_DELAY, arena=race_tag(arena), started=racing)
    return await form_races(ctx, line_of(arena.id), arena.variant, now, how)


async def _still_racing(ctx: Context, code: str, player: str) -> bool:
    """Whether ``player`` still races in room ``code`` (a racer who finished or resigned is
    free at once, before the others are done): asked of the room here if it runs here, else
    of its stored record (never loading it here: another node may run it)."""
    if ctx.rooms.live(code):
        runner = await ctx.rooms.get(code)
        seat = runner.room.seat_of(player) if runner is not None else None
        return runner is not None and seat is not None and runner.room.is_racing(seat)
    stored = await ctx.rooms.store.load(code)
    if stored is None:
        return False
    record = decode_record(stored.record)
    seat_record = next((s for s in record.seats if s.player == player), None)
    return record.state != "finished" and seat_record is not None and not seat_record.status.done


async def _arena(ctx: Context, code: str) -> Arena:
    arena = await ctx.arenas.get(code.strip().upper())
    if arena is None:
        raise RoomError(ErrorCode.NO_SUCH_RACE, f"there is no arena {code[:16]!r}")
    return arena


async def _info(ctx: Context, arena: Arena, now: int) -> ArenaInfo:
    return ArenaInfo(
        id=arena.id,
        variant=arena.variant,
        name=arena.name,
        starts=arena.starts,
        ends=arena.ends,
        state=arena_state(arena, now).value,
        players=await ctx.arenas.count(arena.id),
    )


def _line(standing: Standing) -> ArenaLine:
    record = standing.record
    return ArenaLine(
        rank=standing.rank,
        player=standing.player,
        name=record.name,
        points=record.points,
        races=record.races,
        wins=record.wins,
        streak=on_streak(record),
        room=standing.room,
    )
