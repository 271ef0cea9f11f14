"""The dispatcher's one place for failures: every refusal reaches its client as an ``error``
frame with its code, read back as the :class:`ErrorCode` enum; a step decided on a stale room
(a version conflict, no outage) and a storage outage are both ``storage-unavailable``, and
after the conflict the room resynchronises by itself."""

from __future__ import annotations

import itertools
import logging

import pytest

from protocol.errors import ErrorCode
from protocol.messages import Ack, ClientMessage, CreateRoom, Joined, ListRooms, Ready, RoomOptions, Snapshot
from server.connections.link import ClientLink
from server.errors import AccountError, Refused
from server.features.context import Context
from server.net import dispatch
from server.ops.log_limits import LogLimiter
from server.rooms.errors import CommandRefused, RoomError
from server.storage.connection import StoreUnavailable
from server.storage.rooms import Expiry, RoomWrite
from tests.end_to_end.conftest import RunningServer

pytestmark = pytest.mark.asyncio


async def test_every_refusal_reaches_the_client_with_its_code_typed(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each code, raised as each kind of refusal, comes back decoded as that enum member."""
    raised: list[Refused] = []

    async def refuse(ctx: Context, link: ClientLink, message: ClientMessage) -> None:
        raise raised[-1]

    client = await server.raw("Ann")
    monkeypatch.setattr(dispatch, "route", refuse)
    kinds = itertools.cycle((Refused, RoomError, CommandRefused, AccountError))
    for code, kind in zip(ErrorCode, kinds, strict=False):
        raised.append(kind(code, f"refused: {code}", "a-rule" if code is ErrorCode.ILLEGAL_MOVE else None))
        reply = await client.error(await client.send(lambda i: ListRooms(id=i)))
        assert type(reply.code) is ErrorCode
        assert reply.code is code, kind
        assert (reply.message, reply.rule) == (f"refused: {code}", raised[-1].rule)


async def test_a_version_conflict_is_no_outage_yet_is_answered_alike_and_the_room_resyncs(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """Storage moved the room on behind its runner's back: the step decided on the old
    version is refused (``storage-unavailable``: not stored, ask again), the room reloads by
    itself and sends the truth, and the same request then goes through. An outage gets the
    same answer."""
    monkeypatch.setattr(dispatch, "_log", LogLimiter(dispatch.logger))  # this test's lines only
    caplog.set_level(logging.WARNING, logger="server.dispatch")
    client = await server.raw("Ann")
    created = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=2)))
    assert isinstance(created, Joined)
    rooms = server.hub.rooms
    runner = rooms[created.room]
    version = runner.room.version
    moved_on = RoomWrite(runner.code, runner.room.record.race, version, version + 1, [], None, Expiry.NONE)
    await rooms.store.commit(moved_on)

    conflict = await client.error(await client.send(lambda i: Ready(id=i, room=created.room)))
    assert conflict.code is ErrorCode.STORAGE_UNAVAILABLE
    assert [r.getMessage() for r in caplog.records] == [
        f"request not stored: room {runner.code} changed in storage under version {version}: reloading it"
    ]
    snapshot = await client.wait_for(lambda m: isinstance(m, Snapshot) and m.version == version + 1)
    assert isinstance(snapshot, Snapshot)
    assert isinstance(await client.request(lambda i: Ready(id=i, room=created.room)), Ack)
    assert runner.room.version == version + 2

    async def outage(*args: object, **kwargs: object) -> None:
        raise StoreUnavailable("storage unavailable: a test's outage")

    monkeypatch.setattr(runner, "run", outage)
    down = await client.error(await client.send(lambda i: Ready(id=i, room=created.room, ready=False)))
    assert down.code is ErrorCode.STORAGE_UNAVAILABLE
    assert caplog.records[-1].getMessage() == "storage unavailable: storage unavailable: a test's outage"
