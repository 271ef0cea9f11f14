"""The room runner against a real Redis: stored before acknowledged, refused with the room
unchanged when storage fails, resynchronised after a lost reply, timers that wait for Redis,
and the spectator delay. Links are real websocket connections (a server in this process);
failures come from a private Redis paused (SIGSTOP) or killed."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from protocol.codec import decode_server
from protocol.messages import Ack, RoomOptions, ServerMessage, Snapshot, Update
from server.clock import now_ms
from server.connections.limits import Offences, TokenBucket
from server.connections.link import ClientLink
from server.live.recording import RaceRecorder
from server.live.runner import RoomRunner
from server.rooms.commands import Join, SetReady
from server.rooms.room import Room
from server.rooms.timing import DEFAULT_TIMING
from server.storage.boards import Leaderboards
from server.storage.connection import Storage, StoreUnavailable
from server.storage.rooms import Committed, RoomStore, RoomWrite, VersionConflict
from tests.faults.harness import RedisProcess
from tests.polling import eventually

pytestmark = pytest.mark.asyncio


@dataclass
class Peer:
    """The client end of a real websocket whose server end is wrapped in a :class:`ClientLink`."""

    link: ClientLink
    socket: ClientConnection
    received: list[ServerMessage] = field(default_factory=list)
    times: list[float] = field(default_factory=list)

    async def read(self) -> None:
        with contextlib.suppress(ConnectionClosed):
            async for frame in self.socket:
                assert isinstance(frame, bytes)
                self.received.append(decode_server(frame))
                self.times.append(time.monotonic())

    def of(self, kind: type[ServerMessage]) -> list[ServerMessage]:
        return [m for m in self.received if isinstance(m, kind)]


@pytest_asyncio.fixture
async def peers() -> AsyncIterator[Callable[[str, str], contextlib.AbstractAsyncContextManager[Peer]]]:
    """``async with peer(player, name) as p``: a websocket pair whose server end is ``p.link``."""
    accepted: asyncio.Queue[ServerConnection] = asyncio.Queue()

    async def handler(socket: ServerConnection) -> None:
        accepted.put_nowait(socket)
        await socket.wait_closed()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]

        @contextlib.asynccontextmanager
        async def peer(player: str, name: str) -> AsyncIterator[Peer]:
            async with connect(f"ws://127.0.0.1:{port}") as socket:
                link = ClientLink(await accepted.get(), TokenBucket(50, 100), Offences(200, 10), player, name)
                found = Peer(link, socket)
                reader = asyncio.create_task(found.read())
                try:
                    yield found
                finally:
                    await socket.close()
                    await reader

        yield peer


def recorder(storage: Storage) -> RaceRecorder:
    return RaceRecorder(storage, Leaderboards(storage))


async def new_runner(storage: Storage, options: RoomOptions | None = None) -> RoomRunner:
    """A stored room of Ann (``p1``) and Bob (``p2``), waiting."""
    store = RoomStore(storage)
    room, step = Room.create("ROOMTEST", "antares", options or RoomOptions(), "p1", "Ann", now_ms())
    runner = RoomRunner(room, store, recorder(storage), lambda record: 3600, lambda variant: "7", DEFAULT_TIMING)
    await store.mark_active(room.code, True)
    await runner.store_first(step)
    await runner.run(Join("p2", "Bob"))
    return runner


def state_of(runner: RoomRunner) -> str:
    return runner.room.state.value


async def stored_version(storage: Storage, code: str) -> int:
    stored = await RoomStore(storage).load(code)
    assert stored is not None
    return stored.version


@pytest_asyncio.fixture
async def private(tmp_path: Path) -> AsyncIterator[tuple[RedisProcess, Storage]]:
    """A Redis of this test's own (to pause and kill), and a Storage on it."""
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


async def test_a_command_is_acknowledged_only_once_stored(
    private: tuple[RedisProcess, Storage], peers: Callable[[str, str], contextlib.AbstractAsyncContextManager[Peer]]
) -> None:
    """Redis paused for less than the reply timeout: the ack waits for Redis, then names the
    version Redis holds."""
    redis, storage = private
    runner = await new_runner(storage)
    async with peers("p1", "Ann") as ann:
        runner.audience.follow_as_racer(ann.link, 0)
        redis.pause()
        command = asyncio.create_task(runner.run(SetReady("p1", True), ann.link, 7))
        await asyncio.sleep(0.8)
        assert not ann.received, "something was sent while the write was waiting for Redis"
        assert not command.done()
        resumed = time.monotonic()
        redis.resume()
        await command
        await eventually(lambda: ann.of(Ack))
        ack = ann.of(Ack)[0]
        assert isinstance(ack, Ack)
        assert ack.id == 7
        assert ann.times[0] >= resumed
        assert ack.version == runner.room.version == await stored_version(storage, runner.code)
        # The ack comes first, then the events of the step.
        assert isinstance(ann.received[0], Ack)
        await eventually(lambda: ann.of(Update))


async def test_a_command_refused_for_storage_leaves_the_room_unchanged(
    private: tuple[RedisProcess, Storage], peers: Callable[[str, str], contextlib.AbstractAsyncContextManager[Peer]]
) -> None:
    """Redis killed: the command raises StoreUnavailable, nothing is sent, the room is as it
    was; once Redis is back the same command goes through."""
    redis, storage = private
    runner = await new_runner(storage)
    before = (runner.room.version, runner.room.view(0, 0))
    async with peers("p1", "Ann") as ann:
        runner.audience.follow_as_racer(ann.link, 0)
        await redis.kill()
        with pytest.raises(StoreUnavailable):
            await runner.run(SetReady("p1", True), ann.link, 1)
        await asyncio.sleep(0.1)
        assert not ann.received
        assert (runner.room.version, runner.room.view(0, 0)) == before
        await redis.start()
        await runner.run(SetReady("p1", True), ann.link, 2)
        await eventually(lambda: ann.of(Ack))
        assert runner.room.version == before[0] + 1 == await stored_version(storage, runner.code)
        assert runner.room.view(0, 0).racers[0].ready


async def test_a_write_whose_reply_was_lost_is_found_by_the_resync(
    private: tuple[RedisProcess, Storage], peers: Callable[[str, str], contextlib.AbstractAsyncContextManager[Peer]]
) -> None:
    """Redis paused past the reply timeout while the write waits in its socket: the command
    is refused, yet the write lands when Redis resumes. The room does not guess: it reloads
    from Redis (by itself, once Redis answers), sends everyone a snapshot with the truth, and
    its next command is decided on that (no version conflict, no lost or doubled entry)."""
    redis, storage = private
    runner = await new_runner(storage)
    version = runner.room.version
    async with peers("p1", "Ann") as ann:
        runner.audience.follow_as_racer(ann.link, 0)
        redis.pause()
        with pytest.raises(StoreUnavailable):
            await runner.run(SetReady("p1", True), ann.link, 1)  # times out after 2 s
        assert runner.room.version == version
        assert not runner.room.view(0, 0).racers[0].ready
        redis.resume()
        assert await stored_version(storage, runner.code) == version + 1  # it landed
        await eventually(lambda: runner.room.version == version + 1, what="the resync")
        assert runner.room.view(0, 0).racers[0].ready
        snapshot = await eventually(lambda: ann.of(Snapshot))
        assert isinstance(snapshot[-1], Snapshot)
        assert snapshot[-1].version == version + 1
        assert not ann.of(Ack)
        await runner.run(SetReady("p2", True))
        assert await stored_version(storage, runner.code) == runner.room.version


async def test_a_stale_room_is_refused_by_the_version_check_and_reloads(redis_url: str) -> None:
    """Another writer moved the stored room on (a second server, or a write of ours whose
    answer was lost): the step decided on the old version is refused, not stored over it;
    the room reloads and the next command is stored on top."""
    storage = await Storage.connect(redis_url, prefix=f"t:{time.monotonic_ns()}:")
    try:
        runner = await new_runner(storage)
        store = RoomStore(storage)
        version = runner.room.version
        other = RoomWrite(runner.code, 1, version, version + 1, [(0, "undo")], None, 0)
        assert await store.commit(other) is Committed.STORED
        with pytest.raises(VersionConflict):  # the same write twice: harmless, nothing doubled
            await store.commit(other)
        assert await store.logs(runner.code, 1) == {0: ["undo"]}
        # The runner's next step goes from the version it knows to the one now stored: not
        # the same step, so not "already stored" (the old script acknowledged it unstored).
        with pytest.raises(VersionConflict) as conflict:
            await runner.run(SetReady("p1", True))
        assert not isinstance(conflict.value, StoreUnavailable)  # Redis answered: no outage
        await eventually(lambda: runner.room.version == version + 1, what="the reload")
        await runner.run(SetReady("p1", True))
        assert await stored_version(storage, runner.code) == version + 2 == runner.room.version
    finally:
        await storage.close()


async def test_timers_wait_for_redis(private: tuple[RedisProcess, Storage]) -> None:
    """The countdown's end and the time limit fall while Redis is paused: nothing happens in
    memory; once Redis is back the timer's retry stores the step, then the room applies it.
    (The test moves the deadlines close in memory instead of waiting 3 s and 30 s.)"""
    redis, storage = private
    runner = await new_runner(storage, RoomOptions(time_limit=30))
    await runner.run(SetReady("p1", True))
    await runner.run(SetReady("p2", True))
    assert state_of(runner) == "countdown"
    redis.pause()
    runner.room.record.countdown_ends = now_ms() + 100
    runner.schedule()
    await asyncio.sleep(2.6)  # the timer fired and its write timed out
    assert state_of(runner) == "countdown"
    redis.resume()
    await eventually(lambda: state_of(runner) == "racing", what="the race to start")
    stored = await RoomStore(storage).load(runner.code)
    assert stored is not None
    assert stored.version == runner.room.version
    # The time limit, the same way.
    redis.pause()
    runner.room.record.ends = now_ms() + 100
    runner.schedule()
    await asyncio.sleep(2.6)
    assert state_of(runner) == "racing"
    redis.resume()
    await eventually(lambda: state_of(runner) == "finished", what="the race to end", timeout=15)
    assert await stored_version(storage, runner.code) == runner.room.version


async def test_spectators_see_events_after_the_delay_only(
    redis_url: str, peers: Callable[[str, str], contextlib.AbstractAsyncContextManager[Peer]]
) -> None:
    """A room with a spectator delay: racers get an event at once, spectators after the
    delay, and a spectator's snapshot during the delay shows the room as it was."""
    storage = await Storage.connect(redis_url, prefix=f"t:{time.monotonic_ns()}:")
    try:
        runner = await new_runner(storage, RoomOptions(spectator_delay=0.6))
        async with peers("p1", "Ann") as ann, peers("p9", "Eve") as eve:
            runner.audience.follow_as_racer(ann.link, 0)
            runner.audience.follow_as_spectator(eve.link)
            sent = time.monotonic()
            await runner.run(SetReady("p1", True), ann.link, 1)
            version = runner.room.version
            await eventually(lambda: ann.of(Update))
            assert runner.snapshot_for(eve.link).version < version

            def ready_update() -> float | None:
                return next(
                    (t for m, t in zip(eve.received, eve.times, strict=True) if getattr(m, "version", 0) == version),
                    None,
                )

            arrived = await eventually(ready_update, timeout=5)
            assert arrived - sent >= 0.6
            assert runner.snapshot_for(eve.link).version == version
    finally:
        await storage.close()


async def test_a_resync_keeps_the_spectator_delay(
    private: tuple[RedisProcess, Storage], peers: Callable[[str, str], contextlib.AbstractAsyncContextManager[Peer]]
) -> None:
    """The snapshots of a resync go to racers at once, but to spectators only after the
    delay: a storage fault must not show spectators what the delay still hides."""
    redis, storage = private
    runner = await new_runner(storage, RoomOptions(spectator_delay=5.0))
    async with peers("p9", "Eve") as eve:
        runner.audience.follow_as_spectator(eve.link)
        hidden = runner.snapshot_for(eve.link).version
        redis.pause()
        with pytest.raises(StoreUnavailable):
            await runner.run(SetReady("p1", True))  # lands once Redis resumes
        redis.resume()
        await eventually(lambda: runner.room.view(0, 0).racers[0].ready, what="the resync")
        await asyncio.sleep(0.2)
        assert runner.snapshot_for(eve.link).version == hidden
        assert all(not isinstance(m, (Snapshot, Update)) for m in eve.received), eve.received
