"""Membership both sides agree on: a node paused past its heartbeat's TTL (a long GC pause, a
stalled VM, a cut from Redis) was declared gone by the others; when it wakes, its clients are
served again, never silently cut off from a room that runs on another node."""

from __future__ import annotations

import asyncio
import functools
import signal

import pytest

from client.lib.connection import RaceClient
from protocol.messages import Ack, AskLegalMoves, LegalMoves, PlayMove
from protocol.mirror import RoomMirror
from tests.nodes.conftest import NODE_TTL, Service
from tests.nodes.test_service import open_race, race_started

pytestmark = pytest.mark.asyncio

#: Seconds a dropped racer keeps their seat in these tests.
GRACE = 8.0
#: Seconds an ack may go before the update that brings the racer's copy to its version.
UPDATE_WITHIN = 3.0


async def move_until_acked(racer: RaceClient, code: str) -> int:
    """Play a legal move, retrying while the client reconnects and resumes; the acked version."""
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        try:
            legal = await racer.request(lambda i: AskLegalMoves(id=i, room=code))
            assert isinstance(legal, LegalMoves), legal
            assert legal.moves, "no legal move left"
            move = legal.moves[0]
            ack = await racer.request(functools.partial(PlayMove, room=code, move=move))
        except (ConnectionError, TimeoutError):
            if asyncio.get_running_loop().time() > deadline:
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
    await move_until_acked(ann, code)
    await move_until_acked(bob, code)

    b.signal(signal.SIGSTOP)
    await asyncio.sleep(NODE_TTL * 2)  # node A declares B gone and drops its proxies
    b.signal(signal.SIGCONT)

    # Every move Bob plays is acknowledged and followed by the update bringing his copy to it.
    for _ in range(4):
        version = await move_until_acked(bob, code)
        await bob.wait_room(code, functools.partial(reached, version=version), timeout=UPDATE_WITHIN)
    # Past the grace period Bob still races: never resigned as "disconnected" while he plays.
    await asyncio.sleep(GRACE + NODE_TTL)
    version = await move_until_acked(bob, code)
    mirror = await bob.wait_room(code, functools.partial(reached, version=version), timeout=UPDATE_WITHIN)
    racer = mirror.view().racers[seat_of(mirror, "Bob")]
    assert racer.resigned is None
    assert racer.connected
    assert mirror.view().state == "racing"
