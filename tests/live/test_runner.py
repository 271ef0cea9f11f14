"""The room runner: stored before acknowledged, refused with the room unchanged when storage
fails, resynchronised after a lost reply, timers that wait for storage, and the spectator
delay. Storage is in memory and fails on demand (tests/doubles/rooms.py, held to Redis's
behaviour by tests/storage/test_room_store_contract.py), links send to lists, and the room's
clock moves only when a test moves it. One case runs on a real Redis paused past the reply
timeout; tests/faults/ breaks Redis under a whole server."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_asyncio

from protocol.messages import Ack, RoomOptions, Snapshot, Update
from server.connections.link import ClientLink
from server.live.clock import SYSTEM_CLOCK, RoomClock
from server.live.recording import RaceRecorder
from server.live.runner import RaceRecording, RoomRunner
from server.rooms.commands import Join, Move, SetReady
from server.rooms.room import Room
from server.rooms.timing import DEFAULT_TIMING
from server.storage.boards import Leaderboards
from server.storage.connection import Storage, StoreUnavailable
from server.storage.rooms import RoomStore, RoomStorePort, RoomWrite, VersionConflict
from tests.doubles.clock import ManualClock, settle
from tests.doubles.recording import RecordedRaces
from tests.doubles.rooms import MemoryRoomStore
from tests.doubles.sinks import ListSink, listening_link
from tests.faults.harness import RedisProcess
from tests.polling import eventually

pytestmark = pytest.mark.asyncio


@dataclass
class Bench:
    """A room of Ann (``p1``, seat 0) and Bob (``p2``), waiting, on in-memory storage and a
    manual clock; Ann follows it on ``ann`` (frames in ``ann_sink``)."""

    runner: RoomRunner
    store: MemoryRoomStore
    clock: ManualClock
    recorder: RecordedRaces
    ann: ClientLink
    ann_sink: ListSink

    async def stored_version(self) -> int:
        return await stored_version(self.store, self.runner.code)

    def ready(self, seat: int) -> bool:
        return self.runner.room.view(seat, self.clock.now_ms()).racers[seat].ready


async def stored_version(store: RoomStorePort, code: str) -> int:
    stored = await store.load(code)
    assert stored is not None
    return stored.version


async def new_room(
    store: RoomStorePort, recorder: RaceRecording, clock: RoomClock, options: RoomOptions | None = None
) -> RoomRunner:
    """A stored room of Ann and Bob, waiting."""
    room, step = Room.create("ROOMTEST", "antares", options or RoomOptions(), "p1", "Ann", clock.now_ms())
    runner = RoomRunner(room, store, recorder, lambda record: 3600, lambda variant: "7", DEFAULT_TIMING, clock=clock)
    await store.mark_active(room.code, True)
    await runner.store_first(step)
    await runner.run(Join("p2", "Bob"))
    return runner


async def bench(options: RoomOptions | None = None) -> Bench:
    clock = ManualClock()
    store, recorder = MemoryRoomStore(clock), RecordedRaces()
    runner = await new_room(store, recorder, clock, options)
    ann, ann_sink = listening_link("p1", "Ann")
    runner.audience.follow_as_racer(ann, 0)
    return Bench(runner, store, clock, recorder, ann, ann_sink)


def state_of(runner: RoomRunner) -> str:
    return runner.room.state.value


async def test_a_command_is_acknowledged_only_once_stored() -> None:
    """Storage slow to answer: nothing is sent while the write waits; then the ack comes
    first, naming the version storage holds, and the step's events after it."""
    room = await bench()
    room.store.pause()
    command = asyncio.create_task(room.runner.run(SetReady("p1", True), room.ann, 7))
    await settle()
    assert not room.ann_sink.frames, "something was sent while the write was waiting for storage"
    assert not command.done()
    assert not room.ready(0)
    room.store.resume()
    await command
    first, *rest = room.ann_sink.received
    assert isinstance(first, Ack)
    assert first.id == 7
    assert first.version == room.runner.room.version == await room.stored_version()
    assert any(isinstance(message, Update) for message in rest)


async def test_commands_arriving_while_one_is_stored_wait_their_turn() -> None:
    """The room's lock: a second command is decided on the first's outcome, never beside it."""
    room = await bench()
    version = room.runner.room.version
    room.store.pause()
    first = asyncio.create_task(room.runner.run(SetReady("p1", True), room.ann, 1))
    second = asyncio.create_task(room.runner.run(SetReady("p2", True)))
    await settle()
    room.store.resume()
    await asyncio.gather(first, second)
    assert state_of(room.runner) == "countdown"
    assert room.runner.room.version == await room.stored_version()
    assert [write.base for write in room.store.stored[-2:]] == [version, room.store.stored[-2].version]


async def test_a_command_refused_for_storage_leaves_the_room_unchanged() -> None:
    """Storage down: the command raises StoreUnavailable, nothing is sent, the room is as it
    was; once storage is back the same command goes through."""
    room = await bench()
    version, now = room.runner.room.version, room.clock.now_ms()
    before = room.runner.room.view(0, now)
    room.store.go_down()
    with pytest.raises(StoreUnavailable):
        await room.runner.run(SetReady("p1", True), room.ann, 1)
    await room.clock.advance(10)  # the resync keeps trying meanwhile, in vain
    assert not room.ann_sink.frames
    assert (room.runner.room.version, room.runner.room.view(0, now)) == (version, before)
    room.store.come_back()
    await room.runner.run(SetReady("p1", True), room.ann, 2)
    assert [ack.id for ack in room.ann_sink.of(Ack)] == [2]
    assert room.runner.room.version == version + 1 == await room.stored_version()
    assert room.ready(0)


async def test_a_room_refused_for_storage_resynchronises_by_itself_when_storage_is_back() -> None:
    """A refused command may be one nobody repeats: the room reloads without waiting for
    one, and its followers get a snapshot of what storage holds."""
    room = await bench()
    room.store.go_down()
    with pytest.raises(StoreUnavailable):
        await room.runner.run(SetReady("p1", True), room.ann, 1)
    await room.clock.advance(3)
    room.store.come_back()
    await room.clock.advance(5)  # the longest wait between two tries
    snapshots = room.ann_sink.of(Snapshot)
    assert [snapshot.version for snapshot in snapshots] == [room.runner.room.version]
    assert not room.ready(0)


async def test_a_write_whose_reply_was_lost_is_found_by_the_resync() -> None:
    """The write landed but its reply was lost: the command is refused and the room does not
    guess. It reloads from storage (by itself), sends everyone a snapshot with the truth, and
    its next command is decided on that (no version conflict, no lost or doubled step)."""
    room = await bench()
    version = room.runner.room.version
    room.store.lose_replies(1)
    with pytest.raises(StoreUnavailable):
        await room.runner.run(SetReady("p1", True), room.ann, 1)
    assert room.runner.room.version == version
    assert not room.ready(0)
    assert await room.stored_version() == version + 1  # it landed
    await room.clock.advance(0.2)
    assert room.runner.room.version == version + 1
    assert room.ready(0)
    snapshot = room.ann_sink.of(Snapshot)[-1]
    assert snapshot.version == version + 1
    assert not room.ann_sink.of(Ack)
    await room.runner.run(SetReady("p2", True))
    assert state_of(room.runner) == "countdown"
    assert await room.stored_version() == room.runner.room.version > version + 1


async def test_a_stale_room_is_refused_by_the_version_check_and_reloads() -> None:
    """Another writer moved the stored room on (a second server, or a write of ours whose
    answer was lost): the step decided on the old version is refused, not stored over it;
    the room reloads and the next command is stored on top."""
    room = await bench()
    version = room.runner.room.version
    await room.store.commit(RoomWrite(room.runner.code, 1, version, version + 1, [(0, "undo")], None, 0))
    with pytest.raises(VersionConflict) as conflict:
        await room.runner.run(SetReady("p1", True))
    assert not isinstance(conflict.value, StoreUnavailable)  # storage answered: no outage
    await room.clock.advance(0.2)
    assert room.runner.room.version == version + 1
    await room.runner.run(SetReady("p1", True))
    assert await room.stored_version() == version + 2 == room.runner.room.version


async def test_timers_wait_for_storage() -> None:
    """The countdown's end and the time limit fall while storage is down: nothing happens in
    memory; once storage is back the timer's retry stores the step, then the room applies it."""
    room = await bench(RoomOptions(time_limit=30))
    await room.runner.run(SetReady("p1", True))
    await room.runner.run(SetReady("p2", True))
    assert state_of(room.runner) == "countdown"
    room.store.go_down()
    await room.clock.advance(3 + 10)  # the countdown ended, and its retries failed
    assert state_of(room.runner) == "countdown"
    room.store.come_back()
    await room.clock.advance(5)
    assert state_of(room.runner) == "racing"
    assert await room.stored_version() == room.runner.room.version
    assert room.recorder.starts == [room.runner.code]
    # The time limit, the same way.
    room.store.go_down()
    await room.clock.advance(30 + 10)
    assert state_of(room.runner) == "racing"
    assert not room.recorder.recorded
    room.store.come_back()
    await room.clock.advance(5)
    assert state_of(room.runner) == "finished"
    assert await room.stored_version() == room.runner.room.version
    assert room.recorder.recorded == room.recorder.noted[-1:]
    assert room.recorder.recorded[0] is not None
    assert room.recorder.recorded[0].race == 1


async def test_moves_keep_the_time_limits_timer_and_the_race_still_ends_on_time() -> None:
    """A move leaves the race's end where it was: one timer stays armed for it (the runner
    keeps the one it had), and the race ends at the limit."""
    room = await bench(RoomOptions(time_limit=30))
    await room.runner.run(SetReady("p1", True))
    await room.runner.run(SetReady("p2", True))
    await room.clock.advance(3)
    assert state_of(room.runner) == "racing"
    armed = room.clock.pending()
    assert len(armed) == 1
    timers = room.clock.armed
    for _ in range(3):
        await room.clock.advance(1)
        await room.runner.run(Move("p1", room.runner.room.legal_moves("p1")[0]))
    assert room.clock.pending() == [armed[0] - 3]
    assert room.clock.armed == timers, "no timer armed again for the same deadline"
    await room.clock.advance(armed[0] - 3)
    assert state_of(room.runner) == "finished"


async def test_a_retry_timer_is_let_go_once_the_room_has_no_deadline() -> None:
    """A timer armed to retry a tick is not kept for a room that has nothing left to time."""
    room = await bench()
    room.runner._arm(0.2)
    room.runner.schedule()  # a waiting room: no deadline
    assert room.clock.pending() == []


async def test_a_timer_whose_reply_was_lost_acts_once() -> None:
    """The countdown's end was stored but its reply lost: the room finds it by reloading, and
    the timer's retry does not start the race a second time."""
    room = await bench()
    await room.runner.run(SetReady("p1", True))
    await room.runner.run(SetReady("p2", True))
    version = room.runner.room.version
    room.store.lose_replies(1)
    await room.clock.advance(3)
    assert state_of(room.runner) == "countdown"
    await room.clock.advance(5)
    assert state_of(room.runner) == "racing"
    assert room.runner.room.version == await room.stored_version() > version
    # Every write was decided on the one before it: none stored twice, none lost.
    stored = room.store.stored
    assert [write.base for write in stored[1:]] == [write.version for write in stored[:-1]]


async def test_spectators_see_events_after_the_delay_only() -> None:
    """A room with a spectator delay: racers get an event at once, spectators after the
    delay, and a spectator's snapshot during the delay shows the room as it was."""
    room = await bench(RoomOptions(spectator_delay=0.6))
    eve, eve_sink = listening_link("p9", "Eve")
    room.runner.audience.follow_as_spectator(eve)
    await room.runner.run(SetReady("p1", True), room.ann, 1)
    version = room.runner.room.version
    assert [update.version for update in room.ann_sink.of(Update)] == [version]
    assert room.runner.snapshot_for(eve).version < version
    await room.clock.advance(0.59)
    assert not eve_sink.frames
    assert room.runner.snapshot_for(eve).version < version
    await room.clock.advance(0.01)
    assert version in [update.version for update in eve_sink.of(Update)]
    assert room.runner.snapshot_for(eve).version == version


async def test_a_resync_keeps_the_spectator_delay() -> None:
    """The snapshots of a resync go to racers at once, but to spectators only after the
    delay: a storage fault must not show spectators what the delay still hides."""
    room = await bench(RoomOptions(spectator_delay=5.0))
    eve, eve_sink = listening_link("p9", "Eve")
    room.runner.audience.follow_as_spectator(eve)
    hidden = room.runner.snapshot_for(eve).version
    room.store.lose_replies(1)
    with pytest.raises(StoreUnavailable):
        await room.runner.run(SetReady("p1", True))
    await room.clock.advance(0.2)
    assert room.ready(0)
    assert room.ann_sink.of(Snapshot)
    assert room.runner.snapshot_for(eve).version == hidden
    assert not eve_sink.frames
    await room.clock.advance(5)
    assert [snapshot.version for snapshot in eve_sink.of(Snapshot)] == [room.runner.room.version]
    assert room.runner.snapshot_for(eve).version == room.runner.room.version


async def test_spectator_counts_go_out_at_most_once_a_second() -> None:
    """The first change goes out at once; the changes of the second after it go out once,
    together, at its end."""
    room = await bench()
    runner, writes = room.runner, len(room.store.stored)
    for player in ("p7", "p8", "p9"):
        runner.audience.follow_as_spectator(listening_link(player)[0])
        runner.spectators_changed()
        await settle()
        assert runner.room.spectators == 1
    await room.clock.advance(0.99)
    assert runner.room.spectators == 1
    await room.clock.advance(0.01)
    assert runner.room.spectators == 3
    assert len(room.store.stored) == writes + 2


@pytest_asyncio.fixture
async def private(tmp_path: Path) -> AsyncIterator[tuple[RedisProcess, Storage]]:
    """A Redis of this test's own (to pause), and a Storage on it."""
    redis = RedisProcess(tmp_path / "redis")
    await redis.start()
    storage = await Storage.connect(redis.url, prefix="t:")
    try:
        yield redis, storage
    finally:
        if redis.paused:
            redis.resume()
        await storage.close()
        await redis.stop()


async def test_a_write_landing_after_a_real_redis_timed_out_is_found_by_the_resync(
    private: tuple[RedisProcess, Storage],
) -> None:
    """Redis paused past the reply timeout while the write waits in its socket: the command
    is refused, yet the write lands when Redis resumes, and the room finds it by itself."""
    redis, storage = private
    store = RoomStore(storage)
    runner = await new_room(store, RaceRecorder(storage, Leaderboards(storage)), SYSTEM_CLOCK)
    ann, ann_sink = listening_link("p1", "Ann")
    runner.audience.follow_as_racer(ann, 0)
    version = runner.room.version
    redis.pause()
    with pytest.raises(StoreUnavailable):
        await runner.run(SetReady("p1", True), ann, 1)  # times out after 2 s
    assert runner.room.version == version
    redis.resume()
    assert await stored_version(store, runner.code) == version + 1  # it landed
    await eventually(lambda: runner.room.version == version + 1, what="the resync")
    assert [snapshot.version for snapshot in ann_sink.of(Snapshot)] == [version + 1]
    assert not ann_sink.of(Ack)
    await runner.run(SetReady("p2", True))
    assert await stored_version(store, runner.code) == runner.room.version
