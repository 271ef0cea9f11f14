"""Who a connection is from: the trusted balancer's PROXY header, or the peer itself; and
whether its passwords would travel in the clear."""

from __future__ import annotations

import asyncio
import ipaddress

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidMessage, InvalidStatus

from server.connections.link import ClientLink
from tests.balancer import BALANCER, connect_as
from tests.end_to_end.conftest import RunningServer, ServerFactory

pytestmark = pytest.mark.asyncio


async def the_only_link(srv: RunningServer) -> ClientLink:
    for _ in range(100):
        if srv.hub.links:
            (link,) = srv.hub.links
            return link
        await asyncio.sleep(0.01)
    raise AssertionError("the connection never reached the server")


async def test_a_trusted_balancers_header_names_the_client_and_its_tls(start_server: ServerFactory) -> None:
    async with start_server(trusted_proxies=BALANCER) as srv, await connect_as(srv.url, "203.0.113.7"):
        link = await the_only_link(srv)
        assert (link.address, link.secure) == ("203.0.113.7", True)
        # websockets' copy of the handshake was let go once the connection opened.
        assert link.socket is not None
        assert link.socket.request is not None
        assert len(link.socket.request.headers) == 0
        assert link.socket.response is None


async def test_a_client_behind_the_balancer_without_tls_is_not_secure(start_server: ServerFactory) -> None:
    async with start_server(trusted_proxies=BALANCER) as srv, await connect_as(srv.url, "203.0.113.7", tls=False):
        link = await the_only_link(srv)
        assert (link.address, link.secure) == ("203.0.113.7", False)


async def test_a_proxy_header_from_a_peer_that_is_not_trusted_is_refused(start_server: ServerFactory) -> None:
    async with start_server() as srv:
        with pytest.raises((InvalidMessage, InvalidStatus)):  # 400, or closed
            await connect_as(srv.url, "203.0.113.7")
        assert not srv.hub.links


async def test_a_trusted_balancers_connection_without_a_header_is_closed(start_server: ServerFactory) -> None:
    async with start_server(trusted_proxies=BALANCER) as srv:
        with pytest.raises((InvalidMessage, OSError)):
            await connect(srv.url, compression=None, open_timeout=5)
        assert not srv.hub.links


async def test_behind_balancers_a_loopback_client_is_not_taken_for_tls(start_server: ServerFactory) -> None:
    elsewhere = (ipaddress.ip_network("10.9.9.9/32"),)
    async with start_server(trusted_proxies=elsewhere) as srv, connect(srv.url, compression=None):
        link = await the_only_link(srv)
        assert (link.address, link.secure) == ("127.0.0.1", False)
    async with start_server() as srv, connect(srv.url, compression=None):
        link = await the_only_link(srv)
        assert (link.address, link.secure) == ("127.0.0.1", True)
