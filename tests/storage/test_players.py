"""Players in Redis: the token secret, names, creation counts, daily attempts."""

from __future__ import annotations

import pytest

from server.storage.connection import Storage
from server.storage.players import PlayerStore

pytestmark = pytest.mark.asyncio


async def test_server_secret_is_created_once_and_shared(store: Storage, redis_url: str) -> None:
    secret = await PlayerStore(store).server_secret()
    assert len(secret) == 32
    other_process = await Storage.connect(redis_url, prefix=store.prefix)
    try:
        assert await PlayerStore(other_process).server_secret() == secret
    finally:
        await other_process.close()


async def test_players_are_saved_renamed_and_looked_up(store: Storage) -> None:
    players = PlayerStore(store)
    assert await players.name("p1") is None
    await players.save_name("p1", "Ada")
    await players.save_name("p1", "Ada L.")
    assert await players.name("p1") == "Ada L."


async def test_rooms_created_are_counted_per_hour(store: Storage) -> None:
    players = PlayerStore(store)
    assert [await players.count_creation("p1", 7) for _ in range(3)] == [1, 2, 3]
    assert await players.count_creation("p1", 8) == 1
    assert await players.count_creation("p2", 7) == 1


async def test_only_the_first_daily_attempt_is_the_ranked_one(store: Storage) -> None:
    players = PlayerStore(store)
    assert not await players.attempted_daily("antares", "2026-12-01", "p1")
    assert await players.daily_attempt_room("antares", "2026-12-01", "p1") is None
    assert await players.start_daily_attempt("antares", "2026-12-01", "p1", "ROOMAAAA")
    assert not await players.start_daily_attempt("antares", "2026-12-01", "p1", "ROOMBBBB")
    assert await players.attempted_daily("antares", "2026-12-01", "p1")
    # The ranked attempt's room is the first one's, whatever came after.
    assert await players.daily_attempt_room("antares", "2026-12-01", "p1") == "ROOMAAAA"
    assert await players.start_daily_attempt("scorpion", "2026-12-01", "p1", "ROOMCCCC")
