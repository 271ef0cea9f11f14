"""The bots' levels, giving up, staying for rematches and saying they are bots."""

from __future__ import annotations

import asyncio

import pytest

from client.lib.bot import STYLES, Bot, alone, join_and_stay, stay
from protocol.messages import CreateRoom, Joined, Leave, Ready, Rematch, Resign, RoomOptions
from tests.client.conftest import Serve

pytestmark = pytest.mark.asyncio


async def test_the_levels_go_from_slow_and_random_to_fast_and_hinted() -> None:
    easy, medium, hard = STYLES["easy"], STYLES["medium"], STYLES["hard"]
    assert easy.delay > medium.delay > hard.delay
    assert not easy.hints
    assert medium.hints
    assert hard.hints


async def test_an_easy_bot_alone_plays_random_moves_and_gives_up_without_progress(serve: Serve) -> None:
    async with serve() as srv:
        client = await srv.connect("Bot", reconnect=False)
        created = await client.request(
            lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(max_racers=1))
        )
        assert isinstance(created, Joined)
        bot = Bot(client, created.room, "easy", delay=0, max_moves=200, seed=1)
        [outcome] = await asyncio.wait_for(stay(bot, races=1), 60)
        assert outcome.won or outcome.resigned
        assert outcome.moves <= 200


async def test_a_bot_stays_for_the_rematch_and_leaves_once_alone(serve: Serve) -> None:
    async with serve() as srv:
        ann = await srv.connect("Ann")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(created, Joined)
        code = created.room
        task = asyncio.create_task(join_and_stay(srv.url, code, "hard", delay=0, max_moves=20))
        await ann.wait_room(code, lambda m: len(m.view().racers) == 2 and m.view().racers[1].ready)
        await ann.request(lambda i: Ready(id=i, room=code))
        await ann.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
        await ann.request(lambda i: Resign(id=i, room=code))
        await ann.wait_room(code, lambda m: m.view().state == "finished", timeout=30)
        await ann.request(lambda i: Rematch(id=i, room=code))
        mirror = await ann.wait_room(code, lambda m: m.view().state == "waiting" and m.view().racers[1].ready)
        assert mirror.view().racers[1].name == "Bot (hard)"
        assert not alone(ann, mirror)
        await ann.request(lambda i: Leave(id=i, room=code))
        await asyncio.wait_for(task, 10)  # alone in the room: the bot left too


async def test_a_bot_says_so_in_hello_and_the_server_marks_its_seat(serve: Serve) -> None:
    async with serve() as srv:
        ann = await srv.connect("Ann")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(created, Joined)
        task = asyncio.create_task(join_and_stay(srv.url, created.room, "hard", delay=0, races=1))
        mirror = await ann.wait_room(created.room, lambda m: len(m.view().racers) == 2)
        try:
            assert [racer.bot for racer in mirror.view().racers] == [False, True]
        finally:
            task.cancel()
