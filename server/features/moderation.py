"""What a running server does when an operator acts (``python -m server admin``): the admin
tool writes to Redis and announces the action on the moderation channel; every server
process carries it out on its own connections and rooms.

- ``ban``: the player's connections close with 4003 and the reason (new hellos are refused
  by :mod:`server.features.admission`, which reads the ban from Redis).
- ``revoke``: connections of the account signed in with an older generation close with 4001.
- ``logout-device``: the player's connections holding that device's tokens close with 4001
  (a ``logout``: the device's tokens are revoked in Redis already).
- ``rename``: the player's connections take the new name (for rooms joined from now on).
- ``close-room``: every member leaves the room (racers still racing resign), so it ends with
  nobody in it: no rematch, nobody can join; it is let go like any finished room.

The channel also carries ``push``: a message for the player's connections, whichever node
learnt the news (:mod:`server.live.pushes`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging

from protocol.errors import CloseCode
from server.connections.link import ClientLink
from server.features.context import Context
from server.live.pushes import PUSH, deliver
from server.rooms.commands import Leave
from server.rooms.errors import RoomError
from server.storage.connection import StoreUnavailable
from server.storage.rooms import VersionConflict

logger = logging.getLogger("server.moderation")

_closing: set[asyncio.Task[None]] = set()  # closes in flight, kept from the garbage collector


def close_links(
    ctx: Context,
    player: str,
    code: CloseCode,
    reason: str,
    *,
    below: int | None = None,
    only: ClientLink | None = None,
) -> int:
    """Close ``player``'s connections (only ``only``; or those signed in with a generation
    below ``below``) with ``code`` and ``reason``; how many."""
    links = [only] if only is not None else list(ctx.by_player.get(player, ()))
    closed = 0
    for link in links:
        if (below is not None and link.generation >= below) or link.socket is None:
            continue  # (a relayed link: its own node closes the client)
        task = asyncio.create_task(link.socket.close(code, reason[:120]))
        _closing.add(task)
        task.add_done_callback(_closing.discard)
        closed += 1
    return closed


async def close_room(ctx: Context, code: str) -> bool:
    """Make every member of room ``code`` leave it; False if this process does not hold it."""
    runner = await ctx.rooms.get(code)
    if runner is None:
        return False
    # Leaving a race resigns it (the seat stays for the results); before one, frees the seat.
    for player in list(runner.room.members().values()):
        with contextlib.suppress(RoomError):
            await runner.run(Leave(player))
    return True


async def carry_out(ctx: Context) -> None:
    """Carry out announced admin actions, for ever (cancel the task to stop)."""
    async for event in ctx.moderation.events():
        try:
            await _carry_out(ctx, event)
        except (StoreUnavailable, VersionConflict) as error:  # a room it closed was stale
            logger.warning("admin action %s not carried out: %s", event.get("action"), error)
        except Exception:
            logger.exception("admin action %s failed", event.get("action"))


async def _carry_out(ctx: Context, event: dict[str, str]) -> None:
    action, player = event.get("action"), event.get("player", "")
    if action == "ban":
        count = close_links(ctx, player, CloseCode.BANNED, f"banned: {event.get('reason', '')}")
        logger.info("banned player %s: %d connections closed", player, count)
    elif action == "revoke":
        close_links(ctx, player, CloseCode.LOGGED_OUT, "logged out", below=int(event.get("generation", "0")))
    elif action == "logout-device":
        device = event.get("device")
        for link in list(ctx.by_player.get(player, ())):
            if link.device == device:
                close_links(ctx, player, CloseCode.LOGGED_OUT, "logged out", only=link)
    elif action == "rename":
        for link in ctx.by_player.get(player, ()):
            link.name = event.get("name", link.name)
    elif action == PUSH:
        deliver(ctx.by_player.get(player, ()), event)
    elif action == "close-room" and await close_room(ctx, event.get("room", "")):
        logger.info("room %s closed by an operator", event.get("room"))
