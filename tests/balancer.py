"""Connections as a trusted balancer makes them: a PROXY v2 header naming the client first.

The server under test trusts :data:`BALANCER` (this machine's 127.0.0.1), so a test speaks as
clients on many addresses over one loopback interface, with or without TLS to the balancer.
"""

from __future__ import annotations

import asyncio
import ipaddress
import itertools
import socket
from typing import Any
from urllib.parse import urlsplit

from websockets.asyncio.client import ClientConnection, connect

from server.net.proxy_header import header

#: The trusted balancers setting of a server behind the test's "balancer".
BALANCER = (ipaddress.ip_network("127.0.0.1/32"),)

_ports = itertools.count(40000)


async def balanced_socket(url: str, client: str | None, tls: bool = True, before: bytes = b"") -> socket.socket:
    """A socket connected to ``url``'s server from 127.0.0.1 that has sent a PROXY header for
    ``client`` (None: the balancer's own connection, as a health check) and then ``before``."""
    parts = urlsplit(url)
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    loop = asyncio.get_running_loop()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setblocking(False)
    sock.bind(("127.0.0.1", 0))
    await loop.sock_connect(sock, (host, port))
    origin = None if client is None else (client, next(_ports) % 65536)
    await loop.sock_sendall(sock, header(origin, (host, port), tls) + before)
    return sock


async def connect_as(url: str, client: str, tls: bool = True, **options: Any) -> ClientConnection:
    """A websocket to ``url`` as the client at ``client`` behind the balancer."""
    options.setdefault("compression", None)
    options.setdefault("max_size", 2**22)
    return await connect(url, sock=await balanced_socket(url, client, tls), **options)
