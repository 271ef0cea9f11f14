"""Bracket tournaments: registering, playing a round's run, the bracket's view, and moving
brackets on (the rules: :mod:`server.competition.bracket`; stored: :mod:`server.storage.brackets`).

A round's run is a one-racer room on the round's secret deal, dealt as a challenge's run is,
no hints, one attempt, its clock stopping when the round's window closes. The node holding
the bracket's scheduler lease (:mod:`server.cluster.schedulers`) moves it on
(:func:`advance`): it opens the first round at the start, closes a round once it is due and
opens the next. Each move is one transaction on the bracket, so it happens once whichever node
tries; the players are then told on the connections they have open, on any node
(:class:`BracketStarted`, :class:`RoundClosed`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

import msgspec

from protocol.errors import ErrorCode
from protocol.fairness import commitment, new_salt
from protocol.messages import (
    Ack,
    AskBracket,
    BracketInfo,
    BracketRound,
    Brackets,
    BracketStarted,
    BracketView,
    JoinBracket,
    LeaveBracket,
    ListBrackets,
    PlayBracket,
    Reveal,
    RoomOptions,
    RoundClosed,
)
from server.clock import now_ms
from server.competition.bracket import (
    MIN_PLAYERS,
    SHOW_UP_MS,
    Bracket,
    BracketState,
    Round,
    Run,
    bracket_state,
    close_round,
    current,
    final_standings,
    is_due,
    may_play,
    may_register,
    open_round,
    round_results,
)
from server.connections.link import ClientLink
from server.features.context import Context, player_of
from server.features.joining import joined
from server.features.room_limits import check_room_limits
from server.features.rooms import certified_deal
from server.live.pushes import push
from server.ops.log_limits import LogLimiter
from server.rooms.commands import SetReady
from server.rooms.errors import RoomError
from server.rooms.room import random_deal
from server.storage.connection import StoreUnavailable
from server.storage.rooms import VersionConflict

logger = logging.getLogger("server.brackets")
_log = LogLimiter(logger)

#: How far back :func:`list_brackets` and :func:`advance` look (a bracket lasts less).
LISTED_SINCE_MS: Final = 86_400_000


async def list_brackets(ctx: Context, link: ClientLink, message: ListBrackets) -> None:
    player = player_of(link)
    found = await ctx.brackets.recent(now_ms() - LISTED_SINCE_MS)
    now = now_ms()
    link.send(Brackets(id=message.id, brackets=[_info(b, player, now) for b in found]))


async def join_bracket(ctx: Context, link: ClientLink, message: JoinBracket) -> None:
    player, now = player_of(link), now_ms()
    refusal: list[str] = []

    def register(bracket: Bracket) -> Bracket | None:
        refusal[:] = [why] if (why := may_register(bracket, player, now)) else []
        if refusal or bracket.names.get(player) == link.name:
            return None
        return msgspec.structs.replace(bracket, names={**bracket.names, player: link.name})

    await _change(ctx, message.bracket, register, refusal)
    link.send(Ack(id=message.id))


async def leave_bracket(ctx: Context, link: ClientLink, message: LeaveBracket) -> None:
    player, now = player_of(link), now_ms()
    refusal: list[str] = []

    def unregister(bracket: Bracket) -> Bracket | None:
        if bracket_state(bracket) is not BracketState.REGISTERING or now >= bracket.starts:
            refusal[:] = ["the bracket has started: your place is kept"]
            return None
        names = {p: n for p, n in bracket.names.items() if p != player}
        return msgspec.structs.replace(bracket, names=names) if len(names) != len(bracket.names) else None

    await _change(ctx, message.bracket, unregister, refusal)
    link.send(Ack(id=message.id))


async def play_bracket(ctx: Context, link: ClientLink, message: PlayBracket) -> None:
    player, now = player_of(link), now_ms()
    await check_room_limits(ctx, link)
    code = await ctx.rooms.reserve_code()
    refusal: list[str] = []

    def start(bracket: Bracket) -> Bracket | None:
        refusal[:] = [why] if (why := may_play(bracket, player, now)) else []
        round_ = current(bracket)
        if refusal or round_ is None:
            return None
        runs = {**round_.runs, player: Run(room=code)}
        return msgspec.structs.replace(
            bracket, rounds=[*bracket.rounds[:-1], msgspec.structs.replace(round_, runs=runs)]
        )

    try:
        bracket = await _change(ctx, message.bracket, start, refusal)
    except BaseException:
        await ctx.rooms.leases.release(code)
        raise
    round_ = current(bracket)
    assert round_ is not None
    seconds = max(30, (round_.closes - now) // 1000)
    runner = await ctx.rooms.create(
        bracket.variant,
        RoomOptions(max_racers=1, hints=False, time_limit=int(min(seconds, 86_400))),
        player,
        link.name,
        bot=link.bot,
        next_deal=round_.deal,
        next_salt=round_.salt,
        bracket=f"{bracket.id}/{len(bracket.rounds)}",
        code=code,
    )
    runner.audience.follow_as_racer(link, 0)
    await runner.run(SetReady(player, True))
    link.send(joined(ctx, link, message.id, runner.code, "racer", 0))
    link.send(runner.snapshot_for(link))


async def view(ctx: Context, link: ClientLink, message: AskBracket) -> None:
    player, now = player_of(link), now_ms()
    bracket = await _get(ctx, message.bracket)
    rounds = [_round(bracket, number, r, player, now) for number, r in enumerate(bracket.rounds, 1)]
    over = bracket_state(bracket) is BracketState.OVER
    ids = final_standings(bracket) if over else None
    standings = [bracket.names.get(p, p) for p in ids] if ids is not None else None
    link.send(
        BracketView(
            id=message.id,
            bracket=_info(bracket, player, now),
            rounds=rounds,
            standings=standings,
            standing_ids=ids,
        )
    )


async def advance(ctx: Context, now: int | None = None) -> int:
    """Open, close and open again the rounds of every bracket this node schedules (one node a
    bracket, service-wide) that is due; how many moved. Run by every node, twice a second."""
    now = now_ms() if now is None else now
    moved = 0
    brackets = await ctx.brackets.recent(now - LISTED_SINCE_MS)
    mine = await ctx.cluster.scheduled("bracket", [bracket.id for bracket in brackets])
    for bracket in brackets:
        if bracket.id in mine:
            try:
                moved += await _advance_bracket(ctx, bracket, now)
            except (StoreUnavailable, VersionConflict):
                raise  # Redis away: every bracket waits, one line says so
            except Exception:
                _log.exception("bracket", "bracket %s: not moved on", bracket.id)  # the others are
    return moved


async def _advance_bracket(ctx: Context, bracket: Bracket, now: int) -> int:
    """Open, close or open again ``bracket``'s round if one is due; 1 if it moved."""
    state = bracket_state(bracket)
    open_now = current(bracket)
    due = (state is BracketState.REGISTERING and now >= bracket.starts) or (
        open_now is not None and is_due(open_now, now)
    )
    if not due:
        return 0
    deal = await certified_deal(ctx, bracket.variant, RoomOptions(), "bracket") or random_deal(bracket.variant)
    salt = new_salt()
    closed: list[int] = []  # the number of the round this move closed, if it closed one
    began: list[bool] = []  # whether this move ended the registration (started or cancelled)

    def step(current_bracket: Bracket) -> Bracket | None:
        closed[:] = [len(current_bracket.rounds)] if current(current_bracket) is not None else []
        began[:] = [bracket_state(current_bracket) is BracketState.REGISTERING]
        return _step(current_bracket, deal, salt, now)

    after = await ctx.brackets.change(bracket.id, step)
    if after is None or after == bracket:
        return 0
    logger.debug("bracket %s: %s, round %d", after.id, bracket_state(after).value, len(after.rounds))
    if closed and after.rounds[closed[0] - 1].places is not None:
        await _announce_closed(ctx, after, closed[0], now)
    if began and began[0]:
        await _announce_started(ctx, after, now)
    return 1


async def _announce_closed(ctx: Context, bracket: Bracket, number: int, now: int) -> None:
    """Tell each player of round ``number``, just closed, its results and what came next."""
    round_ = bracket.rounds[number - 1]
    following = bracket.rounds[number] if number < len(bracket.rounds) else None
    for player in round_.players:
        news = RoundClosed(
            bracket=_info(bracket, player, now),
            round=_round(bracket, number, round_, player, now),
            next=_round(bracket, number + 1, following, player, now) if following is not None else None,
        )
        await push(ctx.accounts, player, news)


async def _announce_started(ctx: Context, bracket: Bracket, now: int) -> None:
    """Tell each registered player that the bracket started (its first round is open, to play
    before the time to start is over) or was cancelled."""
    first = bracket.rounds[0] if bracket.rounds else None
    for player in bracket.names:
        news = BracketStarted(
            bracket=_info(bracket, player, now),
            round=_round(bracket, 1, first, player, now) if first is not None else None,
        )
        await push(ctx.accounts, player, news)


def _step(bracket: Bracket, deal: str, salt: str, now: int) -> Bracket | None:
    """The bracket moved on at ``now`` (a new round on ``deal`` if one opens), or None."""
    state = bracket_state(bracket)
    if state is BracketState.REGISTERING and now >= bracket.starts:
        if len(bracket.names) < MIN_PLAYERS:
            return msgspec.structs.replace(bracket, cancelled=True)
        return open_round(bracket, sorted(bracket.names), deal, salt, now)
    open_now = current(bracket)
    if open_now is None or not is_due(open_now, now):
        return None
    closed, survivors = close_round(bracket)
    return open_round(closed, survivors, deal, salt, now) if survivors else closed


async def _get(ctx: Context, code: str) -> Bracket:
    bracket = await ctx.brackets.get(code.strip().upper())
    if bracket is None:
        raise RoomError(ErrorCode.NO_SUCH_RACE, f"there is no bracket {code[:16]!r}")
    return bracket


async def _change(ctx: Context, code: str, change: Callable[[Bracket], Bracket | None], refusal: list[str]) -> Bracket:
    """Apply ``change`` to the bracket; ``not-allowed`` with the sentence it left in ``refusal``."""
    bracket = await ctx.brackets.change(code.strip().upper(), change)
    if bracket is None:
        raise RoomError(ErrorCode.NO_SUCH_RACE, f"there is no bracket {code[:16]!r}")
    if refusal:
        raise RoomError(ErrorCode.NOT_ALLOWED, refusal[0])
    return bracket


def _info(bracket: Bracket, player: str, now: int) -> BracketInfo:
    winner = bracket.names.get(bracket.winner or "", None) if bracket.winner else None
    return BracketInfo(
        id=bracket.id,
        variant=bracket.variant,
        name=bracket.name,
        starts=bracket.starts,
        size=bracket.size,
        round_minutes=bracket.round_minutes,
        state=bracket_state(bracket).value,
        players=len(bracket.names),
        registered=player in bracket.names,
        round=len(bracket.rounds) if current(bracket) is not None else 0,
        winner=winner,
        to_play=player in bracket.names and may_play(bracket, player, now) is None,
        winner_id=bracket.winner or None,
    )


def _round(bracket: Bracket, number: int, round_: Round, player: str, now: int) -> BracketRound:
    closed = round_.places is not None
    you = None
    if player in round_.players:
        run = round_.runs.get(player)
        if run is None:
            you = "forfeited" if closed or may_play(bracket, player, now) else "to-play"
        else:
            you = "played" if run.done else "playing"
    return BracketRound(
        number=number,
        opens=round_.opens,
        closes=round_.closes,
        players=[bracket.names.get(p, p) for p in round_.players],
        you=you,
        results=round_results(round_, bracket.names) if closed else None,
        reveal=Reveal(deal=round_.deal, salt=round_.salt) if closed else None,
        start_by=min(round_.opens + SHOW_UP_MS, round_.closes),
        rooms=[run.room if (run := round_.runs.get(p)) else None for p in round_.players] if closed else None,
        player_ids=list(round_.players),
        # A hash of the deal and a 128-bit salt: it tells nothing of the deal until the reveal.
        commitment=commitment(bracket.variant, round_.deal, round_.salt),
    )
