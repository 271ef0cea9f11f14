"""Quick match through the real server: players wait in line, the server forms the race and
starts its countdown; leaving the line and dropping the connection take a player out of it."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from client.lib.connection import RaceClient, ServerError
from protocol.messages import Ack, Joined, LeaveQueue, QuickMatch, ServerMessage, Snapshot
from server.competition.matchmaking import MatchQueue
from tests.end_to_end.conftest import PATIENCE, RunningServer, ServerFactory, eventually

pytestmark = pytest.mark.asyncio

#: How long two players wait for company before they race (the server's default line).
GATHER = MatchQueue().gather_seconds
#: The wait the tests set, where the wait is not their subject.
SHORT_WAIT = 0.2
#: A countdown unlike the default and the tests' own, to see the setting's value in the room.
SET_COUNTDOWN = 2.0


@dataclass
class InLine:
    """A player who asked for a quick match, and everything the server sent them since."""

    client: RaceClient
    request: int
    heard: list[ServerMessage] = field(default_factory=list)

    def joined(self) -> Joined | None:
        """The Joined that answers the quick-match request, once the race formed."""
        return next((m for m in self.heard if isinstance(m, Joined) and m.id == self.request), None)

    def first_snapshot(self, room: str) -> Snapshot:
        return next(m for m in self.heard if isinstance(m, Snapshot) and m.room == room)


async def queue_up(srv: RunningServer, name: str) -> InLine:
    """``name`` connects and asks for an Antares quick match; returns once the server acknowledged."""
    client = await srv.connect(name)
    heard: list[ServerMessage] = []
    client.listen(lambda room, message: heard.append(message))
    request = await client.send(lambda i: QuickMatch(id=i, variant="antares"))
    await eventually(lambda: any(isinstance(m, Ack) and m.id == request for m in heard), what=f"{name} in line")
    return InLine(client, request, heard)


async def race_formed(players: list[InLine]) -> str:
    """Wait until every player got their Joined; check they share one room; return its code."""
    joined = [await eventually(p.joined, timeout=GATHER + PATIENCE, what=f"{p.client.name} matched") for p in players]
    assert {j.room for j in joined} == {joined[0].room}
    assert all(j.role == "racer" for j in joined)
    assert sorted(j.seat for j in joined if j.seat is not None) == list(range(len(players)))
    return joined[0].room


async def test_two_players_in_line_race_each_other_and_the_countdown_starts_by_itself(
    start_server: ServerFactory,
) -> None:
    async with start_server(countdown=SET_COUNTDOWN, quick_match_wait=SHORT_WAIT) as srv:
        ann = await queue_up(srv, "Ann")
        bob = await queue_up(srv, "Bob")
        code = await race_formed([ann, bob])
        for player in (ann, bob):
            joined = player.joined()
            assert joined is not None
            # The Joined comes first, then the room itself, already counting down: nobody
            # had to say ready or start.
            assert player.heard.index(joined) < player.heard.index(player.first_snapshot(code))
            view = player.first_snapshot(code).view
            assert view.state == "countdown"
            assert view.variant == "antares"
            assert view.options.max_racers == 2
            assert sorted(r.name for r in view.racers) == ["Ann", "Bob"]
            assert all(r.ready for r in view.racers)
            assert view.commitment is not None
            assert view.clock.countdown_ends is not None
            assert view.clock.countdown_ends - view.clock.now == pytest.approx(SET_COUNTDOWN * 1000, abs=500)
        # Matched, they are no longer in line.
        with pytest.raises(ServerError) as refused:
            await ann.client.request(lambda i: LeaveQueue(id=i, variant="antares"))
        assert refused.value.code == "not-in-queue"


async def test_four_players_in_line_race_at_once(start_server: ServerFactory) -> None:
    # Two or three would wait a minute for company: four make a full race at once.
    async with start_server(quick_match_wait=60.0) as srv:
        line = [await queue_up(srv, name) for name in ("Ann", "Bob", "Cid", "Dee")]
        code = await race_formed(line)
        view = line[0].first_snapshot(code).view
        assert view.options.max_racers == 4
        assert sorted(r.name for r in view.racers) == ["Ann", "Bob", "Cid", "Dee"]
        assert view.state == "countdown"


async def test_a_player_who_leaves_the_line_is_not_matched(start_server: ServerFactory) -> None:
    async with start_server(quick_match_wait=SHORT_WAIT) as srv:
        ann = await queue_up(srv, "Ann")
        left = await ann.client.request(lambda i: LeaveQueue(id=i, variant="antares"))
        assert isinstance(left, Ack)
        with pytest.raises(ServerError) as refused:
            await ann.client.request(lambda i: LeaveQueue(id=i, variant="antares"))
        assert refused.value.code == "not-in-queue"

        bob = await queue_up(srv, "Bob")
        cid = await queue_up(srv, "Cid")
        code = await race_formed([bob, cid])
        # Had Ann still been waiting (the longest), she would lead this race.
        assert sorted(r.name for r in bob.first_snapshot(code).view.racers) == ["Bob", "Cid"]
        assert ann.joined() is None
        assert code not in ann.client.rooms


async def test_a_player_whose_connection_dropped_is_taken_out_of_the_line(start_server: ServerFactory) -> None:
    async with start_server(quick_match_wait=SHORT_WAIT) as srv:
        ann = await queue_up(srv, "Ann")
        await ann.client.close()
        bob = await queue_up(srv, "Bob")
        cid = await queue_up(srv, "Cid")
        code = await race_formed([bob, cid])
        # Nobody races a player who is gone: the race is the two who are still here.
        view = bob.first_snapshot(code).view
        assert sorted(r.name for r in view.racers) == ["Bob", "Cid"]
        assert all(r.connected for r in view.racers)
