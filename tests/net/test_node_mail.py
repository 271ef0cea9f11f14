"""A node's post (real Redis, real direct links on loopback): what is posted to one node in
two successive event-loop turns leaves as one batch, so a forwarded request's answer frames
and its Done (posted a turn later) cost the client's node one wake-up, not two."""

from __future__ import annotations

import asyncio

import pytest

from server.live.nodes import Node
from server.net.inbox import DECODER, Done, Frames, Message
from server.net.node_mail import NodeMail
from server.net.peers import PeerLinks, link_key
from server.storage.connection import Storage
from server.storage.nodes import NodeStore
from tests.polling import eventually

KEY = link_key(b"the service's secret")


@pytest.mark.asyncio
async def test_messages_posted_a_turn_apart_leave_in_one_batch(store: Storage) -> None:
    batches: list[list[Message]] = []
    receiver = PeerLinks("b", KEY, _no_address, lambda data: batches.append(DECODER.decode(data)), _no_redis)
    port = await receiver.start("127.0.0.1", 0)

    async def address_of(node: str) -> str | None:
        return f"127.0.0.1:{port}" if node == "b" else None

    node = Node(NodeStore(store), "127.0.0.1:0", 5.0, dict, list, node_id="a")
    mail = NodeMail(node, lambda message: None)
    mail.peers = PeerLinks("a", KEY, address_of, lambda data: None, _no_redis)
    await mail.peers.start("127.0.0.1", 0)
    try:
        mail.post("b", Done(0, False))  # opens the link
        await eventually(lambda: batches)
        batches.clear()
        mail.post("b", Frames("a", [1], b"ack"))
        await asyncio.sleep(0)  # the next turn: as the forwarded request's task wakes
        mail.post("b", Done(7, False))
        await eventually(lambda: batches)
        await asyncio.sleep(0.05)
        assert batches == [[Frames("a", [1], b"ack"), Done(7, False)]]

        mail.post("b", Done(8, False))  # and a lone message still goes, a turn later
        await eventually(lambda: len(batches) == 2)
        assert batches[1] == [Done(8, False)]
    finally:
        await mail.peers.close()
        await receiver.close()


async def _no_address(node: str) -> str | None:
    return None


def _no_redis(node: str, batches: list[bytes]) -> None:
    raise AssertionError(f"a batch for {node} went to Redis")
