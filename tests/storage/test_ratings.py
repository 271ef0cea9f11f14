"""Ratings against a real Redis: a race is rated once however often its finish is retried,
concurrent races never lose an update, and empty or zero-sized asks cost no round trip."""

from __future__ import annotations

import asyncio

import pytest

from server.competition.ratings import Rating, rate_race
from server.storage.connection import Storage
from server.storage.ratings import RatedEntry, RatingStore, rate_race_once

pytestmark = pytest.mark.asyncio


async def test_a_race_is_rated_once_however_often_its_finish_is_retried(store: Storage) -> None:
    first = await rate_race_once(store, "scorpion", "ROOM1:1", ["ann", "bob"], [1, 2])
    assert [before for before, _ in first] == [Rating(), Rating()]
    winner, loser = (after for _, after in first)
    assert winner.rating > 1500 > loser.rating
    # The same race again (a retried finish): the stored answer, and no second update.
    again = await rate_race_once(store, "scorpion", "ROOM1:1", ["ann", "bob"], [1, 2])
    assert again == first
    ratings = RatingStore(store)
    assert await ratings.ratings("scorpion", ["ann", "bob"]) == [winner, loser]
    assert await ratings.top("scorpion", 5) == [RatedEntry(1, "ann", winner), RatedEntry(2, "bob", loser)]


async def test_races_rated_at_the_same_moment_keep_both_updates(store: Storage) -> None:
    # Ann is in all three races, which finish together: each update starts from the last.
    races = [("ROOMA:1", ["ann", "bob"]), ("ROOMB:1", ["ann", "cat"]), ("ROOMC:1", ["ann", "dan"])]
    await asyncio.gather(*(rate_race_once(store, "antares", race, players, [1, 2]) for race, players in races))
    ann = await RatingStore(store).rating("antares", "ann")
    # Every rival is new, so the order does not matter: three wins in a row, none lost.
    expected = Rating()
    for _ in races:
        expected = rate_race([expected, Rating()], [1, 2])[0]
    assert ann.rating == pytest.approx(expected.rating)
    assert ann.rd == pytest.approx(expected.rd)


async def test_empty_asks_answer_at_once_and_negative_sizes_are_refused(store: Storage) -> None:
    ratings = RatingStore(store)
    assert await ratings.ratings("scorpion", []) == []
    await ratings.set_ratings("scorpion", {})  # nothing to store
    assert await ratings.top("scorpion", 0) == []
    assert await ratings.around("scorpion", "nobody", 3) == []  # unrated: not on the board
    with pytest.raises(ValueError, match="negative"):
        await ratings.top("scorpion", -1)
    await ratings.set_ratings("scorpion", {"ann": Rating(1600.0, 80.0, 0.06)})
    assert await ratings.rating("scorpion", "ann") == Rating(1600.0, 80.0, 0.06)
    assert await ratings.rating("scorpion", "bob") == Rating()  # a new player's defaults
