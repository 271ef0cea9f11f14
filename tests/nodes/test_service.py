"""Three server processes on one Redis (or a Redis Cluster) serve as one service."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import signal
from pathlib import Path
from typing import TypeVar

import pytest

from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    Ack,
    AskLegalMoves,
    AskStats,
    CreateRoom,
    Joined,
    JoinRoom,
    LegalMoves,
    ListRooms,
    Lobby,
    PlayerStats,
    PlayMove,
    Ready,
    Resign,
    RoomOptions,
    Spectate,
)
from protocol.mirror import RoomMirror
from server.storage.embedded import EmbeddedRedis
from tests.nodes.conftest import NODE_TTL, Service
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio
T = TypeVar("T")


async def play_one(racer: RaceClient, code: str) -> int:
    """Play the first legal move; the room version it was acknowledged at."""
    legal = await racer.request(lambda i: AskLegalMoves(id=i, room=code))
    assert isinstance(legal, LegalMoves), legal
    assert legal.moves
    move = legal.moves[0]
    ack = await racer.request(lambda i: PlayMove(id=i, room=code, move=move))
    assert isinstance(ack, Ack), ack
    assert ack.version is not None
    return ack.version


async def open_race(ann: RaceClient, bob: RaceClient, options: RoomOptions | None = None) -> str:
    created = await ann.request(lambda i: CreateRoom(id=i, variant="antares", options=options or RoomOptions()))
    assert isinstance(created, Joined)
    joined = await bob.request(lambda i: JoinRoom(id=i, room=created.room))
    assert isinstance(joined, Joined), joined
    assert joined.seat == 1
    return created.room


async def race_started(code: str, *racers: RaceClient) -> None:
    for racer in racers:
        await racer.request(lambda i: Ready(id=i, room=code))
    for seat, racer in enumerate(racers):
        await racer.wait_room(code, functools.partial(racing, seat=seat), timeout=15)


def racing(mirror: RoomMirror, seat: int) -> bool:
    return mirror.view().state == "racing" and mirror.board(seat) is not None


async def test_room_on_a_racer_on_b_spectator_on_c(service: Service) -> None:
    a, b, c = await service.start(3)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(b, "Bob")
    code = await open_race(ann, bob, RoomOptions(public=True, spectator_delay=1))
    eve = await service.connect(c, "Eve")
    watching = await eve.request(lambda i: Spectate(id=i, room=code))
    assert isinstance(watching, Joined)
    assert watching.role == "spectator"
    # The lobby of any node lists the room (node A's share arrives with its next beat).
    lobby = await eventually_async(lambda: lobby_codes(eve), lambda codes: code in codes)
    assert code in lobby
    await race_started(code, ann, bob)
    # Bob's moves go from node B to node A and come back acknowledged, in order.
    versions = [await play_one(bob, code) for _ in range(3)]
    assert versions == sorted(versions)
    assert len(set(versions)) == 3
    await play_one(ann, code)
    # Ann (on the owner) sees Bob's moves; Eve (on node C) sees them after the delay.
    await ann.wait_room(code, lambda m: m.version >= versions[-1])
    await eve.wait_room(code, lambda m: m.version >= versions[-1] and m.board(1) is not None, timeout=30)


async def lobby_codes(client: RaceClient) -> set[str]:
    reply = await client.request(lambda i: ListRooms(id=i))
    assert isinstance(reply, Lobby)
    return {room.code for room in reply.rooms}


async def test_quick_match_across_nodes(service: Service) -> None:
    a, b, _ = await service.start(3)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(b, "Bob")
    tickets = [await ann.quick_match("antares"), await bob.quick_match("antares")]
    joined = [await asyncio.wait_for(ticket.joined, 20) for ticket in tickets]
    assert joined[0].room == joined[1].room
    code = joined[0].room
    for seat, racer in enumerate((ann, bob)):
        mine = joined[seat].seat
        assert mine is not None
        await racer.wait_room(code, functools.partial(racing, seat=mine), timeout=15)
    await play_one(ann, code)
    await play_one(bob, code)


async def test_owner_killed_mid_race(service: Service) -> None:
    """SIGKILL of the owner: within the lease TTL plus a reconnect the racers race on, on
    another node, and every acknowledged move is there."""
    a, b, c = await service.start(3)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(b, "Bob")
    code = await open_race(ann, bob)
    await race_started(code, ann, bob)
    acked = {0: [await play_one(ann, code) for _ in range(2)], 1: [await play_one(bob, code) for _ in range(2)]}
    last = max(version for versions in acked.values() for version in versions)
    resume = {0: ann.resume, 1: bob.resume}
    a.signal(signal.SIGKILL)
    a.process.wait()
    # Ann's connection died with node A; Bob's is closed by node B when A stops beating.
    await ann.close()
    await bob.close()
    ann = await service.connect(c, "Ann", resume=resume[0])
    bob = await service.connect(b, "Bob", resume=resume[1])
    for _seat, racer in enumerate((ann, bob)):
        mirror = await racer.wait_room(code, lambda m: m.version >= last, timeout=NODE_TTL * 4 + 10)
        assert mirror.view().state == "racing"
        # Every acknowledged move of both racers is in the room the new owner restored.
        for other, acks in acked.items():
            assert mirror.view().racers[other].progress.moves >= len(acks)
    # Racing goes on, with versions past every acknowledged one.
    assert await play_one(bob, code) > last
    assert await play_one(ann, code) > last


async def test_paused_owner_is_fenced(service: Service) -> None:
    """SIGSTOP of the owner past its lease, then SIGCONT: another node runs the room; the old
    owner writes nothing and lets go."""
    a, b, _ = await service.start(3)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(b, "Bob")
    code = await open_race(ann, bob)
    await race_started(code, ann, bob)
    await play_one(bob, code)
    a.signal(signal.SIGSTOP)
    try:
        await asyncio.sleep(NODE_TTL * 2)
        # Bob, on node B, is sent to reconnect; node B takes the room over.
        await bob.close()
        bob = await service.connect(b, "Bob", resume=bob.resume)
        mirror = await bob.wait_room(code, lambda m: racing(m, 1), timeout=NODE_TTL * 4 + 10)
        taken_at = mirror.version
        ann_moves = _moves_of(mirror, "Ann")
        acked = await play_one(bob, code)
        assert acked > taken_at
    finally:
        a.signal(signal.SIGCONT)
    # Node A wakes and Ann, still connected to it, plays. A fenced A stores nothing itself: it
    # refuses, or drops her connection to send her to the new owner, or (once it knows it lost
    # the room) forwards the move to the new owner, which stores it after Bob's.
    ann_acked: int | None = None
    with contextlib.suppress(ServerError, ConnectionError, TimeoutError):
        ann_acked = await play_one(ann, code)
    assert ann_acked is None or ann_acked > acked
    await asyncio.sleep(NODE_TTL)
    text = a.log.read_text()
    assert "fenced" in text or "lease lost" in text, text[-3000:]
    # Node A wrote nothing from its stale copy: every move Bob had acknowledged is kept (a write
    # from A's copy, taken before the pause, would hold one of his three), and Bob plays on.
    final = await play_one(bob, code)
    assert final > acked
    mirror = await bob.wait_room(code, lambda m: m.version >= final)
    assert _moves_of(mirror, "Bob") == 3
    # Ann's move counts only if it went through the new owner (her reply may have been lost
    # with the connection A dropped, so an error does not prove it was not stored).
    assert _moves_of(mirror, "Ann") in ({ann_moves + 1} if ann_acked is not None else {ann_moves, ann_moves + 1})


def _moves_of(mirror: RoomMirror, name: str) -> int:
    [racer] = [r for r in mirror.view().racers if r.name == name]
    return racer.progress.moves


async def test_redis_restart_mid_race(embedded: EmbeddedRedis, tmp_path: Path) -> None:
    """Redis stops mid-race under three nodes: moves are refused with storage-unavailable
    (never acknowledged unstored), and once Redis is back the race goes on, forwarded
    moves included, with every acknowledged move kept."""
    service = Service(embedded.url, tmp_path)
    try:
        a, b, _ = await service.start(3)
        ann = await service.connect(a, "Ann")
        bob = await service.connect(b, "Bob")
        code = await open_race(ann, bob)
        await race_started(code, ann, bob)
        acked = [await play_one(ann, code), await play_one(bob, code)]
        await embedded.stop()
        with pytest.raises(ServerError) as refused:
            await play_one(bob, code)  # forwarded: no inbox to send it to
        assert refused.value.code == "storage-unavailable"
        with pytest.raises(ServerError) as refused:
            await play_one(ann, code)  # local: not stored, so not acknowledged
        assert refused.value.code == "storage-unavailable"
        await embedded.start()
        # Back: both racers play again (Bob's moves forwarded to node A), versions go on.
        ann_ack = await eventually_ack(ann, code)
        bob_ack = await eventually_ack(bob, code)
        assert min(ann_ack, bob_ack) > max(acked)
        mirror = await ann.wait_room(code, lambda m: m.version >= bob_ack)
        assert mirror.view().racers[0].progress.moves >= 2
        assert mirror.view().racers[1].progress.moves >= 2
    finally:
        await service.close()


async def eventually_ack(racer: RaceClient, code: str, timeout: float = 20.0) -> int:
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await play_one(racer, code)
        except ServerError as error:
            if error.code != "storage-unavailable" or asyncio.get_running_loop().time() > deadline:
                raise
        await asyncio.sleep(0.3)


async def test_a_finished_race_is_recorded_on_every_node(service: Service) -> None:
    """The race's results, ratings and statistics are written (one slot per script or
    transaction, so this holds on a Cluster too) and read from any node."""
    a, b, c = await service.start(3)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(b, "Bob")
    code = await open_race(ann, bob)
    await race_started(code, ann, bob)
    await play_one(bob, code)
    for racer in (bob, ann):
        await racer.request(lambda i: Resign(id=i, room=code))
    await bob.wait_room(code, lambda m: m.view().state == "finished")
    eve = await service.connect(c, "Eve")

    async def stats() -> PlayerStats:
        reply = await eve.request(lambda i: AskStats(id=i, variant="antares", player=ann.player))
        assert isinstance(reply, PlayerStats)
        return reply

    counted = await eventually_async(stats, lambda s: s.races_started >= 1)
    assert counted.races_finished == 0


async def test_connection_limit_holds_across_nodes(service: Service) -> None:
    if service.redis_url.startswith("redis+cluster"):
        pytest.skip("the same on a Cluster: one key per player")
    a, b, c = await service.start(3)
    first = await service.connect(a, "Ann")
    for node in (a, a, b, b):  # five connections in all, the most a player may have
        await service.connect(node, "Ann", resume=first.resume)
    with pytest.raises(ServerError) as refused:
        await service.connect(c, "Ann", resume=first.resume)
    assert refused.value.code == "too-many-connections"
    await first.close()
    await asyncio.sleep(0.5)  # node A forgets the closed connection
    await service.connect(c, "Ann", resume=first.resume)
