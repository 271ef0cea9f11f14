"""The lobby: public rooms with their state, racers and spectators; private rooms never;
newest first, 50 a page, of both games or one."""

from __future__ import annotations

from functools import partial

import msgspec
import pytest

from protocol.messages import (
    LOBBY_PAGE,
    CreateRoom,
    Error,
    Joined,
    JoinRoom,
    ListRooms,
    Lobby,
    RoomOptions,
    RoomSummary,
    Spectate,
    Start,
    Variant,
)
from tests.end_to_end.conftest import RawClient, RunningServer, ServerFactory, eventually

pytestmark = pytest.mark.asyncio


async def lobby(server: RunningServer) -> list[RoomSummary]:
    client = await server.connect("Lou")
    reply = await client.request(lambda i: ListRooms(id=i))
    assert isinstance(reply, Lobby)
    await client.close()
    return reply.rooms


async def page(client: RawClient, after: str | None = None, variant: Variant | None = None) -> Lobby:
    reply = await client.request(lambda i: ListRooms(id=i, after=after, variant=variant))
    assert isinstance(reply, Lobby), reply
    assert len(reply.rooms) <= LOBBY_PAGE
    return reply


async def every_page(client: RawClient, variant: Variant | None = None) -> list[list[str]]:
    """The codes on each page, following the cursors from the first page to the last."""
    pages, after = [], None
    while True:
        reply = await page(client, after, variant)
        pages.append([room.code for room in reply.rooms])
        if reply.next is None:
            return pages
        after = reply.next


def in_turn(count: int) -> list[Variant]:
    """Antares and Scorpion in turn, ``count`` games."""
    return ["antares" if n % 2 == 0 else "scorpion" for n in range(count)]


async def open_public_rooms(srv: RunningServer, variants: list[Variant], per_player: int = 10) -> dict[str, Variant]:
    """A public room of each game of ``variants``, in that order, ``per_player`` by each player."""
    made: dict[str, Variant] = {}
    while len(made) < len(variants):
        host = await srv.raw(f"Host {len(made)}")
        for variant in variants[len(made) : len(made) + per_player]:
            reply = await host.request(partial(CreateRoom, variant=variant, options=RoomOptions(public=True)))
            assert isinstance(reply, Joined), reply
            made[reply.room] = variant
    return made


async def test_public_rooms_are_listed_with_state_racers_and_spectators_and_private_ones_are_not(
    slow_countdown_server: RunningServer,
) -> None:
    server = slow_countdown_server  # the lobby is looked at during the countdown
    ann = await server.connect("Ann")
    public = await ann.request(
        lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(public=True, max_racers=3))
    )
    assert isinstance(public, Joined)
    cy = await server.connect("Cy")
    private = await cy.request(lambda i: CreateRoom(id=i, variant="antares"))
    assert isinstance(private, Joined)
    created = server.hub.rooms[public.room].room.record.created
    assert await lobby(server) == [
        RoomSummary(
            code=public.room,
            variant="scorpion",
            state="waiting",
            racers=["Ann"],
            max_racers=3,
            spectators=0,
            created=created,
        )
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


async def test_the_lobby_pages_fifty_rooms_newest_first_and_the_cursors_reach_every_room_once(
    start_server: ServerFactory,
) -> None:
    """Finding 8 (issue 29): 500 public rooms made a 103 KB answer to every poll."""
    async with start_server(max_rooms_per_player=10, public_rooms_per_address=200) as srv:
        made = await open_public_rooms(srv, in_turn(2 * LOBBY_PAGE + 10))
        created = {code: srv.hub.rooms[code].room.record.created for code in made}
        newest_first = sorted(made, key=lambda code: (created[code], code), reverse=True)
        lou = await srv.raw("Lou")

        pages = await every_page(lou)
        assert [len(codes) for codes in pages] == [LOBBY_PAGE, LOBBY_PAGE, 10]
        assert [code for codes in pages for code in codes] == newest_first
        order = list(made)
        assert order[-1] in pages[0]
        assert order[0] in pages[-1]
        first = await page(lou)
        assert [room.created for room in first.rooms] == [created[room.code] for room in first.rooms]

        # A cursor says where its page ended: a room created meanwhile is on the first page,
        # and the page after the cursor is what it was.
        second = await page(lou, first.next)
        host = await srv.raw("Newcomer")
        newest = await host.request(lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(public=True)))
        assert isinstance(newest, Joined)
        again = await page(lou, first.next)
        assert (again.rooms, again.next) == (second.rooms, second.next)
        assert (await page(lou)).rooms[0].code == newest.room


async def test_the_lobby_shows_one_games_rooms_when_asked(start_server: ServerFactory) -> None:
    async with start_server(max_rooms_per_player=10, public_rooms_per_address=200) as srv:
        made = await open_public_rooms(srv, [*in_turn(2 * LOBBY_PAGE), *in_turn(20)[1::2]])
        lou = await srv.raw("Lou")
        sizes: dict[Variant, list[int]] = {"antares": [LOBBY_PAGE], "scorpion": [LOBBY_PAGE, 10]}
        for variant, pages_of in sizes.items():
            pages = await every_page(lou, variant)
            assert [len(codes) for codes in pages] == pages_of  # 50 Antares rooms: one page, no next
            listed = [code for codes in pages for code in codes]
            assert sorted(listed) == sorted(code for code, game in made.items() if game == variant)
            first = await page(lou, variant=variant)
            assert {room.variant for room in first.rooms} == {variant}


async def test_a_lobby_request_without_paging_fields_gets_the_first_page_of_both_games(
    start_server: ServerFactory,
) -> None:
    """Clients from before paging send ``{"type": "list_rooms", "id": N}`` and read ``rooms``."""
    async with start_server(max_rooms_per_player=10, public_rooms_per_address=200) as srv:
        made = await open_public_rooms(srv, in_turn(LOBBY_PAGE + 1))
        old = await srv.raw("Old")
        await old.send_raw(msgspec.msgpack.encode({"type": "list_rooms", "id": 41}))
        reply = await old.reply(41)
        assert isinstance(reply, Lobby)
        assert len(reply.rooms) == LOBBY_PAGE
        assert reply.next is not None
        assert {room.variant for room in reply.rooms} == {"antares", "scorpion"}
        assert {room.code for room in reply.rooms} < set(made)
        # A cursor the server could not have made is not a request.
        await old.send_raw(msgspec.msgpack.encode({"type": "list_rooms", "id": 42, "after": "page 2"}))
        refused = await old.reply(42)
        assert isinstance(refused, Error)
        assert refused.code == "invalid-message"
