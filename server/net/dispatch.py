"""The dispatcher: one ``match`` over every client request, and one place that turns
refusals (every :class:`~server.errors.Refused`, see :mod:`server.errors`) and storage
failures into error frames. A request type without a handler fails type checking
(``assert_never``). The router only routes: every decision is the features' and rooms'.
"""

from __future__ import annotations

import logging
from typing import assert_never

from protocol.errors import ErrorCode
from protocol.messages import (
    AskDaily,
    AskHint,
    AskLeaderboard,
    AskLegalMoves,
    AskRaceLog,
    AskReplay,
    AskSnapshot,
    AskStats,
    ChangePassword,
    ClientMessage,
    CreateRoom,
    Hello,
    JoinRoom,
    Leave,
    LeaveQueue,
    ListRooms,
    Login,
    Logout,
    PlayMove,
    QuickMatch,
    Ready,
    Register,
    Rematch,
    Resign,
    Spectate,
    Start,
    StartDaily,
    Undo,
)
from server.connections.link import ClientLink
from server.errors import Refused
from server.features import accounts, boards, daily, identity, quick_match, replays, rooms
from server.features.context import Context
from server.ops.log_limits import LogLimiter
from server.storage.connection import StoreUnavailable
from server.storage.rooms import VersionConflict

logger = logging.getLogger("server.dispatch")
_log = LogLimiter(logger)


async def route(ctx: Context, link: ClientLink, message: ClientMessage) -> None:
    """Hand ``message`` to its feature."""
    match message:
        case Hello():
            await identity.hello(ctx, link, message)
        case CreateRoom():
            await rooms.create_room(ctx, link, message)
        case JoinRoom():
            await rooms.join(ctx, link, message)
        case Spectate():
            await rooms.spectate(ctx, link, message)
        case Leave():
            await rooms.leave(ctx, link, message)
        case ListRooms():
            await rooms.list_rooms(ctx, link, message)
        case Ready():
            await rooms.ready(ctx, link, message)
        case Start():
            await rooms.start(ctx, link, message)
        case PlayMove():
            await rooms.move(ctx, link, message)
        case Undo():
            await rooms.undo(ctx, link, message)
        case AskHint():
            await rooms.hint(ctx, link, message)
        case AskLegalMoves():
            await rooms.legal_moves(ctx, link, message)
        case Resign():
            await rooms.resign(ctx, link, message)
        case Rematch():
            await rooms.rematch(ctx, link, message)
        case AskSnapshot():
            await rooms.snapshot(ctx, link, message)
        case AskRaceLog():
            await replays.race_log(ctx, link, message)
        case AskReplay():
            await replays.replay(ctx, link, message)
        case QuickMatch():
            await quick_match.quick_match(ctx, link, message)
        case LeaveQueue():
            await quick_match.leave_queue(ctx, link, message)
        case AskDaily():
            await daily.daily_info(ctx, link, message)
        case StartDaily():
            await daily.start_daily(ctx, link, message)
        case AskLeaderboard():
            await boards.leaderboard(ctx, link, message)
        case AskStats():
            await boards.stats(ctx, link, message)
        case Register():
            await accounts.register(ctx, link, message)
        case Login():
            await accounts.login(ctx, link, message)
        case Logout():
            await accounts.logout(ctx, link, message)
        case ChangePassword():
            await accounts.change_password(ctx, link, message)
        case _:
            assert_never(message)


async def dispatch(ctx: Context, link: ClientLink, message: ClientMessage, frame: bytes | None = None) -> None:
    """Answer one decoded request; a refusal becomes its error frame (its own code), and so
    does a storage outage or a step decided on a stale room (``storage-unavailable``: not
    stored, ask again; the room resynchronises by itself).
    ``frame``: the request as the client sent it, forwarded unchanged to another node."""
    if link.player is None and not isinstance(message, Hello):
        link.error(ErrorCode.HELLO_FIRST, "say hello first: no request is served before it", message.id)
        return
    try:
        # A request for a room another node runs goes there (one dict look-up otherwise).
        forwarder = ctx.forwarder
        if (
            forwarder is not None
            and not forwarder.served_here(link, message)
            and await forwarder.forwarded(link, message, frame)
        ):
            return
        await route(ctx, link, message)
    except StoreUnavailable as error:
        _log.log(logging.WARNING, "storage", "storage unavailable: %s", error)
        link.error(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable; try again shortly", message.id)
    except VersionConflict as error:
        _log.log(logging.WARNING, "conflict", "request not stored: %s", error)
        link.error(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable; try again shortly", message.id)
    except Refused as error:
        link.error(error.code, str(error), message.id, error.rule)
