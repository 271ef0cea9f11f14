"""A node's heartbeat, against a real Redis: it counts the times it went longer than its TTL
without one (the other nodes may then have taken it for gone), and only those."""

from __future__ import annotations

import asyncio
import time

import pytest

from server.cluster.node import Node
from server.ops.stopping import stop_tasks
from server.storage.connection import Storage
from server.storage.nodes import NodeStore
from tests.polling import eventually

pytestmark = pytest.mark.asyncio

#: Long enough that a busy machine never delays four beats a TTL by a whole TTL.
TTL = 1.0


async def test_a_stalled_node_counts_a_lapse_and_a_beating_one_none(store: Storage) -> None:
    node = Node(NodeStore(store), "127.0.0.1:1", TTL)
    await node.start()
    beating = asyncio.create_task(node.keep_beating(dict, list, list))
    try:
        await asyncio.sleep(TTL * 1.5)  # beats every quarter TTL
        assert node.lapses == 0
        assert node.id in await NodeStore(store).alive({node.id})
        time.sleep(TTL * 1.5)  # the event loop stalls past the TTL (a long pause): no beat
        assert node.id not in await NodeStore(store).alive({node.id})  # the others see it gone
        await eventually(lambda: node.lapses == 1, what="the lapse counted")
        await asyncio.sleep(TTL * 1.5)
        assert node.lapses == 1  # beating again: nothing more
    finally:
        await stop_tasks([beating])
        await node.stop()
