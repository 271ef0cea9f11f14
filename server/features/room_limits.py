"""How many rooms a player may hold and create: checked before any room is made for them."""

from __future__ import annotations

from protocol.errors import ErrorCode
from server.clock import now_ms
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.rooms.errors import RoomError


async def check_room_limits(ctx: Context, link: ClientLink) -> None:
    """``too-many-rooms`` if the player already races in as many unfinished rooms as a player
    may, on any node of the service (the shared seats index counts the others' rooms)."""
    player = player_of(link)
    active = {r.code for r in ctx.rooms.rooms_of(player) if not r.finished}
    if len(active) < ctx.config.max_rooms_per_player:
        active |= set(await ctx.cluster.seats_of(player))
    if len(active) >= ctx.config.max_rooms_per_player:
        raise RoomError(ErrorCode.TOO_MANY_ROOMS, f"you are in {len(active)} rooms already; leave one first")


async def count_creation(ctx: Context, link: ClientLink) -> None:
    """Count a room the player creates; ``creation-limit`` past the ``rooms_per_hour`` setting."""
    created = await ctx.players.count_creation(player_of(link), now_ms() // 3_600_000)
    limit = ctx.config.rooms_per_hour
    if created > limit:
        raise RoomError(ErrorCode.CREATION_LIMIT, f"at most {limit} new rooms an hour; try again later")
