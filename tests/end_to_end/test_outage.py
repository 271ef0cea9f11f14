"""A Redis outage answers ``storage-unavailable`` for every request family that needs storage,
and the server carries on once Redis is back."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from client.lib.connection import ServerError
from protocol.messages import (
    AskLeaderboard,
    AskLegalMoves,
    AskRaceLog,
    AskStats,
    ClientMessage,
    CreateRoom,
    Error,
    Joined,
    JoinRoom,
    LegalMoves,
    ListRooms,
    PlayMove,
    QuickMatch,
    RoomOptions,
    Spectate,
)
from server.storage.embedded import EmbeddedRedis
from tests.end_to_end.conftest import start_race
from tests.in_process_server import running_server

pytestmark = pytest.mark.asyncio


async def test_every_request_family_answers_storage_unavailable_in_an_outage(tmp_path: Path) -> None:
    redis = EmbeddedRedis(tmp_path / "redis")
    url = await redis.start()
    try:
        async with running_server(url, deal="24") as srv:
            race = await start_race(srv, "antares")
            other = await srv.raw("Cy")
            finished = await other.request(
                lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=1))
            )
            assert isinstance(finished, Joined)
            # Out of memory, so a request for it must read Redis.
            srv.hub.rooms.sweep(0, keep_finished_ms=-1)
            ann = race.racers[0]
            legal = await ann.request(lambda i: AskLegalMoves(id=i, room=race.code))
            assert isinstance(legal, LegalMoves)
            await redis.stop()
            with pytest.raises(ServerError) as refused:
                await ann.request(lambda i: PlayMove(id=i, room=race.code, move=legal.moves[0]))
            assert refused.value.code == "storage-unavailable"
            families: dict[str, Callable[[int], ClientMessage]] = {
                "rooms: create": lambda i: CreateRoom(id=i, variant="antares"),
                "rooms: join a stored room": lambda i: JoinRoom(id=i, room="ZZZZZZZZ"),
                "rooms: spectate a stored room": lambda i: Spectate(id=i, room="ZZZZZZZZ"),
                "lobby": lambda i: ListRooms(id=i),
                "quick match": lambda i: QuickMatch(id=i, variant="antares"),
                "boards": lambda i: AskLeaderboard(id=i, variant="antares", board="rating"),
                "statistics": lambda i: AskStats(id=i, variant="antares"),
                "replays": lambda i: AskRaceLog(id=i, room="ZZZZZZZZ"),
            }
            for family, ask in families.items():
                reply = await other.request(ask)
                assert isinstance(reply, Error), family
                assert reply.code == "storage-unavailable", (family, reply)
            await redis.start()
            again = await other.request(
                lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=1))
            )
            assert isinstance(again, Joined)
    finally:
        await redis.stop()


async def test_the_quick_match_loop_logs_one_line_not_tracebacks_while_redis_is_down(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    redis = EmbeddedRedis(tmp_path / "redis")
    url = await redis.start()
    try:
        async with running_server(url, deal="24"):
            await asyncio.sleep(0.5)  # the matcher lease is taken and the loop runs
            caplog.clear()  # before the stop: the loop may notice while Redis is going
            await redis.stop()
            await asyncio.sleep(3)  # a dozen turns of the loop
            lines = [r for r in caplog.records if "quick match" in r.getMessage()]
            assert 1 <= len(lines) <= 2, [r.getMessage() for r in lines]
            assert not any(r.exc_info for r in lines)
            await redis.start()
    finally:
        await redis.stop()
