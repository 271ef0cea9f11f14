"""Identity: hello (new or resumed player), and what a dropped connection leaves behind.

A ``hello`` with a token that still resumes (:mod:`server.features.tokens`) is its player
again, and its ``welcome`` carries the token renewed; with an expired token it is a new guest
on the same device; with a token that proves nothing, was logged out, or is the guest token of
a player who has since registered, it is refused with ``invalid-token``."""

from __future__ import annotations

import logging

from protocol.errors import ErrorCode
from protocol.messages import PROTOCOL_VERSION, Hello, Welcome
from protocol.version import server_version
from server.connections.link import ClientLink
from server.features import tokens
from server.features.admission import admit
from server.features.context import Context
from server.features.joining import joined
from server.features.sessions import InvalidName, clean_name, new_player_id, verify_token
from server.live.runner import RoomRunner
from server.ops.log_limits import LogLimiter
from server.rooms.commands import Presence
from server.storage.connection import StoreUnavailable
from server.storage.rooms import VersionConflict

logger = logging.getLogger("server.identity")
#: A storage outage fails each client's return and drop: one line per client would flood the
#: log, so the lines are rate-limited, each kind on its own.
_log = LogLimiter(logger)


async def hello(ctx: Context, link: ClientLink, message: Hello) -> None:
    if message.protocol != PROTOCOL_VERSION:
        text = f"this server speaks protocol {PROTOCOL_VERSION}, not {message.protocol}; update your client"
        link.error(ErrorCode.UNSUPPORTED_PROTOCOL, text, message.id)
        return
    if link.player is not None:
        link.error(ErrorCode.ALREADY_HELLO, "this connection has already said hello", message.id)
        return
    try:
        name = clean_name(message.name)
    except InvalidName as error:
        link.error(ErrorCode.INVALID_NAME, str(error), message.id)
        return
    token = None
    if message.resume is not None:
        token = verify_token(message.resume, ctx.secret)
        if token is None:
            text = "that resume token is not valid here; say hello without it"
            link.error(ErrorCode.INVALID_TOKEN, text, message.id)
            return
    returning = token is not None and await tokens.still_resumes(ctx, token)
    proved = (token.player, token.generation) if token is not None and returning else None
    admitted = await admit(ctx, link, new_player_id(), proved)
    player, account = admitted.player, admitted.account
    # A new guest's id was drawn just now: no other connection and no seat can be its yet,
    # so a burst of newcomers costs Redis a count and two writes each, not five round trips.
    if returning and await _connections(ctx, player) >= ctx.config.max_connections_per_player:
        link.error(ErrorCode.TOO_MANY_CONNECTIONS, "this player has too many connections open", message.id)
        return
    await ctx.cluster.connected(player, link.id, True)
    if account is None:
        await ctx.players.save_name(player, name)
    else:
        name = account.name  # an account's name is its own: renamed only by an operator
    generation = 0 if account is None else account.generation
    link.player, link.name, link.bot, link.generation = player, name, message.bot, generation
    ctx.by_player.setdefault(player, set()).add(link)
    if token is not None and returning:
        resume = await tokens.renewed(ctx, link, token, message.resume or "")
    else:  # a new guest (on the device of an expired token, if it came with one)
        resume = await tokens.issue(ctx, link, player, generation, None if token is None else token.device)
    welcome = Welcome(
        id=message.id,
        player=player,
        name=name,
        resume=resume,
        protocol=PROTOCOL_VERSION,
        account=generation > 0,
        server_version=server_version(),
    )
    link.send(welcome)
    if returning:
        await rejoin(ctx, link, message.id)


async def rejoin(ctx: Context, link: ClientLink, request_id: int) -> None:
    """Back in every room that runs here the link's player races in: their seat, and what
    they missed. (The seats in rooms other nodes run are given back by the edge, which
    forwards to them: :mod:`server.net.forwarding`.)"""
    player = link.player
    assert player is not None
    for runner in sorted(ctx.rooms.rooms_of(player), key=lambda r: r.code):
        await resume_seat(ctx, link, runner, request_id)


async def _connections(ctx: Context, player: str) -> int:
    """How many connections ``player`` has open on every node of the service (those of
    nodes that stopped beating are forgotten)."""
    return len(ctx.by_player.get(player, ())) + await ctx.cluster.connections_elsewhere(player)


async def resume_seat(ctx: Context, link: ClientLink, runner: RoomRunner, request_id: int) -> None:
    """Put ``link`` back in its player's seat in ``runner``'s room, with what it missed."""
    player = link.player
    seat = None if player is None else runner.room.seat_of(player)
    if player is None or seat is None:
        return
    runner.audience.follow_as_racer(link, seat)
    link.send(joined(ctx, link, request_id, runner.code, "racer", seat))
    try:
        await runner.run(Presence(player, True))
    except (StoreUnavailable, VersionConflict) as error:
        _log.log(
            logging.WARNING,
            "return-not-stored",
            "room %s: %s's return not stored yet: %s",
            runner.code,
            link.name,
            error,
        )
    link.send(runner.snapshot_for(link))


def forget_player(ctx: Context, link: ClientLink) -> None:
    """Take ``link`` off its player's connections (it closed, or now speaks for another)."""
    if link.player is not None:
        links = ctx.by_player.get(link.player, set())
        links.discard(link)
        if not links:
            ctx.by_player.pop(link.player, None)


async def disconnected(ctx: Context, link: ClientLink) -> None:
    """``link`` closed: stop sending to it; racers whose last connection it was are marked
    disconnected (they keep their seat for the grace period)."""
    ctx.links.discard(link)
    if link.player is not None and link.relay is None:
        try:
            await ctx.cluster.connected(link.player, link.id, False)
        except StoreUnavailable as error:
            _log.log(logging.WARNING, "close-not-counted", "%s's closed connection still counted: %s", link.name, error)
    forget_player(ctx, link)
    for code in list(link.rooms):
        runner = await ctx.rooms.get(code)
        if runner is None:
            continue
        seat = runner.audience.unfollow(link)
        player = link.player
        if seat is None:
            runner.spectators_changed()
        elif player is not None and not runner.audience.links_of(seat):
            try:
                await runner.run(Presence(player, False))
            except (StoreUnavailable, VersionConflict) as error:
                # Not stored: after the resync the seat is away (no connection follows it).
                _log.log(
                    logging.WARNING,
                    "drop-not-stored",
                    "room %s: %s's drop not stored: %s",
                    runner.code,
                    link.name,
                    error,
                )
