"""Async challenges and async matches: race someone who is not online (the rules:
:mod:`server.competition.challenges`; the stored challenges: :mod:`server.storage.challenges`).

Each run is a one-racer room on the challenge's deal, dealt from its secret deal and salt as
a daily attempt is, with no hints, one attempt (no rematch). Until the challenge is over its
runs are nobody's to study: :mod:`server.features.run_secrecy` refuses their race logs,
replays, ghosts and spectating, on every node (the challenge is read from Redis). The run's
room keeps the challenge's id with the run's side and whether it is rated (its view says both).

When the result is known its players are told on the connections they have open, whichever
node holds them: the second run's end tells them (:mod:`server.live.challenge_runs`), and the
node holding the matcher lease tells them of each challenge whose window closed first
(:func:`announce_closed_windows`).
"""

from __future__ import annotations

import logging
from typing import Final

from protocol.errors import ErrorCode
from protocol.fairness import new_salt
from protocol.messages import (
    AcceptChallenge,
    AskInbox,
    AsyncMatch,
    ChallengePlayer,
    ChallengeWaiting,
    Inbox,
    RoomOptions,
    Variant,
)
from server.clock import now_ms
from server.competition.challenges import Challenge, ChallengeState, Side, line_of, run_tag, side_of, state
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.features.joining import joined
from server.features.room_limits import check_room_limits, count_creation
from server.features.rooms import certified_deal
from server.live.challenge_runs import announce_result
from server.live.pushes import push
from server.live.registry import new_room_code
from server.rooms.commands import SetReady
from server.rooms.errors import RoomError
from server.rooms.room import random_deal
from server.storage.challenges import Taken

logger = logging.getLogger("server.challenges")

#: A challenge's runs: one racer, no hints (both sides play alike, unaided).
CHALLENGE_OPTIONS: Final = RoomOptions(max_racers=1, hints=False)
#: Hours an async match's first run waits for a rival.
MATCH_HOURS: Final = 24


async def challenge(ctx: Context, link: ClientLink, message: ChallengePlayer) -> None:
    player = player_of(link)
    if message.player == player:
        raise RoomError(ErrorCode.NOT_ALLOWED, "challenge someone else")
    _check_rated(link, message.rated)
    await _check_limits(ctx, link)
    created = await _new_challenge(ctx, link, message.variant, message.rated, message.hours, message.player)
    await _play(ctx, link, message.id, created)


async def accept_challenge(ctx: Context, link: ClientLink, message: AcceptChallenge) -> None:
    player = player_of(link)
    found = await ctx.challenges.get(message.challenge.strip().upper())
    if found is None:
        raise RoomError(ErrorCode.NO_SUCH_RACE, f"there is no challenge {message.challenge[:16]!r}")
    _check_rated(link, found.rated)
    await _check_limits(ctx, link)
    try:
        taken = await ctx.challenges.take(found.id, Side(player, link.name), now_ms())
    except Taken as refusal:
        raise RoomError(ErrorCode.NOT_ALLOWED, str(refusal)) from None
    await _play(ctx, link, message.id, taken)


async def async_match(ctx: Context, link: ClientLink, message: AsyncMatch) -> None:
    """A waiting challenger's deal near the player's rating, or a new challenge that waits."""
    player = player_of(link)
    _check_rated(link, True)
    await _check_limits(ctx, link)
    rating = await ctx.boards.rating(message.variant, player)
    taken = await ctx.challenges.match(message.variant, Side(player, link.name), rating.rating, now_ms())
    if taken is None:
        taken = await _new_challenge(ctx, link, message.variant, True, MATCH_HOURS, None, matched=True)
    await _play(ctx, link, message.id, taken)


async def inbox(ctx: Context, link: ClientLink, message: AskInbox) -> None:
    player, now = player_of(link), now_ms()
    challenges = await ctx.challenges.inbox(player)
    link.send(Inbox(id=message.id, challenges=[line_of(c, player, now) for c in challenges]))


async def announce_closed_windows(ctx: Context, now: int | None = None) -> int:
    """Tell the players of every challenge whose window closed before both runs ended that it
    expired (each challenge once, whichever node asks); how many pushes were announced. Run
    by the node holding the matcher lease."""
    now = now_ms() if now is None else now
    told = 0
    for code in await ctx.challenges.closed_windows(now):
        found = await ctx.challenges.get(code)
        # One no longer kept has nobody to tell; one whose run goes on past the close is told
        # when that run ends (server.live.challenge_runs).
        if found is not None and state(found, now) is not ChallengeState.PLAYING:
            told += await announce_result(ctx.accounts, found, now)
    return told


def _check_rated(link: ClientLink, rated: bool) -> None:
    if rated and link.bot:
        raise RoomError(ErrorCode.NOT_ALLOWED, "bots are never rated: challenge them unrated")


async def _check_limits(ctx: Context, link: ClientLink) -> None:
    await check_room_limits(ctx, link)
    await count_creation(ctx, link)


async def _new_challenge(
    ctx: Context,
    link: ClientLink,
    variant: Variant,
    rated: bool,
    hours: int,
    invited: str | None,
    matched: bool = False,
) -> Challenge:
    player, now = player_of(link), now_ms()
    deal = await certified_deal(ctx, variant, CHALLENGE_OPTIONS, player) or random_deal(variant)
    created = Challenge(
        id=new_room_code(),
        variant=variant,
        deal=deal,
        salt=new_salt(),
        rated=rated,
        created=now,
        expires=now + hours * 3_600_000,
        challenger=Side(player, link.name),
        invited=invited,
        invited_name=(await ctx.players.name(invited) or "") if invited is not None else "",
        matched=matched,
    )
    await ctx.challenges.create(created, now)
    logger.debug("challenge %s: %s challenges %s", created.id, link.name, invited or "anyone")
    if invited is not None:
        # Told when the challenge is made, as the inbox lists it then: told when the
        # challenger's run ended, the time would say how fast it was.
        await push(ctx.accounts, invited, ChallengeWaiting(challenge=line_of(created, invited, now)))
    return created


async def _play(ctx: Context, link: ClientLink, request_id: int, challenge: Challenge) -> None:
    """Open the player's run of ``challenge``: a one-racer room on its deal, counting down."""
    player = player_of(link)
    side = side_of(challenge, player)
    assert side is not None  # the challenger, or the player who just took the other side
    runner = await ctx.rooms.create(
        challenge.variant,
        CHALLENGE_OPTIONS,
        player,
        link.name,
        bot=link.bot,
        next_deal=challenge.deal,
        next_salt=challenge.salt,
        challenge=run_tag(challenge, side),
    )
    runner.audience.follow_as_racer(link, 0)
    await runner.run(SetReady(player, True))
    link.send(joined(ctx, link, request_id, runner.code, "racer", 0))
    link.send(runner.snapshot_for(link))
