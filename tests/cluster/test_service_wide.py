"""Service-wide rules hold whichever node asks: two server processes' worth of nodes (two
:class:`~server.app.RaceServer` s in this process, sharing one key space) on one Redis and on
a 3-primary Redis Cluster, with the asker on one node and what the answer depends on on the other."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from protocol.messages import Ack, AskDaily, DailyInfo, Error, Joined, Resign, Spectate, StartDaily
from server.app import RaceServer, stop_leftovers
from server.config import Config
from tests.nodes.conftest import redis_cluster
from tests.polling import eventually_async
from tests.server.conftest import RawClient
from tests.server.test_daily import SOLVER, account_token, ask, daily_deal, lobby, racing, start_daily

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture(params=["redis", "cluster"])
async def two_nodes(
    request: pytest.FixtureRequest, redis_url: str, tmp_path: Path
) -> AsyncIterator[tuple[RaceServer, RaceServer]]:
    """Two nodes of one service (the daily challenge on), on the session's Redis or a Cluster."""
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(redis_cluster(tmp_path)) if request.param == "cluster" else redis_url
        settings: dict[str, Any] = {**SOLVER, "redis_url": url, "key_prefix": f"test:{uuid.uuid4().hex[:12]}:"}
        async with (
            RaceServer(Config(port=0, node_ttl=2.0, **settings)) as a,
            RaceServer(Config(port=0, node_ttl=2.0, **settings)) as b,
        ):
            yield a, b
        await stop_leftovers()


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
