"""Membership both sides agree on: a node paused past its heartbeat's TTL (a long GC pause, a
stalled VM, a cut from Redis) was declared gone by the others; when it wakes, its clients are
served again, never silently cut off from a room that runs on another node."""

from __future__ import annotations

import asyncio
import functools
import signal

import pytest

from client.lib.connection import RaceClient, ServerError
from protocol.messages import Ack, AskLegalMoves, Joined, LegalMoves, PlayMove, RoomOptions, Spectate, Undo
from protocol.mirror import RoomMirror
from tests.nodes.conftest import NODE_TTL, Service
from tests.nodes.test_service import open_race, race_started

pytestmark = pytest.mark.asyncio

#: Seconds a dropped racer keeps their seat in these tests.
GRACE = 8.0
#: Seconds an ack may go before the update that brings the racer's copy to its version.
UPDATE_WITHIN = 3.0


async def move_acked(racer: RaceClient, code: str, reconnects: bool) -> int:
    """Play a legal move (or, with none left on this deal, undo the last); the acked version.
    Asked again while the room changes owner (``storage-unavailable``, no answer in time) and,
    if ``reconnects``, while the client reconnects and resumes; otherwise a closed connection
    fails the test."""
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        try:
            legal = await racer.request(lambda i: AskLegalMoves(id=i, room=code))
            assert isinstance(legal, LegalMoves), legal
            if legal.moves:
                ack = await racer.request(functools.partial(PlayMove, room=code, move=legal.moves[0]))
            else:
                ack = await racer.request(lambda i: Undo(id=i, room=code))
        except (ServerError, ConnectionError, TimeoutError) as error:
            again = isinstance(error, TimeoutError) or (reconnects and isinstance(error, ConnectionError))
            again = again or (isinstance(error, ServerError) and error.code == "storage-unavailable")
            if not again or asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.2)
            continue
        assert isinstance(ack, Ack), ack
        assert ack.version is not None
        return ack.version


def reached(mirror: RoomMirror, version: int) -> bool:
    return mirror.version >= version


def seat_of(mirror: RoomMirror, name: str) -> int:
    [racer] = [r for r in mirror.view().racers if r.name == name]
    return racer.seat


async def test_a_racer_on_a_node_paused_past_its_ttl_is_not_cut_off(service: Service) -> None:
    a, b = await service.start(2, "--grace", str(GRACE))
    ann = await service.connect(a, "Ann")
    # Bob reconnects by himself, as every client built on the client library does.
    bob = await RaceClient.connect(b.url, "Bob", reconnect=True)
    service.clients.append(bob)
    code = await open_race(ann, bob)  # the room runs on node A; Bob is on node B
    await race_started(code, ann, bob)
    await move_acked(ann, code, reconnects=True)
    await move_acked(bob, code, reconnects=True)

    b.signal(signal.SIGSTOP)
    await asyncio.sleep(NODE_TTL * 2)  # node A declares B gone and drops its proxies
    b.signal(signal.SIGCONT)

    # Every move Bob plays is acknowledged and followed by the update bringing his copy to it.
    for _ in range(4):
        version = await move_acked(bob, code, reconnects=True)
        await bob.wait_room(code, functools.partial(reached, version=version), timeout=UPDATE_WITHIN)
    # Past the grace period Bob still races: never resigned as "disconnected" while he plays.
    await asyncio.sleep(GRACE + NODE_TTL)
    version = await move_acked(bob, code, reconnects=True)
    mirror = await bob.wait_room(code, functools.partial(reached, version=version), timeout=UPDATE_WITHIN)
    racer = mirror.view().racers[seat_of(mirror, "Bob")]
    assert racer.resigned is None
    assert racer.connected
    assert mirror.view().state == "racing"


async def test_clients_on_surviving_nodes_stay_connected_when_the_owner_dies(service: Service) -> None:
    a, b, c = await service.start(3)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(b, "Bob")  # no automatic reconnection: he must never need one
    code = await open_race(ann, bob, RoomOptions(public=True, spectator_delay=1))
    eve = await service.connect(c, "Eve")
    assert isinstance(await eve.request(lambda i: Spectate(id=i, room=code)), Joined)
    await race_started(code, ann, bob)
    before = await move_acked(bob, code, reconnects=False)

    a.signal(signal.SIGKILL)  # the owner dies
    a.process.wait()
    # Bob, on node B, races on without reconnecting: his node follows the room on its new
    # owner, and his next move is acknowledged there, after every move acknowledged before.
    after = await move_acked(bob, code, reconnects=False)
    assert after > before
    mirror = await bob.wait_room(code, functools.partial(reached, version=after), timeout=UPDATE_WITHIN)
    assert mirror.view().state == "racing"
    assert mirror.view().racers[seat_of(mirror, "Bob")].resigned is None
    # Eve, on node C, watches on, also on her first connection.
    await eve.wait_room(code, functools.partial(reached, version=after), timeout=NODE_TTL * 4 + 10)
    for client in (bob, eve):
        assert client.connected.is_set()
        assert client.ended is None


async def test_a_draining_owner_hands_its_rooms_over_without_dropping_other_nodes_clients(service: Service) -> None:
    a, b = await service.start(2)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(b, "Bob")  # no automatic reconnection: he must never need one
    code = await open_race(ann, bob)
    await race_started(code, ann, bob)
    before = await move_acked(bob, code, reconnects=False)

    a.signal(signal.SIGTERM)  # a planned stop: node A gives its rooms up as it goes
    assert a.process.wait(30) == 0
    after = await move_acked(bob, code, reconnects=False)
    assert after > before
    mirror = await bob.wait_room(code, functools.partial(reached, version=after), timeout=UPDATE_WITHIN)
    assert mirror.view().state == "racing"
    assert bob.connected.is_set()
    # Ann, whose own node went away, resumes on node B and races on.
    ann = await service.connect(b, "Ann", resume=ann.resume)
    assert await move_acked(ann, code, reconnects=False) > after
