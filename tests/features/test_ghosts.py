"""Ghost races through the real server (server/features/ghosts.py): race a finished run as a
replay names it, or a kept best run by deal; the ghost shows progress only while you race,
finishes in its own time, and never opens today's daily challenge."""

from __future__ import annotations

import asyncio
from functools import partial

import pytest

from client.lib.connection import RaceClient, ServerError
from protocol.messages import CreateRoom, Joined, PlayMove, RaceGhost, Ready, Resign, RoomOptions
from server.clock import now_ms
from server.competition.daily import utc_date
from tests.end_to_end.conftest import RunningServer, eventually
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio

#: Seconds between the recorded run's moves: long enough to see the ghost play them one by one.
PACE = 0.02


async def won_practice(racer: RaceClient) -> str:
    """``racer`` wins a practice room on the known Antares deal at :data:`PACE`; the room's code."""
    options = RoomOptions(max_racers=1, deal=str(ANTARES_DEAL))
    created = await racer.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
    assert isinstance(created, Joined)
    await racer.request(lambda i: Ready(id=i, room=created.room))
    await eventually(lambda: racer.rooms[created.room].view().state == "racing", what="racing")
    for text in winning_line():
        await racer.request(partial(PlayMove, room=created.room, move=text))
        await asyncio.sleep(PACE)
    await eventually(lambda: racer.rooms[created.room].view().results, what="results")
    return created.room


async def ghost_race(racer: RaceClient, build: partial[RaceGhost]) -> str:
    joined = await racer.request(build)
    assert isinstance(joined, Joined)
    assert joined.seat == 0
    return joined.room


async def test_a_finished_run_races_as_a_ghost_seen_as_progress_until_you_are_done(server: RunningServer) -> None:
    ann, bob = await server.connect("Ann"), await server.connect("Bob")
    source = await won_practice(ann)
    [ann_result] = ann.rooms[source].view().results or []

    code = await ghost_race(bob, partial(RaceGhost, room=source, seat=0))
    mirror = bob.rooms[code]
    ghost = mirror.view().racers[1]
    assert (ghost.name, ghost.ghost, ghost.ready) == ("Ann", True, True)
    # The countdown starts at once; the ghost plays its moves on their recorded timing.
    await eventually(lambda: mirror.view().racers[1].progress.moves >= 3, what="the ghost moving")
    assert mirror.view().state == "racing"
    assert mirror.view().racers[1].board is None  # its board is not shown while Bob races
    await bob.request(lambda i: Resign(id=i, room=code))
    results = await eventually(lambda: mirror.view().results, what="results")
    first = results[0]
    assert (first.seat, first.ghost, first.finished, first.time_ms) == (1, True, True, ann_result.time_ms)
    assert mirror.view().racers[1].board is not None  # done: every board is shown
    assert not any(r.rating is not None for r in results)  # never rated


async def test_a_kept_best_run_races_by_deal_yours_by_default_or_by_rank(server: RunningServer) -> None:
    ann, bob = await server.connect("Ann"), await server.connect("Bob")
    await won_practice(ann)
    deal = partial(RaceGhost, variant="antares", deal=f"00{ANTARES_DEAL}")  # any spelling of the deal

    async def kept() -> str | None:
        try:
            return await ghost_race(ann, deal)
        except ServerError as error:
            if error.code != "no-such-race":  # else not recorded yet: recording follows the race
                raise
            return None

    mine = await eventually_async(kept, lambda room: room is not None)
    assert mine is not None
    assert ann.rooms[mine].view().racers[1].name == "Ann"
    for build in (partial(deal, rank=1), partial(deal, player=ann.player)):
        room = await ghost_race(bob, build)
        assert bob.rooms[room].view().racers[1].name == "Ann"
    with pytest.raises(ServerError) as missing:
        await ghost_race(bob, deal)  # Bob has no run on the deal
    assert missing.value.code == "no-such-race"


@pytest.mark.parametrize(
    ("build", "code"),
    [
        (partial(RaceGhost, variant="antares", date="today"), "daily-secret"),
        (partial(RaceGhost, variant="antares"), "invalid-options"),
        (partial(RaceGhost, variant="antares", deal="617", date="2020-01-01"), "invalid-options"),
        (partial(RaceGhost, variant="antares", deal="no deal"), "invalid-options"),
        (partial(RaceGhost, room="NOSUCHROOM"), "no-such-room"),
    ],
)
async def test_a_ghost_that_cannot_be_raced_is_refused_clearly(
    server: RunningServer, build: partial[RaceGhost], code: str
) -> None:
    eve = await server.connect("Eve")
    if build.keywords.get("date") == "today":
        build = partial(build, date=utc_date(now_ms()))
    with pytest.raises(ServerError) as refused:
        await eve.request(build)
    assert refused.value.code == code


async def test_a_run_of_an_unfinished_race_or_an_empty_seat_is_refused(server: RunningServer) -> None:
    ann, bob = await server.connect("Ann"), await server.connect("Bob")
    source = await won_practice(ann)
    with pytest.raises(ServerError) as empty:
        await ghost_race(bob, partial(RaceGhost, room=source, seat=3))
    assert empty.value.code == "no-such-seat"
    created = await ann.request(lambda i: CreateRoom(id=i, variant="antares"))
    assert isinstance(created, Joined)
    with pytest.raises(ServerError) as unfinished:
        await ghost_race(bob, partial(RaceGhost, room=created.room))
    assert unfinished.value.code == "not-finished"
