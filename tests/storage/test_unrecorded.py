"""The ledger of races not recorded yet: a note is due only after its node had time to record
it, taking it makes it due again later (one node at a time), and done clears it."""

from __future__ import annotations

import pytest

from server.storage.connection import Storage
from server.storage.unrecorded import DUE_AFTER_MS, Noted, UnrecordedRaces

pytestmark = pytest.mark.asyncio

NOW = 1_800_000_000_000


async def test_a_note_is_due_after_its_node_had_time_and_taken_by_one_node_at_a_time(store: Storage) -> None:
    ledger = UnrecordedRaces(store)
    noted = await ledger.note("ABCD", 3, NOW)
    assert noted == Noted("ABCD", 3, NOW)
    assert await ledger.take_due(NOW + DUE_AFTER_MS - 1, 10) == []
    assert await ledger.take_due(NOW + DUE_AFTER_MS, 10) == [noted]
    # Taken: not due again for another node until that one had its time.
    assert await ledger.take_due(NOW + DUE_AFTER_MS, 10) == []
    assert await ledger.take_due(NOW + 2 * DUE_AFTER_MS, 10) == [noted]
    await ledger.done(noted)
    assert await ledger.pending() == 0
    assert await ledger.take_due(NOW + 10 * DUE_AFTER_MS, 10) == []


async def test_notes_are_taken_a_few_at_a_time(store: Storage) -> None:
    ledger = UnrecordedRaces(store)
    for race in range(1, 6):
        await ledger.note("ABCD", race, NOW)
    first = await ledger.take_due(NOW + DUE_AFTER_MS, 3)
    rest = await ledger.take_due(NOW + DUE_AFTER_MS, 3)
    assert len(first) == 3
    assert len(rest) == 2
    assert {n.race for n in first + rest} == {1, 2, 3, 4, 5}


async def test_a_room_code_that_is_no_key_part_is_refused(store: Storage) -> None:
    with pytest.raises(ValueError):
        await UnrecordedRaces(store).note("AB:CD", 1, NOW)


async def test_a_note_its_node_is_still_recording_is_put_off_and_a_cleared_one_stays_gone(store: Storage) -> None:
    ledger = UnrecordedRaces(store)
    noted = await ledger.note("ABCD", 1, NOW)
    await ledger.put_off(noted, NOW + DUE_AFTER_MS - 1)  # its node retries: not another's yet
    assert await ledger.take_due(NOW + DUE_AFTER_MS, 10) == []
    assert await ledger.take_due(NOW + 2 * DUE_AFTER_MS, 10) == [noted]
    await ledger.done(noted)
    await ledger.put_off(noted, NOW + 3 * DUE_AFTER_MS)  # a late put-off brings nothing back
    assert await ledger.pending() == 0
