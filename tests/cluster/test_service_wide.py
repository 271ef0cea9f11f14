"""Service-wide rules hold whichever node asks: two server processes' worth of nodes (two
:class:`~server.app.RaceServer` s in this process, sharing one key space) on one Redis and on
a 3-primary Redis Cluster, with the asker on one node and what the answer depends on on the other."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

import pytest
import pytest_asyncio

from protocol.errors import CloseCode
from protocol.messages import (
    AccountInfo,
    Ack,
    AskDaily,
    CreateRoom,
    DailyInfo,
    Error,
    Joined,
    Leave,
    ListRooms,
    Lobby,
    Login,
    Logout,
    Register,
    Resign,
    RoomOptions,
    ServerMessage,
    Spectate,
    StartDaily,
)
from server.app import RaceServer, stop_leftovers
from tests.end_to_end.conftest import RawClient
from tests.end_to_end.test_daily import SOLVER, account_token, ask, daily_deal, lobby, racing, start_daily
from tests.in_process_server import fresh_prefix, running_server
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio


@contextlib.asynccontextmanager
async def nodes_of_one_service(url: str, **settings: Any) -> AsyncIterator[tuple[RaceServer, RaceServer]]:
    """Two nodes of one service with ``settings``, on the Redis or Cluster at ``url`` (keys
    under a prefix of their own)."""
    settings = {"node_ttl": 2.0, **settings, "prefix": fresh_prefix()}
    async with running_server(url, **settings) as a, running_server(url, **settings) as b:
        yield a.server, b.server
    await stop_leftovers()


@pytest_asyncio.fixture
async def two_nodes(redis_or_cluster: str) -> AsyncIterator[tuple[RaceServer, RaceServer]]:
    """Two nodes of one service (the daily challenge on), on the session's Redis or Cluster."""
    async with nodes_of_one_service(redis_or_cluster, **SOLVER) as nodes:
        yield nodes


@pytest_asyncio.fixture
async def two_plain_nodes(redis_or_cluster: str) -> AsyncIterator[tuple[RaceServer, RaceServer]]:
    """Two nodes of one service without a solver, on the session's Redis or Cluster."""
    async with nodes_of_one_service(redis_or_cluster, solver_workers=0, hint_workers=0) as nodes:
        yield nodes


async def client(node: RaceServer, clients: list[RawClient]) -> RawClient:
    opened = await RawClient.open(f"ws://127.0.0.1:{node.port}", node.storage)
    clients.append(opened)
    return opened


async def ranked_attempt(node: RaceServer, name: str, clients: list[RawClient]) -> tuple[RawClient, str]:
    """``name``'s connection to ``node``, and the room of the ranked attempt it started there."""
    await daily_deal(node)
    player = await client(node, clients)
    await player.hello(name)
    return player, (await start_daily(player)).room


async def test_a_ranked_daily_attempt_is_watched_only_after_ones_own_on_any_node(
    two_nodes: tuple[RaceServer, RaceServer],
) -> None:
    a, b = two_nodes
    clients: list[RawClient] = []
    try:
        ann, ann_room = await ranked_attempt(a, "Ann", clients)  # Ann's ranked attempt runs on node A
        bob, bob_room = await ranked_attempt(b, "Bob", clients)  # Bob's on node B
        await racing(ann, ann_room)
        await racing(bob, bob_room)

        # Bob, still racing on B, asks node A (where Ann's attempt runs) and node B (which
        # forwards to A): neither lets him watch, nor lists Ann's attempt.
        bob_on_a = await client(a, clients)
        await bob_on_a.hello("Bob", resume=account_token(bob))
        for asker in (bob_on_a, bob):
            refused = await ask(asker, lambda i: Spectate(id=i, room=ann_room))
            assert isinstance(refused, Error), refused
            assert refused.code == "not-allowed"
            assert ann_room not in await lobby(asker)

        # His attempt over (on B), node A lets him watch Ann's.
        assert isinstance(await ask(bob, lambda i: Resign(id=i, room=bob_room)), Ack)

        async def spectate() -> object:
            return await ask(bob_on_a, lambda i: Spectate(id=i, room=ann_room))

        watching = await eventually_async(spectate, lambda reply: isinstance(reply, Joined))
        assert isinstance(watching, Joined)
        assert watching.role == "spectator"
        assert ann_room in await lobby(bob_on_a)
        # Node B lists it too, from node A's share of the lobby.
        assert ann_room in await eventually_async(partial(lobby, bob), lambda rooms: ann_room in rooms)
    finally:
        for opened in clients:
            with contextlib.suppress(Exception):
                await opened.close()


async def test_todays_deal_is_played_once_whichever_node_is_asked_again(
    two_nodes: tuple[RaceServer, RaceServer],
) -> None:
    """Ann's ranked attempt runs on node A; from node B, while it runs and after, she gets no
    second look at the deal: no second attempt, no practice."""
    a, b = two_nodes
    clients: list[RawClient] = []
    try:
        ann, ann_room = await ranked_attempt(a, "Ann", clients)
        await daily_deal(b)
        ann_on_b = await client(b, clients)
        await ann_on_b.hello("Ann", resume=account_token(ann))
        for running in (True, False):
            info = await ask(ann_on_b, lambda i: AskDaily(id=i, variant="antares"))
            assert isinstance(info, DailyInfo)
            assert info.access == "used"
            again = await ask(ann_on_b, lambda i: StartDaily(id=i, variant="antares"))
            assert isinstance(again, Error), again
            assert again.code == "daily-closed"
            if running:
                await racing(ann, ann_room)
                assert isinstance(await ask(ann, lambda i: Resign(id=i, room=ann_room)), Ack)
    finally:
        for opened in clients:
            with contextlib.suppress(Exception):
                await opened.close()


async def test_public_rooms_are_capped_per_address_whichever_node_opens_them(
    two_plain_nodes: tuple[RaceServer, RaceServer],
) -> None:
    """Finding 8 (issue 29): the count of an address's public rooms is the service's. Every
    client here comes from 127.0.0.1: one address, on both nodes."""
    a, b = two_plain_nodes
    cap = a.config.public_rooms_per_address
    clients: list[RawClient] = []
    try:
        rooms: dict[str, tuple[RaceServer, RawClient]] = {}
        for node, name in ((a, "Ann"), (b, "Bob")):
            host = await client(node, clients)
            await host.hello(name)
            for _ in range(cap // 2):
                created = await host.request(partial(CreateRoom, variant="antares", options=RoomOptions(public=True)))
                assert isinstance(created, Joined), created
                rooms[created.room] = (node, host)
        late: dict[RaceServer, RawClient] = {}
        for node in (a, b):
            late[node] = await client(node, clients)
            await late[node].hello("Late")
            refused = await late[node].request(
                partial(CreateRoom, variant="scorpion", options=RoomOptions(public=True))
            )
            assert isinstance(refused, Error), refused
            assert refused.code == "address-limit"

        # Either node's lobby lists every room, once.
        def all_listed(reply: ServerMessage) -> bool:
            return isinstance(reply, Lobby) and sorted(room.code for room in reply.rooms) == sorted(rooms)

        for asker in late.values():
            listed = await eventually_async(partial(asker.request, partial(ListRooms)), all_listed)
            assert isinstance(listed, Lobby)
            assert listed.next is None

        # A room of node B's closed when its last racer leaves: node A may open one again.
        code = next(code for code, (node, _) in rooms.items() if node is b)
        assert isinstance(await rooms[code][1].request(partial(Leave, room=code)), Ack)
        opened = await late[a].request(partial(CreateRoom, variant="scorpion", options=RoomOptions(public=True)))
        assert isinstance(opened, Joined), opened
    finally:
        for opened_client in clients:
            with contextlib.suppress(Exception):
                await opened_client.close()


async def test_logging_out_closes_the_devices_connections_on_every_node(
    two_plain_nodes: tuple[RaceServer, RaceServer],
) -> None:
    """Ann's phone holds a connection on each node (one token); logging out on node A closes
    the one on node B too, and leaves her laptop (another device, also on B) signed in."""
    a, b = two_plain_nodes
    clients: list[RawClient] = []
    try:
        phone = await client(a, clients)
        await phone.hello("Ann")
        info = await phone.request(partial(Register, name="Ann", password="a logout password"))
        assert isinstance(info, AccountInfo), info
        tab = await client(b, clients)
        assert (await tab.hello("Ann", resume=info.resume)).account
        laptop = await client(b, clients)
        await laptop.hello("Ann")
        signed_in = await laptop.request(partial(Login, name="Ann", password="a logout password"))
        assert isinstance(signed_in, AccountInfo), signed_in

        assert isinstance(await phone.request(partial(Logout)), Ack)
        assert await phone.closed() == CloseCode.LOGGED_OUT
        assert await tab.closed() == CloseCode.LOGGED_OUT
        assert laptop.is_open
        assert isinstance(await laptop.request(partial(ListRooms)), Lobby)
    finally:
        for opened in clients:
            with contextlib.suppress(Exception):
                await opened.close()
