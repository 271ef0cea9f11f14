"""The websocket edge, end to end against a real server: a full server turns new
connections away and takes them again once a place is free, and an abusive connection is
closed while the others carry on."""

from __future__ import annotations

from functools import partial

import pytest

from protocol.errors import CloseCode
from protocol.messages import PROTOCOL_VERSION, Hello, ListRooms, Lobby
from tests.end_to_end.conftest import RawClient, ServerFactory, eventually

pytestmark = pytest.mark.asyncio


async def test_a_full_server_turns_new_connections_away_until_a_place_is_free(start_server: ServerFactory) -> None:
    async with start_server(max_connections=2) as srv:
        ann = await srv.raw("Ann")
        await srv.raw("Bob")
        turned_away = await RawClient.open(srv.url)
        assert await turned_away.closed() == CloseCode.TRY_AGAIN_LATER
        assert turned_away.socket.close_reason == "the server is full; try again later"
        await ann.close()
        await eventually(lambda: len(srv.hub.links) == 1, what="Ann's place freed")
        cat = await srv.raw()
        welcome = await cat.hello("Cat")
        assert welcome.name == "Cat"


async def test_an_abusive_connection_is_closed_and_the_others_carry_on(start_server: ServerFactory) -> None:
    async with start_server(offence_limit=3) as srv:  # the fourth offence is one too many
        eve = await srv.raw("Eve")
        ann = await srv.raw("Ann")
        for _ in range(4):
            await eve.send_raw("not a frame")
        assert await eve.closed() == CloseCode.POLICY_VIOLATION
        assert eve.socket.close_reason == "too many bad or excessive requests"
        # Ann's connection is untouched: still served, and still one hello only.
        assert isinstance(await ann.request(lambda i: ListRooms(id=i)), Lobby)
        assert (await ann.error(await ann.send(partial(Hello, protocol=PROTOCOL_VERSION, name="Ann")))).code == (
            "already-hello"
        )


async def test_a_connection_that_says_no_hello_in_time_is_closed_and_one_that_did_stays(
    start_server: ServerFactory,
) -> None:
    async with start_server(hello_timeout=0.5) as srv:
        ann = await srv.raw("Ann")
        silent = await RawClient.open(srv.url)
        assert await silent.closed() == CloseCode.POLICY_VIOLATION
        assert silent.socket.close_reason == "no hello in time"
        assert (await ann.request(partial(ListRooms))).__class__ is Lobby
