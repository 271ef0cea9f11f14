"""The registry of live rooms against a real Redis: rooms found by their code, loaded again
by another process (as after a restart), restored at start, and let go once finished and
unwatched, to load again on demand."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest
import pytest_asyncio

from protocol.messages import RoomOptions
from server.clock import now_ms
from server.cluster.cluster import Cluster
from server.config import Config
from server.live.recording import RaceRecorder
from server.live.registry import Registry
from server.live.runner import RoomRunner
from server.rooms import commands
from server.rooms.lifecycle import State
from server.rooms.room import random_deal
from server.rooms.timing import RoomTiming
from server.storage.boards import Leaderboards
from server.storage.connection import Storage
from server.storage.rooms import RoomStore
from tests.polling import COUNTDOWN, eventually

pytestmark = pytest.mark.asyncio


RegistryMaker = Callable[[], Awaitable[Registry]]

#: The rooms' durations: the default grace period, the tests' short countdown.
TIMING = RoomTiming(countdown_ms=round(COUNTDOWN * 1000))


@pytest_asyncio.fixture
async def registry_on(store: Storage) -> AsyncIterator[RegistryMaker]:
    """Makes a registry as a server process does, on ``store``'s keys, as one node (the
    same node id each time: a second registry is this process after a restart)."""
    clusters: list[Cluster] = []
    registries: list[Registry] = []

    async def make() -> Registry:
        cluster = await Cluster.start(
            store, Config(port=0, peer_port=0), b"a test secret", "127.0.0.1:0", node_id="embedded"
        )
        clusters.append(cluster)
        made = Registry(RoomStore(store), RaceRecorder(store, Leaderboards(store)), TIMING, 3600, random_deal, cluster)
        registries.append(made)
        return made

    try:
        yield make
    finally:
        for made in registries:
            await made.drain()
        for cluster in clusters:
            await cluster.stop()


@pytest_asyncio.fixture
async def registry(registry_on: RegistryMaker) -> Registry:
    return await registry_on()


async def two_racers(registry: Registry) -> RoomRunner:
    """Ann's new Scorpion room with Bob seated too."""
    runner = await registry.create("scorpion", RoomOptions(), "ann", "Ann")
    await runner.run(commands.Join("bob", "Bob"))
    return runner


async def finished_race(registry: Registry) -> RoomRunner:
    """A room whose race has run (countdown and all) and ended with both racers resigning."""
    runner = await two_racers(registry)
    for player in ("ann", "bob"):
        await runner.run(commands.SetReady(player, True))
    await eventually(lambda: runner.room.state is State.RACING, what="the countdown's end")
    for player in ("ann", "bob"):
        await runner.run(commands.Resign(player))
    assert runner.finished
    return runner


async def test_a_room_is_found_by_its_code_however_it_is_typed(registry: Registry) -> None:
    runner = await registry.create("antares", RoomOptions(), "ann", "Ann")
    assert await registry.get(runner.code) is runner
    assert await registry.get(f"  {runner.code.lower()} ") is runner
    assert registry[runner.code] is runner
    assert await registry.get("ZZZZZZZZ") is None  # no such room, in memory or in Redis
    assert await registry.get("ROOM-1") is None  # not a room code at all
    assert registry.rooms_of("ann") == [runner]
    assert registry.rooms_of("bob") == []


async def test_another_process_loads_a_room_from_redis_as_it_was(
    registry_on: RegistryMaker, registry: Registry
) -> None:
    runner = await two_racers(registry)
    await runner.run(commands.SetReady("bob", True))
    await registry.let_go(runner.code)  # as a draining node does: its lease given up
    other = await registry_on()  # the next owner
    try:
        loaded = await other.get(runner.code)
        assert loaded is not None
        assert loaded is not runner
        assert loaded.room.members() == {0: "ann", 1: "bob"}
        assert loaded.room.version == runner.room.version
        now = now_ms()
        assert [r.ready for r in loaded.room.view(None, now).racers] == [False, True]
        assert loaded.room.record.deal == runner.room.record.deal
        assert await other.get(runner.code) is loaded  # loaded once, then kept
    finally:
        await other.drain()


async def test_restore_brings_back_the_rooms_in_progress_and_tidies_the_rest(
    store: Storage, registry_on: RegistryMaker, registry: Registry
) -> None:
    waiting = await two_racers(registry)
    done = await finished_race(registry)
    emptied = await registry.create("scorpion", RoomOptions(), "cat", "Cat")
    await emptied.run(commands.Leave("cat"))  # the last racer left: the room closes for good
    assert emptied.closed
    rooms = RoomStore(store)
    await rooms.mark_active("GONE2345", True)  # listed, but its record expired
    assert sorted(await rooms.active()) == sorted([waiting.code, "GONE2345"])

    await registry.drain()  # a clean stop: every lease given up
    restarted = await registry_on()  # this process after a restart: the same node id
    try:
        assert await restarted.restore() == 1
        assert [runner.code for runner in restarted.runners()] == [waiting.code]
        assert await rooms.active() == [waiting.code]
        assert await restarted.get(emptied.code) is None  # nobody can join a room nobody can start
        finished = await restarted.get(done.code)  # still there for its results, on demand
        assert finished is not None
        assert finished.finished
        results = finished.room.view(None, now_ms()).results
        assert results is not None
        assert sorted(r.seat for r in results) == [0, 1]
    finally:
        await restarted.drain()


async def test_a_finished_room_nobody_follows_is_let_go_and_loads_again_on_demand(registry: Registry) -> None:
    waiting = await two_racers(registry)
    done = await finished_race(registry)
    now = now_ms()
    assert registry.sweep(now) == 0  # finished only just now
    assert registry.sweep(now + 600_000) == 1  # ten minutes on: let go (Redis keeps it)
    assert [runner.code for runner in registry.runners()] == [waiting.code]
    again = await registry.get(done.code)
    assert again is not None
    assert again is not done
    assert again.finished
    assert again.room.version == done.room.version


async def test_a_public_room_is_listed_until_its_race_ends(registry: Registry) -> None:
    public = await registry.create("scorpion", RoomOptions(public=True), "ann", "Ann")
    await registry.create("scorpion", RoomOptions(), "bob", "Bob")  # private: never listed
    assert [summary.code for summary in registry.public()] == [public.code]
    await public.run(commands.Join("cat", "Cat"))
    for player in ("ann", "cat"):
        await public.run(commands.SetReady(player, True))
    await eventually(lambda: public.room.state is State.RACING, what="the countdown's end")
    assert [summary.code for summary in registry.public()] == [public.code]  # racing: still watchable
    for player in ("ann", "cat"):
        await public.run(commands.Resign(player))
    assert registry.public() == []


async def test_restore_leaves_alone_a_room_this_process_is_loading(registry: Registry) -> None:
    """A room whose lease this process holds but has not registered yet (a load or a handoff
    under way) is its own, not one left by this node before a restart: restore must not take
    it over, which would fence the room being loaded."""
    runner = await two_racers(registry)
    await registry.let_go(runner.code)
    claim = await registry.leases.claim(runner.code)  # as _load does before reading the room
    assert claim.lease is not None
    assert await registry.restore() == 0
    assert registry.leases.lease(runner.code) == claim.lease  # the same lease: not taken over
    loaded = await registry.get(runner.code)
    assert loaded is not None
    assert not loaded.closed


async def test_requests_at_once_for_a_room_not_loaded_all_get_it(registry: Registry) -> None:
    """Both racers come back at once to a room handed over to this node: each request finds
    the room (the second's own claim would fail against the first's, and read as "gone")."""
    runner = await two_racers(registry)
    await registry.let_go(runner.code)
    loaded = await asyncio.gather(*(registry.get(runner.code) for _ in range(3)))
    assert loaded[0] is not None
    assert all(each is loaded[0] for each in loaded)
    assert registry.leases.holds(runner.code)
