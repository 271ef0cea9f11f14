"""The daily challenge through the real server, and races on solver-certified deals.

Every test here runs the real solver in a worker process, as the server does. The daily
deal is read from the server's own :class:`~server.supply.certified.DailyDeals` (the test plays
its solution); the players' connections are :class:`RawClient` s, which keep every frame
byte for byte, so the tests can check that the deal number never went over the wire.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import multiprocessing
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import msgspec
import pytest

from protocol.fairness import verify
from protocol.messages import (
    AccountInfo,
    Ack,
    AskDaily,
    AskHint,
    AskLeaderboard,
    AskRaceLog,
    AskReplay,
    AskStats,
    ClientMessage,
    CreateRoom,
    DailyInfo,
    DailyTag,
    Error,
    Joined,
    Leaderboard,
    ListRooms,
    Lobby,
    PlayerStats,
    PlayMove,
    RaceOver,
    Ready,
    Register,
    Resign,
    RoomOptions,
    ServerMessage,
    Snapshot,
    Spectate,
    StartDaily,
    StateChanged,
    Update,
    Welcome,
)
from protocol.mirror import RoomMirror
from server.app import RaceServer
from server.clock import now_ms
from server.competition.daily import DAILY_OPTIONS, DailyDeal, utc_date
from server.games import Antares, Deal
from server.solver import Budget, Solved, solve
from tests.doubles.clock import AheadClock
from tests.end_to_end.conftest import (
    PATIENCE,
    PERSON_PACE,
    RawClient,
    RunningServer,
    ServerFactory,
    cleared_by_a_moderator,
    eventually,
    registered_before_today,
)
from tests.in_process_server import fresh_prefix
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio

#: One solver process; a short budget per deal keeps the background work (Scorpion's daily
#: deals and pool, which the tests do not use) from holding up the Antares deals they wait for.
SOLVER: dict[str, Any] = {"solver_workers": 1, "solver_budget": 0.5, "pool_size": 1}
#: Seconds to wait for the solver (the Antares deal may queue behind a Scorpion pick).
SOLVER_WAIT = 60.0


def today() -> str:
    return utc_date(now_ms())


async def daily_deal(server: RaceServer) -> DailyDeal:
    """Today's Antares deal, as the server picked it (waiting for the pick if needed)."""
    assert server.ctx is not None
    assert server.ctx.daily is not None
    return await asyncio.wait_for(server.ctx.daily.get("antares", today()), SOLVER_WAIT)


async def as_account(client: RawClient) -> None:
    """Register the client's player under its name, unless it is an account (only accounts
    have ranked attempts), dated before today (only those play today's deal)."""
    welcome = next(m for m in reversed(client.messages) if isinstance(m, Welcome))
    if not welcome.account and not any(isinstance(m, AccountInfo) for m in client.messages):
        reply = await ask(client, lambda i: Register(id=i, name=welcome.name, password="a daily password"))
        assert isinstance(reply, AccountInfo), reply
        assert client.storage is not None, "open the client with the server's storage"
        await registered_before_today(client.storage, reply.player)


def account_player(client: RawClient) -> str:
    """The player id of the account :func:`as_account` made the client."""
    return next(m.player for m in reversed(client.messages) if isinstance(m, AccountInfo))


def account_token(client: RawClient) -> str:
    """The token of the account :func:`as_account` made the client (its guest token resumes nothing)."""
    return next(m.resume for m in reversed(client.messages) if isinstance(m, AccountInfo))


async def start_daily(client: RawClient) -> Snapshot:
    """Start a daily Antares attempt (as an account); the room's first snapshot (after the Joined)."""
    await as_account(client)
    joined = await ask(client, lambda i: StartDaily(id=i, variant="antares"))
    assert isinstance(joined, Joined), joined
    assert (joined.role, joined.seat) == ("racer", 0)
    snapshot = await client.wait_for(lambda m: isinstance(m, Snapshot) and m.room == joined.room)
    assert isinstance(snapshot, Snapshot)
    return snapshot


def mirror_of(client: RawClient, code: str) -> RoomMirror | None:
    """The room as ``client`` sees it: its last snapshot with every later update applied."""
    mirror = None
    for message in client.messages:
        if isinstance(message, Snapshot) and message.room == code:
            mirror = RoomMirror(message)
        elif isinstance(message, Update) and message.room == code and mirror is not None:
            assert mirror.apply(message), "a gap in the updates"
    return mirror


def events_of(client: RawClient, code: str) -> list[object]:
    return [e for m in client.messages if isinstance(m, Update) and m.room == code for e in m.events]


async def racing(client: RawClient, code: str) -> RoomMirror:
    """Wait until ``client`` sees room ``code`` racing, with its own board dealt."""

    def dealt() -> RoomMirror | None:
        mirror = mirror_of(client, code)
        if mirror is None or mirror.view().state != "racing" or mirror.board(0) is None:
            return None
        return mirror

    return await eventually(dealt, what=f"room {code} racing")


async def ask(client: RawClient, build: Callable[[int], ClientMessage]) -> ServerMessage:
    """``client.request(build)``, sent again after a pause while the server asks to slow down
    (playing a whole solution takes more requests than the rate limit's burst)."""
    while True:
        reply = await client.request(build)
        if not (isinstance(reply, Error) and reply.code == "rate-limited"):
            return reply
        await asyncio.sleep(0.1)


async def play(
    client: RawClient, code: str, moves: tuple[str, ...] | list[str], clock: AheadClock | None = None
) -> None:
    """Play ``moves`` one after the other, each acknowledged; with the rooms' ``clock``, a
    person's pace apart on it."""
    for text in moves:
        if clock is not None:
            clock.skip(PERSON_PACE)
        ack = await ask(client, partial(PlayMove, room=code, move=text))
        assert isinstance(ack, Ack), ack


async def lobby(client: RawClient) -> list[str]:
    """The codes of the rooms the lobby lists for ``client``."""
    reply = await ask(client, lambda i: ListRooms(id=i))
    assert isinstance(reply, Lobby)
    return [summary.code for summary in reply.rooms]


def assert_deal_never_sent(clients: list[RawClient], deal: str) -> None:
    """No frame any of ``clients`` received holds the deal number, as text or as an integer."""
    forms = [deal.encode(), msgspec.msgpack.encode(deal)]
    if int(deal) < 2**64:
        forms.append(msgspec.msgpack.encode(int(deal)))
    frames = [frame for client in clients for frame in client.frames]
    assert frames
    for frame in frames:
        assert isinstance(frame, bytes)
        for form in forms:
            assert form not in frame


async def test_the_daily_attempt_is_ranked_and_there_is_no_second_one(start_server: ServerFactory) -> None:
    async with start_server(**SOLVER) as srv:
        deal = await daily_deal(srv.server)
        date = today()
        ann = await srv.raw()
        await ann.hello("Ann")

        info = await ask(ann, lambda i: AskDaily(id=i, variant="antares"))
        assert isinstance(info, DailyInfo)
        assert (info.variant, info.date, info.attempted) == ("antares", date, False)
        # The commitment is published now; the deal and salt behind it are revealed after the day.
        assert info.commitment == deal.commitment
        assert verify("antares", deal.deal, deal.salt, info.commitment)
        assert info.par == deal.par == len(deal.solution)
        midnight = dt.datetime.fromisoformat(date).replace(tzinfo=dt.UTC) + dt.timedelta(days=1)
        assert info.ends == int(midnight.timestamp() * 1000)

        ranked = await start_daily(ann)
        code = ranked.room
        view = ranked.view
        assert view.daily == DailyTag(date=date, ranked=True)
        assert view.options.max_racers == 1
        assert not view.options.hints
        assert [r.name for r in view.racers] == ["Ann"]
        assert view.state == "countdown"  # it starts by itself: the clock runs from here
        mirror = await racing(ann, code)
        # Everyone plays the same deal: the day's.
        assert mirror.board(0) == [list(p) for p in Antares.new(Deal.parse(deal.deal), DAILY_OPTIONS).public_piles()]
        hint = await ask(ann, lambda i: AskHint(id=i, room=code))
        assert isinstance(hint, Error)
        assert hint.code == "hints-disabled"
        info = await ask(ann, lambda i: AskDaily(id=i, variant="antares"))
        assert isinstance(info, DailyInfo)
        assert info.attempted
        await play(ann, code, deal.solution[:3])

        # Dropping the connection neither ends the attempt nor gives a new ranked one.
        await ann.close()
        back = await srv.raw()
        await back.hello("Ann", resume=account_token(ann))
        rejoined = await back.wait_for(lambda m: isinstance(m, Joined))
        assert isinstance(rejoined, Joined)
        assert rejoined.room == code
        restored = await back.wait_for(lambda m: isinstance(m, Snapshot) and m.room == code)
        assert isinstance(restored, Snapshot)
        assert restored.view.daily == DailyTag(date=date, ranked=True)
        assert restored.view.racers[0].progress.moves == 3
        assert restored.view.clock.started == mirror.view().clock.started

        again = await ask(back, lambda i: StartDaily(id=i, variant="antares"))
        assert isinstance(again, Error)
        assert again.code == "daily-closed"  # no practice of today's deal: it could be studied

        # The ranked attempt is each player's own: a newcomer still gets one.
        bob = await srv.raw("Bob")
        assert (await start_daily(bob)).view.daily == DailyTag(date=date, ranked=True)

        assert_deal_never_sent([ann, back, bob], deal.deal)


async def test_watching_and_finishing_the_daily_keep_its_deal_secret(start_server: ServerFactory) -> None:
    clock = AheadClock()
    async with start_server(clock=clock, **SOLVER) as srv:
        deal = await daily_deal(srv.server)
        ann = await srv.raw("Ann")
        bob = await srv.raw("Bob")
        begun = time.monotonic()  # Ann's race starts after this, whatever the machine's load
        code = (await start_daily(ann)).room

        # Bob has not played today: watching Ann would show him the way.
        refused = await ask(bob, lambda i: Spectate(id=i, room=code))
        assert isinstance(refused, Error)
        assert refused.code == "not-allowed"
        own = (await start_daily(bob)).room
        await racing(bob, own)
        await racing(ann, code)
        # Nor while his own ranked attempt is still going; the lobby does not offer Ann's either.
        refused = await ask(bob, lambda i: Spectate(id=i, room=code))
        assert isinstance(refused, Error)
        assert refused.code == "not-allowed"
        assert code not in await lobby(bob)
        assert isinstance(await ask(bob, lambda i: Resign(id=i, room=own)), Ack)
        await eventually(lambda: (m := mirror_of(bob, own)) and m.view().state == "finished", what="Bob's attempt over")
        # His attempt used, Bob may watch Ann's.
        assert code in await lobby(bob)
        watching = await ask(bob, lambda i: Spectate(id=i, room=code))
        assert isinstance(watching, Joined)
        assert watching.role == "spectator"

        await play(ann, code, deal.solution, clock)
        over = await eventually(
            lambda: [e for e in events_of(ann, code) if isinstance(e, RaceOver)], what="Ann's attempt over"
        )
        # The race is over, the day is not: no reveal, for the racer or the spectator.
        assert over[0].reveal is None
        [result] = over[0].results
        assert (result.name, result.place, result.finished, result.moves) == ("Ann", 1, True, len(deal.solution))
        assert result.time_ms is not None
        assert 0 < result.time_ms <= (time.monotonic() - begun + clock.ahead) * 1000
        assert result.rating is None  # a daily attempt is not a rated race
        watched = await eventually(
            lambda: [e for e in events_of(bob, code) if isinstance(e, RaceOver)], what="Bob seeing the end"
        )
        assert watched[0].reveal is None
        for client in (ann, bob):
            final = mirror_of(client, code)
            assert final is not None
            assert final.view().state == "finished"
            assert final.view().reveal is None

        # Its moves cannot be fetched before the day ends, not even by the player.
        for client in (ann, bob):
            log = await ask(client, lambda i: AskRaceLog(id=i, room=code))
            assert isinstance(log, Error)
            assert log.code == "daily-secret"
            replay = await ask(client, lambda i: AskReplay(id=i, room=code, seat=0))
            assert isinstance(replay, Error)
            assert replay.code == "daily-secret"

        # Ann replayed the day's solution: the anti-cheat check holds her entry until a
        # moderator clears it. Then her finish is on today's board, ahead of Bob who gave up
        # (the board is written just after the race's own write, and the statistics before it).
        assert srv.server.storage is not None
        await cleared_by_a_moderator(srv.server.storage, "antares", account_player(ann))

        async def daily_board() -> Leaderboard:
            reply = await ask(ann, lambda i: AskLeaderboard(id=i, variant="antares", board="daily"))
            assert isinstance(reply, Leaderboard)
            return reply

        board = await eventually_async(daily_board, lambda b: len(b.entries) == 2)
        assert board.date == today()
        assert [(e.rank, e.name, e.finished) for e in board.entries] == [(1, "Ann", True), (2, "Bob", False)]
        assert board.entries[0].value == result.time_ms
        assert board.entries[0].moves == len(deal.solution)
        assert board.me == board.entries[0]

        stats = await ask(ann, lambda i: AskStats(id=i, variant="antares"))
        assert isinstance(stats, PlayerStats)
        assert (stats.daily_attempts, stats.daily_wins, stats.current_streak, stats.longest_streak) == (1, 1, 1, 1)
        assert stats.best_time_ms == result.time_ms
        assert stats.races_started == 0  # daily attempts are not races
        stats = await ask(bob, lambda i: AskStats(id=i, variant="antares"))
        assert isinstance(stats, PlayerStats)
        assert (stats.daily_attempts, stats.daily_wins, stats.current_streak) == (1, 0, 0)

        assert_deal_never_sent([ann, bob], deal.deal)


async def test_the_ranked_attempt_survives_a_server_restart(start_server: ServerFactory) -> None:
    prefix = fresh_prefix()
    children = set(multiprocessing.active_children())
    clock = AheadClock()  # one for both servers: the room's time runs on across the restart
    async with start_server(prefix=prefix, clock=clock, **SOLVER) as running:
        first = running.server
        deal = await daily_deal(first)
        ann = await RawClient.open(f"ws://127.0.0.1:{first.port}", first.storage)
        try:
            await ann.hello("Ann")
            code = (await start_daily(ann)).room
            started = (await racing(ann, code)).view().clock.started
            await play(ann, code, deal.solution[:5], clock)
            token = account_token(ann)
        finally:
            await ann.close()
    # Stopped, the server leaves no solver process running on (to the end of a daily pick).
    await eventually(
        lambda: not set(multiprocessing.active_children()) - children, timeout=2.0, what="the solver processes gone"
    )

    async with start_server(prefix=prefix, clock=clock, **SOLVER) as running:
        second = running.server
        back = await RawClient.open(f"ws://127.0.0.1:{second.port}")
        try:
            await back.hello("Ann", resume=token)
            rejoined = await back.wait_for(lambda m: isinstance(m, Joined))
            assert isinstance(rejoined, Joined)
            assert rejoined.room == code
            mirror = await racing(back, code)
            view = mirror.view()
            assert view.daily == DailyTag(date=today(), ranked=True)
            assert view.racers[0].progress.moves == 5
            assert view.clock.started == started  # the clock kept running on the server

            info = await ask(back, lambda i: AskDaily(id=i, variant="antares"))
            assert isinstance(info, DailyInfo)
            assert info.attempted
            assert info.commitment == deal.commitment  # the same deal after the restart
            again = await ask(back, lambda i: StartDaily(id=i, variant="antares"))
            assert isinstance(again, Error)
            assert again.code == "daily-closed"

            # The ranked attempt goes on where it was, and counts.
            await play(back, code, deal.solution[5:], clock)
            await eventually(
                lambda: [e for e in events_of(back, code) if isinstance(e, RaceOver)], what="the attempt over"
            )
            assert second.storage is not None
            await cleared_by_a_moderator(second.storage, "antares", account_player(ann))  # a replayed solution
            for _ in range(100):  # the board is written just after the race is over
                board = await ask(back, lambda i: AskLeaderboard(id=i, variant="antares", board="daily"))
                assert isinstance(board, Leaderboard)
                if board.entries:
                    break
                await asyncio.sleep(0.02)
            assert isinstance(board, Leaderboard)
            assert [(e.rank, e.name, e.finished) for e in board.entries] == [(1, "Ann", True)]
            assert_deal_never_sent([ann, back], deal.deal)
        finally:
            await back.close()


async def test_a_server_without_the_solver_offers_no_daily_challenge(server: RunningServer) -> None:
    ann = await server.raw("Ann")
    for refused in (
        await ask(ann, lambda i: AskDaily(id=i, variant="antares")),
        await ask(ann, lambda i: StartDaily(id=i, variant="antares")),
    ):
        assert isinstance(refused, Error)
        assert refused.code == "daily-unavailable"


async def test_a_winnable_deals_only_race_gets_a_deal_the_solver_certified(start_server: ServerFactory) -> None:
    async with start_server(**SOLVER) as srv:
        pool, store = srv.hub.pool, srv.server.storage
        assert store is not None
        assert pool is not None
        deadline = time.monotonic() + SOLVER_WAIT
        while await pool.size("antares") < 1:
            assert time.monotonic() < deadline, "the pool of winnable Antares deals stayed empty"
            await asyncio.sleep(0.05)
        pooled = [
            raw.decode() if isinstance(raw, bytes) else raw
            for raw in await store.redis.lrange(f"{store.prefix}pool:antares", 0, -1)
        ]

        ann = await srv.raw("Ann")
        options = RoomOptions(max_racers=1, winnable=True)
        created = await ask(ann, lambda i: CreateRoom(id=i, variant="antares", options=options))
        assert isinstance(created, Joined)
        code = created.room
        await ask(ann, lambda i: Ready(id=i, room=code))
        await racing(ann, code)
        await ask(ann, lambda i: Resign(id=i, room=code))
        over = await eventually(lambda: [e for e in events_of(ann, code) if isinstance(e, RaceOver)], what="race over")
        assert [e.state for e in events_of(ann, code) if isinstance(e, StateChanged)][-1] == "finished"
    reveal = over[0].reveal
    assert reveal is not None
    assert reveal.deal in pooled  # the race took its deal from the pool ...
    # ... and the solver wins it.
    assert isinstance(
        solve(Antares, Deal.parse(reveal.deal), DAILY_OPTIONS, Budget(seconds=PATIENCE, clock=time.process_time)),
        Solved,
    )
