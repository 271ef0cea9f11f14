"""How many rooms a player may hold and create, and how many public rooms one client address
may have in the lobby: checked before any room is made for them."""

from __future__ import annotations

import contextlib

from protocol.errors import ErrorCode
from server.clock import now_ms
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.rooms.errors import RoomError
from server.storage.connection import StoreUnavailable


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


async def count_public_room(ctx: Context, link: ClientLink) -> str:
    """The code of a new public room, its lease taken (as :meth:`Registry.reserve_code` does),
    counted for the connection's client address; ``address-limit`` when the address already
    has ``public_rooms_per_address`` unfinished public rooms, on any node of the service (a
    room stops counting once it finishes or closes). Give the count back with
    :func:`uncount_public_room` if the room is not created after all."""
    code = await ctx.rooms.reserve_code()
    try:
        await count_public(ctx, link, code)
    except BaseException:
        await ctx.rooms.leases.release(code)
        raise
    return code


async def count_public(ctx: Context, link: ClientLink, code: str) -> None:
    """Count public room ``code`` (new, or finished and racing again) for the connection's
    client address; ``address-limit`` past the cap, as :func:`count_public_room` says."""
    limit = ctx.config.public_rooms_per_address
    counted, _ = await ctx.rooms.store.count_public(link.address, code, limit, now_ms())
    if not counted:
        raise RoomError(
            ErrorCode.ADDRESS_LIMIT,
            f"at most {limit} unfinished public rooms from one address; "
            "wait until one finishes, or make this one private",
        )


async def uncount_public_room(ctx: Context, link: ClientLink, code: str) -> None:
    """Take back the count of public room ``code``, which was not created."""
    # Best effort: a count left behind is forgotten by itself (server/storage/rooms.py).
    with contextlib.suppress(StoreUnavailable):
        await ctx.rooms.store.uncount_public(link.address, code)
