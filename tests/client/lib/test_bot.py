"""The bots' levels, giving up (never on a certified deal), staying for rematches, saying
they are bots, and coming back after their server restarts."""

from __future__ import annotations

import asyncio

import pytest

from client.lib.bot import STYLES, Bot, BotResult, BotStopped, alone, join_and_stay, stay
from protocol.messages import CreateRoom, Joined, Leave, Ready, Rematch, Resign, RoomOptions
from server.storage.deals import DealStore
from server.supply.certified import WinnablePool
from tests.client.conftest import Running, Serve

pytestmark = pytest.mark.asyncio


async def test_the_levels_go_from_slow_and_erratic_to_fast_and_exact() -> None:
    easy, medium, hard = STYLES["easy"], STYLES["medium"], STYLES["hard"]
    assert easy.delay > medium.delay > hard.delay
    assert easy.tactics.noise > medium.tactics.noise > hard.tactics.noise == 0
    assert all(style.tactics.lookahead for style in STYLES.values())


async def certified_room(srv: Running, deal: str) -> tuple[Bot, str]:
    """A one-seat Scorpion room whose race gets ``deal`` as a certified winnable deal (from
    the winnable pool, as on a server with a solver), and a medium bot seated there."""
    storage = srv.server.storage
    assert storage is not None
    deals = DealStore(storage)
    await deals.add_winnable("scorpion", deal)
    srv.hub.pool = WinnablePool(deals, target=1)
    client = await srv.connect("Bot", reconnect=False)
    created = await client.request(lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(max_racers=1)))
    assert isinstance(created, Joined)
    return Bot(client, created.room, "medium", delay=0, max_moves=20, seed=7), created.room


async def test_a_medium_bot_on_a_certified_deal_plays_on_until_it_wins(serve: Serve) -> None:
    """Deal 5 is certified winnable, and its first hints lead nowhere: the medium bot used to
    resign it with no card home after about 100 moves. Now it plays past its ``max_moves``
    (which binds only on uncertified deals) and wins."""
    # A bot that does not wait between moves asks faster than a person may: the request rate
    # limit (tested on its own) would only slow this test down.
    async with serve(hint_workers=1, rate=1000, burst=1000) as srv:
        bot, room = await certified_room(srv, "5")
        [outcome] = await asyncio.wait_for(stay(bot, races=1), 240)
        view = bot.client.rooms[room].view()
        assert view.certified is True
        assert outcome == BotResult(won=True, moves=outcome.moves, resigned=False, ending="won")
        assert outcome.moves > 20


async def test_an_easy_bot_on_a_deal_not_certified_gives_up_when_it_gets_nowhere(serve: Serve) -> None:
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


async def test_a_bot_comes_back_after_its_server_restarts_and_finishes_its_race(serve: Serve) -> None:
    outcomes: list[BotResult] = []
    async with serve(deal="63", hint_workers=1, close_clients=False) as first:
        port, prefix = first.server.port, first.prefix
        ann = await first.connect("Ann", reconnect=True)
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(created, Joined)
        code = created.room
        task = asyncio.create_task(join_and_stay(first.url, code, "hard", delay=0.05, races=1, on_race=outcomes.append))
        await ann.wait_room(code, lambda m: len(m.view().racers) == 2 and m.view().racers[1].ready)
        await ann.request(lambda i: Ready(id=i, room=code))
        await ann.wait_room(code, lambda m: m.view().state == "racing", timeout=15)
        await ann.request(lambda i: Resign(id=i, room=code))
        mirror = await ann.wait_room(code, lambda m: m.view().racers[1].progress.moves >= 3, timeout=30)
        before = mirror.view().racers[1].progress.moves
        assert not task.done()
    # The server is gone: the bot waits for it instead of stopping.
    await asyncio.sleep(1.0)
    assert not task.done()
    async with serve(port=port, prefix=prefix, hint_workers=1) as second:
        await asyncio.wait_for(task, 120)
        [outcome] = outcomes
        assert outcome.won, outcome
        assert outcome.moves > before
        view = second.view(code, None)
        assert view.state == "finished"
        assert view.racers[1].finished_ms is not None
    await ann.close()


async def test_a_bot_whose_server_does_not_come_back_says_why_it_stopped(serve: Serve) -> None:
    async with serve(close_clients=False) as srv:
        client = await srv.connect("Bot", reconnect=True)
        practice = RoomOptions(max_racers=1)
        created = await client.request(lambda i: CreateRoom(id=i, variant="scorpion", options=practice))
        assert isinstance(created, Joined)
        code = created.room
        bot = Bot(client, code, "hard", delay=0.2, reconnect_patience=2)
        await bot.ready()
        task = asyncio.create_task(bot.play())
        await client.wait_room(code, lambda m: m.view().racers[0].progress.moves >= 2, timeout=30)
    # Its patience counts from the drop: a move it was about to send does not hold it for the
    # request's own timeout (10 s) first.
    with pytest.raises(BotStopped, match="did not come back within 2 s"):
        await asyncio.wait_for(task, 8)
    await client.close()
