"""Going home (PROTOCOL.md): a racer whose connection is on one node and whose room runs on
another is told the room's home, moves its connection there, and races on without the hop
between the nodes and without its rival seeing it drop. Direct to the nodes, the balancer's
``?home=`` routing stood in for by a map of routes to node addresses (the shipped balancer
is tested in tests/nodes/test_deployment.py)."""

from __future__ import annotations

import functools

import pytest

from bench.lib.spawn import free_port
from client.lib.connection import RaceClient
from protocol.messages import (
    AskSnapshot,
    CreateRoom,
    Joined,
    RacerConnection,
    RoomOptions,
    ServerMessage,
    Spectate,
    Update,
)
from tests.nodes.conftest import NodeProcess, Service
from tests.nodes.test_metrics import metrics
from tests.nodes.test_service import open_race, play_one, race_started
from tests.polling import eventually, eventually_async

pytestmark = pytest.mark.asyncio

FORWARDED = "solitaire_forwarded_requests_received_total"
#: Going home is the clients' and the edge's, the same on a Cluster: its first test runs on
#: both, the others on one Redis only.
ONE_REDIS = pytest.mark.parametrize("backend", ["redis"], indirect=True)


async def routed_nodes(service: Service) -> tuple[NodeProcess, NodeProcess, dict[str, str]]:
    """Two nodes, ``home-a`` and ``home-b`` at the balancer, and where each is reached."""
    a, b = await service.start(2, each=[["--route", "home-a"], ["--route", "home-b"]])
    return a, b, {"home-a": a.url, "home-b": b.url}


async def connect_routed(service: Service, node: NodeProcess, name: str, routes: dict[str, str]) -> RaceClient:
    client = await RaceClient.connect(node.url, name, reconnect=False, home_address=lambda _url, home: routes[home])
    service.clients.append(client)
    return client


def dropped(messages: list[ServerMessage]) -> list[RacerConnection]:
    events = [event for message in messages if isinstance(message, Update) for event in message.events]
    return [event for event in events if isinstance(event, RacerConnection) and not event.connected]


async def test_a_racer_on_another_node_goes_home_and_races_there_unseen(service: Service) -> None:
    a, b, routes = await routed_nodes(service)
    ann = await service.connect(a, "Ann")
    bob = await connect_routed(service, b, "Bob", routes)
    seen_by_ann: list[ServerMessage] = []
    ann.listen(lambda _room, message: seen_by_ann.append(message))

    code = await open_race(ann, bob)
    await eventually(lambda: bob.url == a.url, what="Bob on node A")
    # His connection on node B is let go once its requests are answered.
    await eventually_async(lambda: metrics(b), lambda samples: samples["solitaire_connections"] == 0)
    forwarded = (await metrics(a))[FORWARDED]

    await race_started(code, ann, bob)
    versions = [await play_one(bob, code) for _ in range(3)]
    await ann.wait_room(code, lambda mirror: mirror.version >= versions[-1])
    assert (await metrics(a))[FORWARDED] == forwarded  # served on node A, not through B
    assert dropped(seen_by_ann) == []  # Bob never showed as disconnected


@ONE_REDIS
async def test_a_racer_in_rooms_on_two_nodes_stays_where_it_is(service: Service) -> None:
    a, b, routes = await routed_nodes(service)
    ann = await service.connect(a, "Ann")
    bob = await connect_routed(service, b, "Bob", routes)
    own = await bob.request(lambda i: CreateRoom(id=i, variant="scorpion"))
    assert isinstance(own, Joined)
    assert own.home is None  # his own room runs on his node
    code = await open_race(ann, bob)  # told Ann's room's home, but he races on node B too
    assert bob.roles.keys() == {own.room, code}
    await bob.request(lambda i: AskSnapshot(id=i, room=own.room))  # a round trip: time to have moved
    assert bob.url == b.url
    await race_started(code, ann, bob)
    assert await play_one(bob, code) > 0
    assert bob.url == b.url
    assert (await metrics(a))[FORWARDED] > 0


@ONE_REDIS
async def test_a_spectator_on_another_node_goes_home_and_still_sees_the_race(service: Service) -> None:
    a, b, routes = await routed_nodes(service)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(a, "Bob")
    code = await open_race(ann, bob, RoomOptions(public=True, spectator_delay=1))
    eve = await connect_routed(service, b, "Eve", routes)
    watching = await eve.request(lambda i: Spectate(id=i, room=code))
    assert isinstance(watching, Joined)
    assert watching.home == "home-a"
    await eventually(lambda: eve.url == a.url, what="Eve on node A")
    # The hello gives back seats, not spectators' rooms: she follows the room again there.
    await eventually_async(lambda: metrics(b), lambda samples: samples["solitaire_connections"] == 0)
    await race_started(code, ann, bob)
    version = await play_one(bob, code)
    await eve.wait_room(code, lambda mirror: mirror.version >= version and mirror.board(1) is not None, timeout=30)


@ONE_REDIS
async def test_a_home_that_cannot_be_reached_leaves_the_racer_where_it_is(service: Service) -> None:
    a, b, routes = await routed_nodes(service)
    routes["home-a"] = f"ws://127.0.0.1:{free_port('127.0.0.1')}"  # nothing listens there
    ann = await service.connect(a, "Ann")
    bob = await connect_routed(service, b, "Bob", routes)
    code = await open_race(ann, bob)
    await race_started(code, ann, bob)  # its requests wait for the try, then go on node B
    assert await play_one(bob, code) > 0
    assert bob.url == b.url
    assert bob.connected.is_set()


@ONE_REDIS
async def test_a_player_in_a_quick_match_line_stays_where_its_place_is(service: Service) -> None:
    a, b, routes = await routed_nodes(service)
    ann = await service.connect(a, "Ann")
    bob = await service.connect(a, "Bob")
    code = await open_race(ann, bob, RoomOptions(public=True))
    eve = await connect_routed(service, b, "Eve", routes)
    ticket = await eve.quick_match("scorpion")
    watching = await eve.request(lambda i: Spectate(id=i, room=code))
    assert isinstance(watching, Joined)
    assert watching.home == "home-a"  # her place in the line is her connection on node B's
    await eve.request(lambda i: AskSnapshot(id=i, room=code))
    assert eve.url == b.url
    assert not ticket.joined.done()
    assert await eve.leave_queue(ticket)


@ONE_REDIS
async def test_a_client_closed_while_it_goes_home_leaves_no_connection_open(service: Service) -> None:
    a, b, routes = await routed_nodes(service)
    ann = await service.connect(a, "Ann")
    bob = await connect_routed(service, b, "Bob", routes)
    await open_race(ann, bob)
    await eventually(lambda: not bob.connected.is_set(), what="Bob's move under way")  # requests wait for it
    await bob.close()
    # Closed at once, both connections: not after the move's own waits (10 s each).
    await eventually_async(functools.partial(connections_on, a), lambda count: count == 1, timeout=2)  # Ann's
    await eventually_async(functools.partial(connections_on, b), lambda count: count == 0, timeout=2)


async def connections_on(node: NodeProcess) -> float:
    return (await metrics(node))["solitaire_connections"]
