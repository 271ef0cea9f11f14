"""A racer whose connection drops: back with the resume token, or resigned after the grace period."""

from __future__ import annotations

from functools import partial

import pytest

from protocol.messages import Ack, PlayMove, RacerResigned, Resign, ServerMessage, Update
from tests.end_to_end.conftest import (
    ServerFactory,
    board_lists,
    eventually,
    start_race,
)
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line

pytestmark = pytest.mark.asyncio


async def test_a_racer_who_reconnects_with_the_token_gets_the_seat_and_board_back(start_server: ServerFactory) -> None:
    line = winning_line()
    async with start_server(deal=str(ANTARES_DEAL)) as srv:
        race = await start_race(srv, "antares")
        ann, bob = race.racers
        replica = new_antares()
        for text in line[:15]:
            await ann.request(partial(PlayMove, room=race.code, move=text))
            replica.apply(replica.parse_move(text))
        before = race.mirror(0).board(0)
        assert before == board_lists(replica.public_piles())

        await ann.close()
        await eventually(lambda: not race.mirror(1).view().racers[0].connected, what="Bob seeing Ann gone")
        back = await srv.connect("Ann", resume=ann.resume)
        assert back.player == ann.player
        assert back.resume == ann.resume
        # The seat comes back by itself: Joined as racer in seat 0, then a snapshot.
        mirror = await eventually(lambda: back.rooms.get(race.code), what="the snapshot after hello")
        assert back.roles[race.code] == "racer"
        assert mirror.board(0) == before
        assert mirror.board(1) is None  # still racing: Bob's board stays hidden
        assert mirror.view().state == "racing"
        await eventually(lambda: race.mirror(1).view().racers[0].connected, what="Bob seeing Ann back")

        # The race goes on from where Ann was: she wins it.
        for text in line[15:]:
            ack = await back.request(partial(PlayMove, room=race.code, move=text))
            assert isinstance(ack, Ack)
            replica.apply(replica.parse_move(text))
        assert replica.is_won()
        await bob.request(lambda i: Resign(id=i, room=race.code))
        results = await eventually(lambda: back.rooms[race.code].view().results, what="results")
    assert [(r.seat, r.finished, r.moves) for r in results] == [(0, True, len(line)), (1, False, 0)]


async def test_a_racer_away_longer_than_the_grace_period_is_resigned(start_server: ServerFactory) -> None:
    async with start_server(grace=1.0) as srv:
        race = await start_race(srv, "scorpion")
        ann, bob = race.racers
        events: list[ServerMessage] = []
        bob.listen(lambda room, message: events.append(message))
        await ann.close()
        await eventually(lambda: not race.mirror(1).view().racers[0].connected, what="Bob seeing Ann gone")
        resigned = await eventually(
            lambda: [e for m in events if isinstance(m, Update) for e in m.events if isinstance(e, RacerResigned)],
            timeout=3.0,
            what="Ann resigned",
        )
        assert [(e.seat, e.reason) for e in resigned] == [(0, "disconnected")]
        view = race.mirror(1).view()
        assert view.racers[0].resigned == "disconnected"
        assert view.state == "racing"  # Bob races on alone
        assert race.mirror(1).board(0) is None

        # Coming back too late, Ann is still in the room but out of the race.
        back = await srv.connect("Ann", resume=ann.resume)
        mirror = await eventually(lambda: back.rooms.get(race.code), what="Ann's snapshot")
        assert mirror.view().racers[0].resigned == "disconnected"
        assert mirror.board(1) is not None  # out of the race, she may watch Bob's board

        await bob.request(lambda i: Resign(id=i, room=race.code))
        results = await eventually(lambda: race.mirror(1).view().results, what="results")
    assert {r.seat for r in results} == {0, 1}
    assert not any(r.finished for r in results)
