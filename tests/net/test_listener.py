"""The accept loop: websocket openings wait in line and are let in one per interval, plain
HTTP requests (health checks) skip the line, and a full line answers 503 at once. The port is
bound before the server is built, and refuses connections until it is served on."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import socket
from collections.abc import AsyncIterator
from typing import ClassVar

import pytest
import uvloop

from server.config import Network
from server.net.listener import OpeningLine, bind, is_plain_request
from server.net.proxy_header import header
from tests.polling import eventually

OPENING = b"GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n"
HEALTH = b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n"
ANSWER = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok"


def test_a_whole_request_without_upgrade_is_plain() -> None:
    assert is_plain_request(HEALTH)
    assert not is_plain_request(OPENING)
    assert not is_plain_request(OPENING.replace(b"websocket", b"WebSocket"))
    assert not is_plain_request(OPENING.replace(b"Upgrade: websocket", b"UPGRADE:websocket"))
    assert not is_plain_request(b"")  # nothing sent yet: it waits like an opening
    assert not is_plain_request(HEALTH[:20])  # a head cut short


class Answering(asyncio.Protocol):
    """Stands in for websockets: answers the first bytes it gets, and counts the connections."""

    served: ClassVar[list[bytes]] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        Answering.served.append(data)
        self.transport.write(ANSWER)
        self.transport.close()


@contextlib.asynccontextmanager
async def line_on_a_server(
    interval: float, capacity: int, per_address: int = 256, proxies: tuple[Network, ...] = ()
) -> AsyncIterator[tuple[OpeningLine, int]]:
    Answering.served = []
    server = await asyncio.get_running_loop().create_server(Answering, "127.0.0.1", 0)
    line = OpeningLine.take_over(server, interval, capacity, proxies, per_address)
    assert line is not None
    try:
        yield line, server.sockets[0].getsockname()[1]
    finally:
        await line.stop()
        server.close()
        await server.wait_closed()


async def ask(
    port: int, request: bytes, source: str = "127.0.0.1"
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection from ``source`` (any 127.x address: Linux routes all of them to loopback)
    that has sent ``request``."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
    writer.write(request)
    await writer.drain()
    return reader, writer


async def closed(reader: asyncio.StreamReader) -> bool:
    """True when the server closed the connection without answering (a reset, since the
    request it never read was still in its buffer, or a plain end)."""
    try:
        return await reader.read() == b""
    except ConnectionResetError:
        return True


@pytest.mark.asyncio
async def test_a_bound_port_refuses_connections_until_it_is_served_on() -> None:
    listening = await bind("127.0.0.1", 0)
    port = listening.getsockname()[1]
    assert port != 0
    with pytest.raises(ConnectionRefusedError):
        await asyncio.open_connection("127.0.0.1", port)
    Answering.served = []
    server = await asyncio.get_running_loop().create_server(Answering, sock=listening)
    try:
        reader, _ = await ask(port, HEALTH)
        assert await reader.read() == ANSWER
    finally:
        server.close()
        await server.wait_closed()


@pytest.mark.asyncio
async def test_a_port_another_program_listens_on_fails_as_asyncios_listeners_do() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(OSError, match="address already in use") as failed:
            await bind("127.0.0.1", taken.getsockname()[1])
    assert failed.value.errno == errno.EADDRINUSE


@pytest.mark.asyncio
async def test_openings_wait_their_turn_while_a_health_check_is_answered_at_once() -> None:
    async with line_on_a_server(interval=30.0, capacity=10) as (line, port):
        openings = [await ask(port, OPENING) for _ in range(4)]
        # The first is let in at once; the others wait a turn 30 s away.
        assert await openings[0][0].read() == ANSWER
        await eventually(lambda: line.waiting == 3, what="three openings in line")
        reader, _ = await ask(port, HEALTH)
        assert await reader.read() == ANSWER
        assert line.waiting == 3
        assert Answering.served == [OPENING, HEALTH]


@pytest.mark.asyncio
async def test_openings_are_let_in_one_after_another_in_the_order_they_came() -> None:
    requests = [OPENING.replace(b"GET / ", b"GET /%d " % n) for n in range(20)]
    async with line_on_a_server(interval=0.01, capacity=2000) as (_, port):
        openings = [await ask(port, request) for request in requests]
        answers = await asyncio.gather(*(reader.read() for reader, _ in openings))
        assert answers == [ANSWER] * 20
        assert Answering.served == requests


@pytest.mark.asyncio
async def test_a_full_line_answers_503_at_once() -> None:
    async with line_on_a_server(interval=30.0, capacity=2) as (line, port):
        first = await ask(port, OPENING)
        assert await first[0].read() == ANSWER
        for _ in range(2):
            await ask(port, OPENING)
        await eventually(lambda: line.waiting == 2, what="the line full")
        reader, _ = await ask(port, OPENING)
        answer = await reader.read()
        assert answer.startswith(b"HTTP/1.1 503 Service Unavailable\r\n")
        assert b"\r\nRetry-After: 5\r\n" in answer


@pytest.mark.asyncio
async def test_stopping_closes_the_connections_still_waiting() -> None:
    async with line_on_a_server(interval=30.0, capacity=10) as (line, port):
        await ask(port, OPENING)
        waiting = [await ask(port, OPENING) for _ in range(2)]
        await eventually(lambda: line.waiting == 2, what="two openings in line")
        await line.stop()
        assert [await closed(reader) for reader, _ in waiting] == [True, True]


@pytest.mark.asyncio
async def test_an_address_with_many_openings_waiting_delays_anothers_by_one_turn_only() -> None:
    async with line_on_a_server(interval=0.05, capacity=2000) as (line, port):
        crowd = [await ask(port, OPENING.replace(b"GET / ", b"GET /a%d " % n), "127.0.0.2") for n in range(12)]
        await eventually(lambda: line.waiting >= 8, what="the crowd in line")
        other = OPENING.replace(b"GET / ", b"GET /b ")
        reader, _ = await ask(port, other, "127.0.0.3")
        assert await reader.read() == ANSWER
        # Served at its address's first turn: after at most the crowd's next two.
        assert Answering.served.index(other) <= Answering.served.index(b"GET /a0 " + OPENING[6:]) + 3
        await asyncio.gather(*(r.read() for r, _ in crowd))


@pytest.mark.asyncio
async def test_one_address_holds_a_small_share_of_the_line_and_others_still_get_in() -> None:
    async with line_on_a_server(interval=30.0, capacity=400) as (line, port):
        assert line.share == 4
        first = await ask(port, OPENING, "127.0.0.2")
        assert await first[0].read() == ANSWER
        crowd = [await ask(port, OPENING, "127.0.0.2") for _ in range(6)]
        answers = [await crowd[n][0].read() for n in (4, 5)]
        assert all(answer.startswith(b"HTTP/1.1 503 ") for answer in answers)
        await ask(port, OPENING, "127.0.0.3")
        await eventually(lambda: line.waiting == 5, what="the other address in line")


@pytest.mark.asyncio
async def test_an_address_past_its_connection_cap_gets_429_and_another_does_not() -> None:
    async with line_on_a_server(interval=30.0, capacity=400, per_address=3) as (line, port):
        first = await ask(port, OPENING, "127.0.0.2")
        assert await first[0].read() == ANSWER  # handed over: no longer counted by the line
        held = [await ask(port, OPENING, "127.0.0.2") for _ in range(3)]
        await eventually(lambda: line.held("127.0.0.2") == 3, what="three held")
        reader, _ = await ask(port, OPENING, "127.0.0.2")
        answer = await reader.read()
        assert answer.startswith(b"HTTP/1.1 429 Too Many Requests\r\n")
        await ask(port, OPENING, "127.0.0.3")
        await eventually(lambda: line.held("127.0.0.3") == 1, what="the other address held")
        for _, writer in held:
            writer.close()
        await line.stop()
        assert line.held("127.0.0.2") == 0


@pytest.mark.asyncio
async def test_a_balancers_proxy_header_is_read_off_and_names_the_address_counted() -> None:
    balancer = (ipaddress.ip_network("127.0.0.1/32"),)
    async with line_on_a_server(interval=30.0, capacity=400, per_address=2, proxies=balancer) as (line, port):
        proxied = header(("198.51.100.1", 5000), ("127.0.0.1", port), tls=True)
        reader, _ = await ask(port, proxied + OPENING)
        assert await reader.read() == ANSWER
        assert Answering.served == [OPENING]  # the request, without the header
        for _ in range(2):
            await ask(port, proxied + OPENING)
        await eventually(lambda: line.held("198.51.100.1") == 2, what="two held")
        reader, _ = await ask(port, proxied + OPENING)
        assert (await reader.read()).startswith(b"HTTP/1.1 429 ")
        # The balancer's own address is never counted, and one without a header is closed.
        assert line.held("127.0.0.1") == 0
        reader, _ = await ask(port, OPENING)
        assert await closed(reader)


@pytest.mark.asyncio
@pytest.mark.parametrize("through_balancer", [False, True])
async def test_a_connection_closed_before_its_first_byte_is_let_go(through_balancer: bool) -> None:
    """A port probe (a TCP health check, a scanner) connects and closes without a byte: the
    line closes it too, and its address holds nothing (it was kept forever, polled in a loop
    that took a core's third on an idle server)."""
    balancer = (ipaddress.ip_network("127.0.0.5/32"),) if through_balancer else ()
    source = "127.0.0.5" if through_balancer else "127.0.0.4"  # the balancer checks its servers too
    async with line_on_a_server(interval=30.0, capacity=400, per_address=2, proxies=balancer) as (line, port):
        for _ in range(3):
            _, writer = await asyncio.open_connection("127.0.0.1", port, local_addr=(source, 0))
            writer.close()
            await writer.wait_closed()
        await eventually(lambda: line.undecided == 0 and line.held(source) == 0, what="the probes let go")
        proxied = header(("127.0.0.4", 5000), ("127.0.0.1", port))
        reader, _ = await ask(port, proxied + OPENING if through_balancer else OPENING, source)
        assert await reader.read() == ANSWER  # not 429: the probes hold no place


async def half_a_proxy_header(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, bytes]:
    """The balancer (127.0.0.5) sends the first 10 bytes of a PROXY header for 127.0.0.4;
    the connection, and the bytes still to send."""
    proxied = header(("127.0.0.4", 5000), ("127.0.0.1", port))
    reader, writer = await ask(port, proxied[:10], "127.0.0.5")
    return reader, writer, proxied[10:]


@pytest.mark.asyncio
async def test_a_balancer_connection_stalled_halfway_through_its_proxy_header_is_closed_after_its_second() -> None:
    balancer = (ipaddress.ip_network("127.0.0.5/32"),)
    async with line_on_a_server(interval=30.0, capacity=400, proxies=balancer) as (line, port):
        reader, _writer, _ = await half_a_proxy_header(port)  # kept open: the balancer stalls
        assert await asyncio.wait_for(closed(reader), 10)  # it was looked at again and again, forever
        assert line.undecided == 0


@pytest.mark.asyncio
async def test_a_proxy_header_sent_in_two_parts_still_gets_its_opening_in() -> None:
    balancer = (ipaddress.ip_network("127.0.0.5/32"),)
    async with line_on_a_server(interval=30.0, capacity=400, proxies=balancer) as (_, port):
        reader, writer, rest = await half_a_proxy_header(port)
        await asyncio.sleep(0.2)
        writer.write(rest + OPENING)
        assert await reader.read() == ANSWER
        assert Answering.served == [OPENING]


def test_under_uvloop_the_server_keeps_its_own_accept() -> None:
    async def check() -> None:
        server = await asyncio.get_running_loop().create_server(Answering, "127.0.0.1", 0)
        try:
            assert OpeningLine.take_over(server, 0.01, 10) is None
        finally:
            server.close()

    uvloop.run(check())
