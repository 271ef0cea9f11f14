"""Who a connection is from: the proxy's headers (when trusted) outlive the handshake, whose
headers the server lets go once the connection is open."""

from __future__ import annotations

import asyncio

import pytest
from websockets.asyncio.client import connect

from server.connections.link import ClientLink
from server.features.admission import client_address
from tests.server.conftest import RunningServer, ServerFactory

pytestmark = pytest.mark.asyncio

PROXY_HEADERS = {"X-Forwarded-For": "203.0.113.7, 10.0.0.1", "X-Forwarded-Proto": "https"}


async def the_only_link(srv: RunningServer) -> ClientLink:
    for _ in range(100):
        if srv.hub.links:
            (link,) = srv.hub.links
            return link
        await asyncio.sleep(0.01)
    raise AssertionError("the connection never reached the server")


@pytest.mark.parametrize("trusted", [True, False])
async def test_the_proxy_s_address_is_believed_only_when_trusted(start_server: ServerFactory, trusted: bool) -> None:
    async with (
        start_server(trust_proxy=trusted) as srv,
        connect(srv.url, additional_headers=PROXY_HEADERS, compression=None),
    ):
        link = await the_only_link(srv)
        assert client_address(srv.hub, link) == ("203.0.113.7" if trusted else "127.0.0.1")
        # What the checks need was kept; websockets' copy of the handshake was let go.
        assert link.forwarded_proto == "https"
        assert link.socket is not None
        assert link.socket.request is not None
        assert len(link.socket.request.headers) == 0
        assert link.socket.response is None
