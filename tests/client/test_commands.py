"""The script commands: the lobby listing, a plain event log of a room, bots."""

from __future__ import annotations

import asyncio
import io

import pytest

from client.commands import list_rooms, run_bots, watch_plain
from protocol.messages import CreateRoom, Joined, JoinRoom, PlayMove, Ready, Resign, RoomOptions
from tests.client.conftest import ANTARES_DEAL, Serve, winning_line

pytestmark = pytest.mark.asyncio


async def test_rooms_lists_the_public_rooms(serve: Serve) -> None:
    async with serve() as srv:
        out = io.StringIO()
        assert await list_rooms(srv.url, out) == 0
        assert out.getvalue() == "no public rooms right now\n"
        ann = await srv.connect("Ann")
        created = await ann.request(
            lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(public=True, max_racers=3))
        )
        assert isinstance(created, Joined)
        out = io.StringIO()
        await list_rooms(srv.url, out)
        assert out.getvalue().split() == [created.room, "scorpion", "waiting", "1/3", "racers", "0", "watching", "Ann"]


async def test_watch_plain_prints_a_line_per_event_until_the_race_is_over(serve: Serve) -> None:
    moves = winning_line()
    async with serve(deal=str(ANTARES_DEAL)) as srv:
        ann, bob = await srv.connect("Ann"), await srv.connect("Bob")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="antares"))
        assert isinstance(created, Joined)
        code = created.room
        await bob.request(lambda i: JoinRoom(id=i, room=code))
        out = io.StringIO()
        watching = asyncio.create_task(watch_plain(srv.url, code, out=out))
        await ann.wait_room(code, lambda m: m.view().spectators == 1)
        for racer in (ann, bob):
            await racer.request(lambda i: Ready(id=i, room=code))
        await ann.wait_room(code, lambda m: m.board(0) is not None)
        await bob.request(lambda i: Resign(id=i, room=code))
        for text in moves:
            await ann.request(lambda i, text=text: PlayMove(id=i, room=code, move=text))
        assert await asyncio.wait_for(watching, 10) == 0
    lines = out.getvalue().splitlines()
    assert lines[0].startswith(f"room {code} antares race 1 waiting: Ann (0/52 home, 0 moves), Bob")
    assert any(line.endswith("Ann is ready") for line in lines)
    assert any(line.endswith("state racing (race 1)") for line in lines)
    assert any(line.endswith("Bob resigned (resigned)") for line in lines)
    assert any(line.endswith(f"Ann: 52/52 home, {len(moves)} moves") for line in lines)
    assert lines[-4:] == [
        lines[-4][: lines[-4].index("]") + 1] + " race over:",
        f"  1. Ann: finished in {lines[-3].split('finished in ')[1]}",
        "  2. Bob: 0/52 home, 0 moves",
        f"  deal {ANTARES_DEAL}",
    ]


async def test_bots_race_each_other_by_the_servers_hints(serve: Serve) -> None:
    async with serve() as srv:
        out = io.StringIO()
        assert await run_bots(srv.url, rooms=2, racers=2, variant="scorpion", delay=0, max_moves=25, out=out) == 0
    lines = out.getvalue().splitlines()
    assert sorted(line.split(":")[1] for line in lines if "racing" in line) == [" 2 bots racing scorpion"] * 2
    results = [line for line in lines if line.startswith("  ")]
    assert len(results) == 4  # every bot of both rooms ranked
    assert all(line.split(":")[0].strip()[3:].startswith("Bot-") for line in results)


async def test_a_bot_can_join_a_persons_room_and_race_them(serve: Serve) -> None:
    async with serve() as srv:
        ann = await srv.connect("Ann")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(created, Joined)
        out = io.StringIO()
        bot = asyncio.create_task(run_bots(srv.url, join=created.room, delay=0, max_moves=10, out=out))
        await ann.wait_room(created.room, lambda m: len(m.view().racers) == 2 and m.view().racers[1].ready)
        await ann.request(lambda i: Ready(id=i, room=created.room))
        assert await asyncio.wait_for(bot, 30) == 0
        mirror = await ann.wait_room(created.room, lambda m: m.view().racers[1].resigned)
        assert mirror.view().racers[1].progress.moves <= 10
        assert out.getvalue().splitlines()[-1].startswith("bot resigned after ")
