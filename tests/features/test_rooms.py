"""Room membership against a real server: spectators leave, and a spectator who takes a seat
stops spectating on every connection, as the room's spectator count shows everyone."""

from __future__ import annotations

from functools import partial

import pytest

from protocol.messages import (
    Ack,
    AskHint,
    AskSnapshot,
    CreateRoom,
    Hints,
    Joined,
    JoinRoom,
    Leave,
    PlayMove,
    Ready,
    RoomOptions,
    Spectate,
)
from tests.end_to_end.conftest import RunningServer, ServerFactory, eventually, start_race
from tests.known_deals import ANTARES_DEAL

pytestmark = pytest.mark.asyncio


async def test_a_spectator_leaves_and_can_then_neither_leave_again_nor_ask_a_snapshot(server: RunningServer) -> None:
    ann = await server.connect("Ann")
    created = await ann.request(partial(CreateRoom, variant="scorpion", options=RoomOptions()))
    assert isinstance(created, Joined)
    code = created.room
    sam = await server.raw("Sam")
    joined = await sam.request(partial(Spectate, room=code))
    assert isinstance(joined, Joined)
    assert joined.role == "spectator"
    await eventually(lambda: ann.rooms[code].view().spectators == 1, what="Ann seeing Sam")

    left = await sam.request(partial(Leave, room=code))
    assert isinstance(left, Ack)
    assert left.room == code
    await eventually(lambda: ann.rooms[code].view().spectators == 0, what="Ann seeing Sam gone")
    assert (await sam.error(await sam.send(partial(Leave, room=code)))).code == "not-in-room"
    assert (await sam.error(await sam.send(partial(AskSnapshot, room=code)))).code == "not-in-room"
    assert [racer.name for racer in ann.rooms[code].view().racers] == ["Ann"]  # the race is untouched


async def test_a_spectator_who_takes_a_seat_stops_spectating_on_every_connection(server: RunningServer) -> None:
    ann = await server.connect("Ann")
    created = await ann.request(partial(CreateRoom, variant="scorpion", options=RoomOptions(max_racers=3)))
    assert isinstance(created, Joined)
    code = created.room
    watching = await server.raw()
    welcome = await watching.hello("Bob")
    assert isinstance(await watching.request(partial(Spectate, room=code)), Joined)
    await eventually(lambda: ann.rooms[code].view().spectators == 1, what="Ann seeing Bob watch")

    playing = await server.raw()
    await playing.hello("Bob", resume=welcome.resume)  # the same player, on a second connection
    seated = await playing.request(partial(JoinRoom, room=code))
    assert isinstance(seated, Joined)
    assert (seated.role, seated.seat) == ("racer", 1)
    await eventually(lambda: ann.rooms[code].view().spectators == 0, what="Bob no longer counted as watching")
    # The first connection follows the room no more: it is not sent the room, nor may it ask.
    assert (await watching.error(await watching.send(partial(AskSnapshot, room=code)))).code == "not-in-room"
    assert [racer.name for racer in ann.rooms[code].view().racers] == ["Ann", "Bob"]


async def test_a_hint_names_a_winning_move_searched_in_a_worker_process(start_server: ServerFactory) -> None:
    """Antares shows every card: the first hint is the next move of a winning line, found by
    the hint workers (the search never runs on the server's event loop)."""
    async with start_server(deal=str(ANTARES_DEAL), hint_workers=1) as srv:
        race = await start_race(srv, "antares")
        ann = race.racers[0]
        hints = await ann.request(partial(AskHint, room=race.code), timeout=30)
        assert isinstance(hints, Hints)
        assert hints.hints[0].reason == "it is on a winning line"
        # Followed, the line answers from memory.
        await ann.request(partial(PlayMove, room=race.code, move=hints.hints[0].move))
        again = await ann.request(partial(AskHint, room=race.code))
        assert isinstance(again, Hints)
        assert again.hints[0].reason == "it is on a winning line"


async def test_a_race_says_when_its_deal_is_not_certified(server: RunningServer) -> None:
    """No solver runs here, so no pool: a Scorpion race (which wants winnable deals) gets a
    random deal, and its view says it is not certified."""
    ann = await server.connect("Ann")
    created = await ann.request(partial(CreateRoom, variant="scorpion", options=RoomOptions(max_racers=1)))
    assert isinstance(created, Joined)
    await ann.request(partial(Ready, room=created.room))
    mirror = await ann.wait_room(created.room, lambda m: m.view().state == "racing")
    assert mirror.view().certified is False
