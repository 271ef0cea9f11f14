"""The lobby: public rooms with their state, racers and spectators; private rooms never."""

from __future__ import annotations

import pytest

from protocol.messages import CreateRoom, Joined, JoinRoom, ListRooms, Lobby, RoomOptions, RoomSummary, Spectate, Start
from tests.server.conftest import RunningServer, eventually

pytestmark = pytest.mark.asyncio


async def lobby(server: RunningServer) -> list[RoomSummary]:
    client = await server.connect("Lou")
    reply = await client.request(lambda i: ListRooms(id=i))
    assert isinstance(reply, Lobby)
    await client.close()
    return reply.rooms


async def test_public_rooms_are_listed_with_state_racers_and_spectators_and_private_ones_are_not(
    server: RunningServer,
) -> None:
    ann = await server.connect("Ann")
    public = await ann.request(
        lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(public=True, max_racers=3))
    )
    assert isinstance(public, Joined)
    cy = await server.connect("Cy")
    private = await cy.request(lambda i: CreateRoom(id=i, variant="antares"))
    assert isinstance(private, Joined)
    assert await lobby(server) == [
        RoomSummary(code=public.room, variant="scorpion", state="waiting", racers=["Ann"], max_racers=3, spectators=0)
    ]

    bob = await server.connect("Bob")
    await bob.request(lambda i: JoinRoom(id=i, room=public.room))
    for name in ("Sam", "Sue"):
        spectator = await server.connect(name)
        await spectator.request(lambda i: Spectate(id=i, room=public.room))
    dan = await server.connect("Dan")
    await dan.request(lambda i: Spectate(id=i, room=private.room))  # private rooms can be watched by code
    (summary,) = await lobby(server)
    assert (summary.code, summary.state, summary.racers, summary.spectators) == (
        public.room,
        "waiting",
        ["Ann", "Bob"],
        2,
    )

    await ann.request(lambda i: Start(id=i, room=public.room))
    await spectator.close()
    await eventually(lambda: ann.rooms[public.room].view().spectators == 1, what="Sue gone")
    (summary,) = await lobby(server)
    assert (summary.state, summary.racers, summary.spectators) == ("countdown", ["Ann", "Bob"], 1)
