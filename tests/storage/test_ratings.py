"""Rating updates: atomic against concurrent races, and once per race, on a Redis and on a Cluster."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from server.competition.ratings import Rating, rate_race
from server.storage.connection import Storage
from server.storage.ratings import RatingStore, rate_race_once
from tests.in_process_server import fresh_prefix

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def store(redis_or_cluster: str) -> AsyncIterator[Storage]:
    """Storage on the session's Redis, or on the session's Redis Cluster (a race's rating is
    two script runs in one slot there)."""
    connected = await Storage.connect(redis_or_cluster, prefix=fresh_prefix())
    try:
        yield connected
    finally:
        await connected.close()


async def test_two_races_ending_at_once_never_lose_an_update(store: Storage) -> None:
    """Ann races Bob and Cy at the same moment: her rating reflects both races."""
    first, second = await asyncio.gather(
        rate_race_once(store, "antares", "ROOM1:1", ["ann", "bob"], [1, 2]),
        rate_race_once(store, "antares", "ROOM2:1", ["ann", "cy"], [1, 2]),
    )
    ratings = RatingStore(store)
    ann = await ratings.rating("antares", "ann")
    # Whichever was stored second started from the first one's result for Ann.
    befores = {first[0][0], second[0][0]}
    assert Rating() in befores
    later = second if first[0][0] == Rating() else first
    assert later[0][0] != Rating()
    assert ann == later[0][1]
    assert await ratings.rating("antares", "bob") == first[1][1]
    assert await ratings.rating("antares", "cy") == second[1][1]


async def test_a_race_is_rated_once_however_often_it_is_asked(store: Storage) -> None:
    once = await rate_race_once(store, "scorpion", "ROOM:3", ["ann", "bob"], [2, 1])
    again = await rate_race_once(store, "scorpion", "ROOM:3", ["ann", "bob"], [2, 1])
    assert again == once
    assert once == list(zip([Rating(), Rating()], rate_race([Rating(), Rating()], [2, 1]), strict=True))
    board = await RatingStore(store).top("scorpion", 2)
    assert [entry.player for entry in board] == ["bob", "ann"]


async def test_only_the_shown_players_go_on_the_rating_board(store: Storage) -> None:
    """A guest's rating is kept, but off the board, which lists accounts only."""
    rated = await rate_race_once(store, "antares", "ROOM:1", ["ann", "guest"], [2, 1], shown={"ann"})
    ratings = RatingStore(store)
    assert [entry.player for entry in await ratings.top("antares", 5)] == ["ann"]
    assert await ratings.rating("antares", "guest") == rated[1][1] != Rating()
