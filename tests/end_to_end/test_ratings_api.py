"""Ratings and race statistics through the real server: a race between two players moves
their Glicko-2 ratings (shown in the results) and counts in both players' statistics."""

from __future__ import annotations

from functools import partial

import pytest

from client.lib.connection import RaceClient
from protocol.messages import (
    AskStats,
    CreateRoom,
    Joined,
    PlayerStats,
    PlayMove,
    RaceOver,
    Ready,
    Resign,
    RoomOptions,
    ServerMessage,
    Update,
)
from server.competition.ratings import DEFAULT_RATING, DEFAULT_RD, Rating, rate_race
from tests.end_to_end.conftest import ServerFactory, eventually, start_race
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio


async def finished_stats(client: RaceClient) -> PlayerStats:
    """``client``'s Antares statistics once they count a finished race: the server writes them
    just after the race's own write, so a moment after the results are shown."""

    async def ask() -> PlayerStats:
        reply = await client.request(lambda i: AskStats(id=i, variant="antares"))
        assert isinstance(reply, PlayerStats)
        return reply

    return await eventually_async(ask, lambda stats: stats.races_finished > 0)


def race_overs(heard: list[ServerMessage]) -> list[RaceOver]:
    return [e for m in heard if isinstance(m, Update) for e in m.events if isinstance(e, RaceOver)]


async def test_a_two_player_race_moves_both_ratings_and_counts_in_both_statistics(
    start_server: ServerFactory,
) -> None:
    line = winning_line()
    async with start_server(deal=str(ANTARES_DEAL)) as srv:
        race = await start_race(srv, "antares")
        ann, bob = race.racers
        heard: list[ServerMessage] = []
        bob.listen(lambda room, message: heard.append(message))
        for text in line:
            await ann.request(partial(PlayMove, room=race.code, move=text))
        await bob.request(lambda i: Resign(id=i, room=race.code))
        results = await eventually(lambda: race.mirror(1).view().results, what="results")

        # Two new players (1500, RD 350): the winner gains what the loser loses, exactly as
        # Glicko-2 says for one game between them.
        expected = rate_race([Rating(), Rating()], [1, 2])
        assert [(r.name, r.place, r.finished) for r in results] == [("Ann", 1, True), ("Bob", 2, False)]
        winner, loser = results
        assert winner.rating == pytest.approx(expected[0].rating)
        assert loser.rating == pytest.approx(expected[1].rating)
        assert winner.rating_change is not None
        assert winner.rating_change > 0
        assert loser.rating_change is not None
        assert loser.rating_change < 0
        assert winner.rating_change == pytest.approx(expected[0].rating - DEFAULT_RATING)
        assert loser.rating_change == pytest.approx(expected[1].rating - DEFAULT_RATING)
        # The race's end carried the ratings too, not only the room's final snapshot.
        overs = race_overs(heard)
        assert len(overs) == 1
        assert overs[0].results == results
        assert race.mirror(0).view().results == results

        # Statistics are written just after the race's own write (retried while storage is away).
        mine = await finished_stats(ann)
        assert (mine.player, mine.name) == (ann.player, "Ann")
        assert (mine.races_started, mine.races_won, mine.races_finished) == (1, 1, 1)
        assert mine.best_time_ms == winner.time_ms
        assert (mine.daily_attempts, mine.daily_wins, mine.current_streak) == (0, 0, 0)
        assert mine.rating == pytest.approx(winner.rating)
        assert mine.rating_deviation == pytest.approx(expected[0].rd)
        assert mine.rating_deviation < DEFAULT_RD

        # Anyone may look up a player's statistics by id.
        theirs = await ann.request(lambda i: AskStats(id=i, variant="antares", player=bob.player))
        assert isinstance(theirs, PlayerStats)
        assert (theirs.player, theirs.name) == (bob.player, "Bob")
        assert (theirs.races_started, theirs.races_won, theirs.races_finished) == (1, 0, 0)
        assert theirs.best_time_ms is None
        assert theirs.rating == pytest.approx(loser.rating)

        # Ratings are per game: Ann's Scorpion rating has not moved.
        other_game = await ann.request(lambda i: AskStats(id=i, variant="scorpion"))
        assert isinstance(other_game, PlayerStats)
        assert (other_game.rating, other_game.rating_deviation) == (DEFAULT_RATING, DEFAULT_RD)
        assert other_game.races_started == 0


async def test_a_race_alone_is_not_rated(start_server: ServerFactory) -> None:
    line = winning_line()
    async with start_server(deal=str(ANTARES_DEAL)) as srv:
        ann = await srv.connect("Ann")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=1)))
        assert isinstance(created, Joined)
        code = created.room
        await ann.request(lambda i: Ready(id=i, room=code))
        await ann.wait_room(code, lambda m: m.view().state == "racing" and m.board(0) is not None)
        for text in line:
            await ann.request(partial(PlayMove, room=code, move=text))
        results = (await ann.wait_room(code, lambda m: m.view().results is not None)).view().results
        assert results is not None
        assert [(r.place, r.finished, r.rating, r.rating_change) for r in results] == [(1, True, None, None)]

        stats = await finished_stats(ann)
        assert (stats.races_started, stats.races_finished) == (1, 1)
        assert stats.best_time_ms == results[0].time_ms
        assert (stats.rating, stats.rating_deviation) == (DEFAULT_RATING, DEFAULT_RD)
