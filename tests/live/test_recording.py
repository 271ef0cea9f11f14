"""A finished race's results survive the node that ran it: noted before the finishing step is
stored, cleared once recorded, and recorded by another node (another recorder on the same
Redis) when its own node died first, once however often taken up."""

from __future__ import annotations

import pytest

from protocol.messages import RoomOptions
from server.clock import now_ms
from server.live.recording import RaceRecorder
from server.live.runner import RoomRunner
from server.rooms.commands import Join, Rematch, Resign, SetReady, Tick
from server.rooms.room import Room
from server.rooms.timing import DEFAULT_TIMING
from server.storage.boards import Leaderboards
from server.storage.connection import Storage, StoreUnavailable
from server.storage.moderation import ModerationStore
from server.storage.rooms import RoomStore
from server.storage.unrecorded import DUE_AFTER_MS, Noted, UnrecordedRaces
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio


class FailsOnce(RaceRecorder):
    """A recorder whose first attempt meets Redis away."""

    failed = False

    async def _record(self, room: Room) -> None:
        if not self.failed:
            self.failed = True
            raise StoreUnavailable("Redis is away for a moment")
        await super()._record(room)


class DiesBeforeRecording(RaceRecorder):
    """A node's recorder whose node dies after storing a race's end, before recording it."""

    async def record(self, room: Room, noted: Noted | None = None) -> None:
        return None


async def finished_race(storage: Storage, recorder: RaceRecorder) -> RoomRunner:
    """Ann (``p1``) and Bob (``p2``) race room ROOMTEST once; both resign."""
    store = RoomStore(storage)
    room, step = Room.create("ROOMTEST", "scorpion", RoomOptions(), "p1", "Ann", now_ms())
    runner = RoomRunner(room, store, recorder, lambda record: 3600, lambda variant: "7", DEFAULT_TIMING)
    await store.mark_active(room.code, True)
    await runner.store_first(step)
    await runner.run(Join("p2", "Bob"))
    await runner.run(SetReady("p1", True))
    await runner.run(SetReady("p2", True))
    runner.room.record.countdown_ends = now_ms() - 1
    await runner.run(Tick())
    await runner.run(Resign("p1"))
    await runner.run(Resign("p2"))
    assert runner.finished
    return runner


async def races_of(storage: Storage, player: str) -> list[tuple[str, int]]:
    return await ModerationStore(storage).races(player)


async def test_a_race_recorded_by_its_node_leaves_no_note(store: Storage) -> None:
    await finished_race(store, RaceRecorder(store, Leaderboards(store)))
    ledger = UnrecordedRaces(store)
    await eventually_async(ledger.pending, lambda pending: pending == 0)
    assert await races_of(store, "p1") == [("ROOMTEST", 1)]


async def test_a_race_its_node_did_not_record_is_recorded_by_another_once(store: Storage) -> None:
    await finished_race(store, DiesBeforeRecording(store, Leaderboards(store)))
    ledger = UnrecordedRaces(store)
    assert await ledger.pending() == 1
    assert await races_of(store, "p1") == []
    other = RaceRecorder(store, Leaderboards(store))
    # Not before it is due: its node may still be recording it.
    assert await other.record_left_over(now_ms()) == 0
    assert await other.record_left_over(now_ms() + DUE_AFTER_MS) == 1
    assert await races_of(store, "p1") == [("ROOMTEST", 1)]
    assert await races_of(store, "p2") == [("ROOMTEST", 1)]
    assert await ledger.pending() == 0
    assert await other.record_left_over(now_ms() + 3 * DUE_AFTER_MS) == 0


async def test_a_note_whose_race_never_finished_is_dropped(store: Storage) -> None:
    """Its node died before storing the finishing step: the race goes on elsewhere, and
    whoever finishes it notes it again."""
    ledger = UnrecordedRaces(store)
    await ledger.note("NOSUCH", 1, now_ms())
    other = RaceRecorder(store, Leaderboards(store))
    assert await other.record_left_over(now_ms() + DUE_AFTER_MS) == 0
    assert await ledger.pending() == 0


async def test_a_retry_after_a_rematch_records_the_race_that_ended_not_the_new_one(store: Storage) -> None:
    recorder = FailsOnce(store, Leaderboards(store))
    runner = await finished_race(store, recorder)
    await runner.run(Rematch("p1"))  # during the retry's back-off: the room is race 2 now
    assert runner.room.record.race == 2
    ledger = UnrecordedRaces(store)
    await eventually_async(ledger.pending, lambda pending: pending == 0)
    assert recorder.failed
    assert await races_of(store, "p1") == [("ROOMTEST", 1)]


class BreaksOn(RaceRecorder):
    """A recorder that meets a bug rebuilding room BROKEN's race."""

    async def _finished_room(self, noted: Noted) -> Room | None:
        if noted.code == "BROKEN":
            raise ValueError("a record this version cannot read")
        return await super()._finished_room(noted)


async def test_a_note_that_fails_to_record_holds_up_no_other(store: Storage) -> None:
    ledger = UnrecordedRaces(store)
    await ledger.note("BROKEN", 1, now_ms() - 1)  # first in line
    await finished_race(store, DiesBeforeRecording(store, Leaderboards(store)))
    other = BreaksOn(store, Leaderboards(store))
    assert await other.record_left_over(now_ms() + DUE_AFTER_MS) == 1
    assert await races_of(store, "p1") == [("ROOMTEST", 1)]
    assert [n.code for n in await ledger.take_due(now_ms() + 3 * DUE_AFTER_MS, 10)] == ["BROKEN"]  # kept
