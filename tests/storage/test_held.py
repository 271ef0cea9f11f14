"""Held ranked daily entries against a real Redis: never on the board or in the statistics
while held, however the entry is recorded; released once, with both; refused ones never."""

from __future__ import annotations

import pytest

from server.storage.connection import Storage
from server.storage.held import Held, HeldEntries, Released

pytestmark = pytest.mark.asyncio

DAY = "2026-12-04"


def finished(name: str, time_ms: int = 90_000, refused: bool = False) -> Held:
    return Held(name, True, time_ms, 80, 52, 0, held=1, refused=refused)


async def names(held: HeldEntries) -> list[str]:
    return [entry.name for entry in await held.top("antares", DAY, 10)]


async def record(held: HeldEntries, player: str, entry: Held) -> bool:
    """What the recorder does for an entry it admits (statistics aside)."""
    return await held.record_daily(
        "antares", DAY, player, entry.name, entry.finished, entry.time_ms, entry.moves, entry.home, entry.ordered
    )


async def test_a_held_entry_stays_off_the_board_until_released(store: Storage) -> None:
    held = HeldEntries(store)
    assert await record(held, "bob", finished("Bob", 120_000))
    assert await held.hold("antares", DAY, "ann", finished("Ann"))
    assert not await held.hold("antares", DAY, "ann", finished("Ann", 1))  # once: the first stays
    assert not await record(held, "ann", finished("Ann"))  # a retried recording adds nothing
    assert await names(held) == ["Bob"]
    assert await held.around("antares", DAY, "ann", 2) == []
    assert (await held.stats("antares", "ann", DAY)).daily_attempts == 0
    assert await held.held("antares", DAY, "ann") == finished("Ann")

    assert await held.release("antares", DAY, "ann") is Released.RELEASED
    assert await names(held) == ["Ann", "Bob"]  # 90 s before 120 s
    stats = await held.stats("antares", "ann", DAY)
    assert (stats.daily_attempts, stats.daily_wins, stats.best_time_ms) == (1, 1, 90_000)
    assert await held.held("antares", DAY, "ann") is None
    assert await held.release("antares", DAY, "ann") is Released.NOT_HELD
    assert not await record(held, "ann", finished("Ann"))
    assert await names(held) == ["Ann", "Bob"]


async def test_an_entry_on_the_board_is_never_held(store: Storage) -> None:
    held = HeldEntries(store)
    assert await record(held, "ann", finished("Ann"))
    assert not await held.hold("antares", DAY, "ann", finished("Ann"))
    assert await held.held("antares", DAY, "ann") is None
    assert await names(held) == ["Ann"]


async def test_a_refused_entry_is_never_released(store: Storage) -> None:
    held = HeldEntries(store)
    assert await held.hold("antares", DAY, "ann", finished("Ann", 669, refused=True))
    assert await held.release("antares", DAY, "ann") is Released.REFUSED
    assert not await record(held, "ann", finished("Ann", 669))
    assert await names(held) == []
    assert (await held.stats("antares", "ann", DAY)).daily_attempts == 0


async def test_a_release_that_failed_half_way_completes_when_repeated(store: Storage) -> None:
    held = HeldEntries(store)
    assert await held.hold("antares", DAY, "ann", finished("Ann"))
    # The statistics were counted, then the board write failed: the hold is still there.
    await held.daily_result("antares", "ann", DAY, True, 90_000)
    assert await held.release("antares", DAY, "ann") is Released.RELEASED
    assert await names(held) == ["Ann"]
    assert (await held.stats("antares", "ann", DAY)).daily_attempts == 1
