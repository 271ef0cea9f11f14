"""Leaderboards over the protocol: today's daily board, this week's and season's boards, the
all-time boards and the rating board."""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial
from typing import Any

import pytest

from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    AccountInfo,
    AskLeaderboard,
    AskStats,
    Joined,
    Leaderboard,
    LeaderboardEntry,
    LeaderboardName,
    PlayerStats,
    PlayMove,
    Register,
    Resign,
    StartDaily,
)
from server.clock import now_ms
from server.competition.daily import DailyDeal, utc_date
from server.storage.connection import Storage
from tests.doubles.clock import AheadClock
from tests.end_to_end.conftest import (
    PERSON_PACE,
    ServerFactory,
    cleared_by_a_moderator,
    eventually,
    registered_before_today,
    start_race,
)
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio

#: One solver process, a short budget per deal (see tests/end_to_end/test_daily.py).
SOLVER: dict[str, Any] = {"solver_workers": 1, "solver_budget": 0.5, "pool_size": 1}
SOLVER_WAIT = 60.0


async def board(client: RaceClient, name: LeaderboardName, limit: int = 10, around: bool = False) -> Leaderboard:
    reply = await client.request(
        lambda i: AskLeaderboard(id=i, variant="antares", board=name, limit=limit, around=around)
    )
    assert isinstance(reply, Leaderboard)
    assert (reply.variant, reply.board) == ("antares", name)
    return reply


def lines(entries: list[LeaderboardEntry]) -> list[tuple[int, str, float]]:
    return [(e.rank, e.name, e.value) for e in entries]


async def as_account(client: RaceClient, storage: Storage | None = None) -> None:
    """Register the client's player under its name (only accounts are on boards); with the
    server's ``storage``, dated before today (only those play today's deal)."""
    with contextlib.suppress(ServerError):  # already-account: registered before
        reply = await client.request(lambda i: Register(id=i, name=client.name, password="a board password"))
        assert isinstance(reply, AccountInfo), reply
        if storage is not None:
            await registered_before_today(storage, reply.player)


async def daily_attempt(client: RaceClient) -> str:
    """Start today's Antares attempt (as an account registered before today); its room's code."""
    joined = await client.request(lambda i: StartDaily(id=i, variant="antares"))
    assert isinstance(joined, Joined)
    return joined.room


async def play(client: RaceClient, code: str, moves: tuple[str, ...], clock: AheadClock | None = None) -> None:
    """Play ``moves``; with the rooms' ``clock``, a person's pace apart on it."""
    for text in moves:
        if clock is not None:
            clock.skip(PERSON_PACE)
        await client.request(partial(PlayMove, room=code, move=text))


async def test_the_daily_board_ranks_finishers_by_time_then_the_others_by_progress(
    start_server: ServerFactory,
) -> None:
    clock = AheadClock()
    async with start_server(clock=clock, **SOLVER) as srv:
        assert srv.hub.daily is not None
        deal: DailyDeal = await asyncio.wait_for(srv.hub.daily.get("antares", utc_date(now_ms())), SOLVER_WAIT)
        ann, bob, cid, dee = [await srv.connect(name) for name in ("Ann", "Bob", "Cid", "Dee")]
        for client in (ann, bob, cid, dee):  # accounts first (hashing takes a moment)
            await as_account(client, srv.server.storage)
        # Everyone starts at once (their countdowns run together).
        rooms = {client.name: await daily_attempt(client) for client in (ann, bob, cid, dee)}
        for client in (ann, bob, cid, dee):
            await client.wait_room(rooms[client.name], lambda m: m.view().state == "racing" and m.board(0) is not None)

        # At a person's pace on the rooms' clock (machine speed is refused). The same moves,
        # later: each room counts from its own start, and Cid plays after Ann and Bob, so he is
        # slower whatever the offset between the starts. Bob stops one move short of the win:
        # cards are home then whatever the day's deal (half the line can leave none home).
        await play(ann, rooms["Ann"], deal.solution, clock)
        await play(bob, rooms["Bob"], deal.solution[:-1], clock)
        await play(cid, rooms["Cid"], deal.solution, clock)
        for quitter in (bob, dee):
            await quitter.request(partial(Resign, room=rooms[quitter.name]))
        results = {}
        for client in (ann, bob, cid, dee):
            mirror = await client.wait_room(rooms[client.name], lambda m: m.view().results is not None)
            [results[client.name]] = mirror.view().results or []
        # Their replays of the day's solution are held as studied until a moderator clears them.
        assert srv.server.storage is not None
        for client in (ann, cid, bob):
            assert client.player is not None
            await cleared_by_a_moderator(srv.server.storage, "antares", client.player)
        # Boards are written just after each race's own write: wait for the last of the four.
        daily = await eventually_async(lambda: board(dee, "daily"), lambda b: len(b.entries) == 4)
        ann_time, cid_time = results["Ann"].time_ms, results["Cid"].time_ms
        assert ann_time is not None
        assert cid_time is not None
        assert ann_time < cid_time
        bob_home, dee_home = results["Bob"].home, results["Dee"].home
        assert bob_home > dee_home
        # Finishers first, fastest first (the value is the time); then the others, most cards home first.
        assert lines(daily.entries) == [(1, "Ann", ann_time), (2, "Cid", cid_time), (3, "Bob", bob_home), (4, "Dee", 0)]
        assert [e.finished for e in daily.entries] == [True, True, False, False]
        assert [e.player for e in daily.entries] == [c.player for c in (ann, cid, bob, dee)]
        assert daily.me == daily.entries[3]
        assert lines((await board(dee, "daily", limit=2)).entries) == lines(daily.entries[:2])
        # Around Dee: one above her, and nobody below.
        around = await board(dee, "daily", limit=2, around=True)
        assert lines(around.entries) == lines(daily.entries[2:])
        assert around.me == daily.entries[3]
        around = await board(cid, "daily", limit=2, around=True)
        assert lines(around.entries) == lines(daily.entries[:3])

        # The all-time boards: best daily time, most daily wins, longest streak (finishers only).
        assert lines((await board(bob, "best-time")).entries) == [(1, "Ann", ann_time), (2, "Cid", cid_time)]
        for name in ("wins", "streak"):
            ranked = (await board(bob, name)).entries
            assert sorted((e.name, e.value) for e in ranked) == [("Ann", 1), ("Cid", 1)]
            assert [e.rank for e in ranked] == [1, 2]
        stats = await ann.request(lambda i: AskStats(id=i, variant="antares"))
        assert isinstance(stats, PlayerStats)
        assert (stats.daily_attempts, stats.daily_wins, stats.best_time_ms) == (1, 1, ann_time)
        # This week's and this season's boards: the day's wins, one each, by time.
        period_boards: tuple[LeaderboardName, ...] = ("weekly", "season")
        for name in period_boards:
            period = await board(dee, name)
            assert lines(period.entries) == [(1, "Ann", 1), (2, "Cid", 1)]
            assert [e.total_time_ms for e in period.entries] == [ann_time, cid_time]
            assert period.period is not None
            assert daily.date is not None
            assert period.period.first_day <= daily.date <= period.period.last_day


async def test_the_rating_board_ranks_racers_by_their_new_rating(start_server: ServerFactory) -> None:
    async with start_server(deal=str(ANTARES_DEAL)) as srv:
        race = await start_race(srv, "antares")
        ann, bob = race.racers
        for text in winning_line():
            await ann.request(partial(PlayMove, room=race.code, move=text))
        await bob.request(lambda i: Resign(id=i, room=race.code))
        results = await eventually(lambda: race.mirror(0).view().results, what="results")
        ratings = {r.name: r.rating for r in results}
        onlooker = await srv.connect("Eve")
        for racer in (ann, bob):  # only accounts are on the board: registering shows the rating
            await as_account(racer)

        rated = await board(onlooker, "rating")
        assert lines(rated.entries) == [(1, "Ann", ratings["Ann"]), (2, "Bob", ratings["Bob"])]
        assert [e.player for e in rated.entries] == [ann.player, bob.player]
        assert rated.me is None  # Eve has not raced
        mine = await board(bob, "rating", around=True)
        assert lines(mine.entries) == lines(rated.entries)
        assert mine.me == rated.entries[1]
        # Nobody is on a daily board for a race.
        assert (await board(ann, "daily")).entries == []
