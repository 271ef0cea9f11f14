"""The compact connection: its two queues are lists (so an idle connection holds less), and it
still carries everything in order: a flood past the receive queue, a fragmented message, and
a large answer to a client that reads late."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import pytest
from websockets.asyncio.client import connect
from websockets.asyncio.server import ServerConnection, serve

from server.connections.compact import CompactConnection, ShortQueue


def test_a_short_queue_behaves_as_a_deque_at_both_ends() -> None:
    queue: ShortQueue[int] = ShortQueue([3, 4])
    queue.extendleft(reversed([1, 2]))  # as websockets puts frames back
    assert list(queue) == [1, 2, 3, 4]
    assert queue.popleft() == 1
    queue.append(5)
    assert list(queue) == [2, 3, 4, 5]


@contextlib.asynccontextmanager
async def echo_server() -> AsyncIterator[tuple[int, list[ServerConnection]]]:
    connections: list[ServerConnection] = []

    async def echo(socket: ServerConnection) -> None:
        connections.append(socket)
        async for message in socket:
            if message == "big":
                await socket.send(b"x" * 4_000_000)  # far past the write limit: drain waits
            else:
                await socket.send(message)

    async with serve(
        echo, "127.0.0.1", 0, max_queue=4, ping_interval=None, create_connection=CompactConnection
    ) as server:
        yield server.sockets[0].getsockname()[1], connections


@pytest.mark.asyncio
async def test_the_connection_is_compacted_with_the_installed_websockets() -> None:
    async with echo_server() as (port, connections), connect(f"ws://127.0.0.1:{port}") as client:
        await client.send("hello")
        assert await client.recv() == "hello"
        (socket,) = connections
        assert isinstance(socket, CompactConnection)
        # False would mean websockets changed its insides: the swap then leaves them alone.
        assert socket.compacted


@pytest.mark.asyncio
async def test_a_flood_and_a_fragmented_message_arrive_whole_and_in_order() -> None:
    async with echo_server() as (port, _), connect(f"ws://127.0.0.1:{port}", max_size=None) as client:
        for n in range(300):  # many times the receive queue of 4: reading pauses and resumes
            await client.send(f"m{n}")
        await client.send(["frag", "mented", " message"])
        answers = [await asyncio.wait_for(client.recv(), 5) for _ in range(301)]
        assert answers == [f"m{n}" for n in range(300)] + ["fragmented message"]


@pytest.mark.asyncio
async def test_a_large_answer_reaches_a_client_that_reads_late() -> None:
    async with echo_server() as (port, _), connect(f"ws://127.0.0.1:{port}", max_size=None) as client:
        await client.send("big")
        await asyncio.sleep(0.3)  # the server's write waits for the transport to drain
        await client.send("after")
        assert await asyncio.wait_for(client.recv(), 5) == b"x" * 4_000_000
        assert await asyncio.wait_for(client.recv(), 5) == "after"
