"""Reading ratings against a real Redis: a new player's defaults, empty or zero-sized asks
answered at once, negative sizes refused (updates: ``test_ratings.py``)."""

from __future__ import annotations

import pytest

from server.competition.ratings import Rating
from server.storage.connection import Storage
from server.storage.ratings import RatingStore

pytestmark = pytest.mark.asyncio


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
