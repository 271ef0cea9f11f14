"""The dispatcher: one ``match`` over every client request, and one place that turns
refusals (every :class:`~server.errors.Refused`, see :mod:`server.errors`) and storage
failures into error frames. A request type without a handler fails type checking
(``assert_never``). Every request it is given is served here: one for a room another node
runs was sent there before it (by :class:`server.net.forwarding.Router`). ``route`` only
routes: every decision is the features' and rooms'.
"""

from __future__ import annotations

import logging
from typing import Final, assert_never

from protocol.errors import ErrorCode
from protocol.messages import (
    AcceptChallenge,
    AskArena,
    AskBracket,
    AskDaily,
    AskHint,
    AskInbox,
    AskLeaderboard,
    AskLegalMoves,
    AskRaceLog,
    AskReplay,
    AskSnapshot,
    AskStats,
    AsyncMatch,
    ChallengePlayer,
    ChangePassword,
    ClientMessage,
    CreateRoom,
    Hello,
    JoinArena,
    JoinBracket,
    JoinRoom,
    Leave,
    LeaveArena,
    LeaveBracket,
    LeaveQueue,
    ListArenas,
    ListBrackets,
    ListRooms,
    Login,
    Logout,
    PlayBracket,
    PlayMove,
    QuickMatch,
    RaceGhost,
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
from server.features import (
    accounts,
    arenas,
    boards,
    brackets,
    challenges,
    daily,
    ghosts,
    identity,
    quick_match,
    replays,
    rooms,
)
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
        case RaceGhost():
            await ghosts.race_ghost(ctx, link, message)
        case ChallengePlayer():
            await challenges.challenge(ctx, link, message)
        case AcceptChallenge():
            await challenges.accept_challenge(ctx, link, message)
        case AsyncMatch():
            await challenges.async_match(ctx, link, message)
        case AskInbox():
            await challenges.inbox(ctx, link, message)
        case ListArenas():
            await arenas.list_arenas(ctx, link, message)
        case JoinArena():
            await arenas.join_arena(ctx, link, message)
        case LeaveArena():
            await arenas.leave_arena(ctx, link, message)
        case AskArena():
            await arenas.standings(ctx, link, message)
        case ListBrackets():
            await brackets.list_brackets(ctx, link, message)
        case JoinBracket():
            await brackets.join_bracket(ctx, link, message)
        case LeaveBracket():
            await brackets.leave_bracket(ctx, link, message)
        case PlayBracket():
            await brackets.play_bracket(ctx, link, message)
        case AskBracket():
            await brackets.view(ctx, link, message)
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


#: What serving a request may raise that its client is answered (by :func:`answer_failure`).
FAILURES: Final = (StoreUnavailable, VersionConflict, Refused)


async def dispatch(ctx: Context, link: ClientLink, message: ClientMessage) -> None:
    """Answer one decoded request here; what fails it is answered by :func:`answer_failure`."""
    if link.player is None and not isinstance(message, Hello):
        link.error(ErrorCode.HELLO_FIRST, "say hello first: no request is served before it", message.id)
        return
    try:
        await route(ctx, link, message)
    except FAILURES as error:
        answer_failure(link, request_id=message.id, error=error)


def answer_failure(link: ClientLink, request_id: int, error: Exception) -> None:
    """Answer request ``request_id`` with what failed it (one of :data:`FAILURES`): a refusal
    becomes its error frame (its own code), and so does a storage outage or a step decided on
    a stale room (``storage-unavailable``: not stored, ask again; the room resynchronises by
    itself)."""
    if isinstance(error, Refused):
        link.error(error.code, str(error), request_id, error.rule)
        return
    if isinstance(error, VersionConflict):
        _log.log(logging.WARNING, "conflict", "request not stored: %s", error)
    else:
        _log.log(logging.WARNING, "storage", "storage unavailable: %s", error)
    link.error(ErrorCode.STORAGE_UNAVAILABLE, "storage is unavailable; try again shortly", request_id)
