"""A whole race through the real server: ready, countdown, moves, finishes, results, reveal."""

from __future__ import annotations

import time
from functools import partial

import pytest

from protocol.fairness import verify
from protocol.messages import (
    Ack,
    PlayMove,
    RaceOver,
    RacerFinished,
    Resign,
    ServerMessage,
    StateChanged,
    Update,
)
from tests.end_to_end.conftest import (
    ServerFactory,
    board_lists,
    eventually,
    open_room,
    ready_and_race,
)
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line

pytestmark = pytest.mark.asyncio


def keep(into: list[ServerMessage], room: str, message: ServerMessage) -> None:
    """A client listener (bound to its list with ``partial``) that keeps every message it hears."""
    into.append(message)


async def test_two_racers_race_a_known_deal_from_ready_to_results(start_server: ServerFactory) -> None:
    line = winning_line()
    async with start_server(deal=str(ANTARES_DEAL)) as srv:
        race = await open_room(srv, "antares")
        ann, bob = race.racers
        heard: dict[int, list[ServerMessage]] = {0: [], 1: []}
        for seat, racer in enumerate(race.racers):
            racer.listen(partial(keep, heard[seat]))

        await ready_and_race(race)
        began = time.monotonic()
        dealt = board_lists(new_antares().public_piles())
        for seat in (0, 1):
            assert race.mirror(seat).board(seat) == dealt
            assert race.mirror(seat).board(1 - seat) is None  # a rival's board is hidden while racing

        # Ann plays the winning line; every move is acknowledged with its canonical text.
        for text in line:
            ack = await ann.request(partial(PlayMove, room=race.code, move=text))
            assert isinstance(ack, Ack)
            assert ack.move == text
        ann_done = await eventually(lambda: race.mirror(1).view().racers[0].finished_ms, what="Ann finished")
        mine = race.mirror(0).view()
        assert mine.racers[0].progress.won
        assert mine.racers[0].progress.home == 52
        assert mine.state == "racing"  # Bob still races
        # Done racing, Ann sees Bob's board; Bob still does not see hers.
        await eventually(lambda: race.mirror(0).board(1) == dealt, what="Ann seeing Bob's board")
        assert race.mirror(1).board(0) is None

        for text in line:
            await bob.request(partial(PlayMove, room=race.code, move=text))
        elapsed_ms = (time.monotonic() - began) * 1000
        await eventually(lambda: all(race.mirror(seat).view().results for seat in (0, 1)), what="results at both seats")

    for seat in (0, 1):
        view = race.mirror(seat).view()
        assert view.state == "finished"
        results = view.results
        assert results is not None
        assert [(r.place, r.seat, r.name, r.finished) for r in results] == [(1, 0, "Ann", True), (2, 1, "Bob", True)]
        assert results[0].time_ms == ann_done
        assert results[0].time_ms is not None
        assert results[1].time_ms is not None
        assert 0 < results[0].time_ms < results[1].time_ms <= elapsed_ms + 1000
        assert [(r.moves, r.home) for r in results] == [(len(line), 52), (len(line), 52)]
        # After the race every board is public: both are won.
        assert race.mirror(seat).board(0) == race.mirror(seat).board(1)

        events = [e for m in heard[seat] if isinstance(m, Update) for e in m.events]
        finishes = [e for e in events if isinstance(e, RacerFinished)]
        assert [(e.seat, e.moves) for e in finishes] == [(0, len(line)), (1, len(line))]
        states = [e.state for e in events if isinstance(e, StateChanged)]
        assert states == ["countdown", "racing", "finished"]
        overs = [e for e in events if isinstance(e, RaceOver)]
        assert len(overs) == 1
        assert overs[0].results == results
        reveal = overs[0].reveal
        assert reveal is not None
        assert reveal.deal == str(ANTARES_DEAL)
        assert view.commitment is not None
        assert verify("antares", reveal.deal, reveal.salt, view.commitment)


async def test_a_race_ends_when_the_last_racer_resigns(start_server: ServerFactory) -> None:
    """A finisher beats a racer who resigns, whatever the resigner's progress."""
    line = winning_line()
    async with start_server(deal=str(ANTARES_DEAL)) as srv:
        race = await open_room(srv, "antares")
        ann, bob = race.racers
        await ready_and_race(race)
        for text in line[:10]:
            await bob.request(partial(PlayMove, room=race.code, move=text))
        for text in line:
            await ann.request(partial(PlayMove, room=race.code, move=text))
        await bob.request(lambda i: Resign(id=i, room=race.code))
        results = await eventually(lambda: race.mirror(1).view().results, what="results")
    assert [(r.seat, r.finished, r.moves) for r in results] == [(0, True, len(line)), (1, False, 10)]
    assert race.mirror(1).view().racers[1].resigned
