"""The deployment's shape on one machine: the shipped HAProxy config (server/deploy/haproxy.cfg,
as docker-compose.yml mounts it, set through its environment only) in front of three real
nodes on one Redis, each part on its own loopback address, clients on addresses of their own
(bench/lib/balancer.py names the addresses):

- the balancer listens on 127.0.0.10, plain and TLS, and connects to the nodes from
  127.0.0.20, the one address the nodes trust (``--trusted-proxies``);
- the nodes listen on 127.0.0.21, 127.0.0.22 and 127.0.0.23, one each (``--host``: their peer
  ports too), and the balancer's server lines name those addresses; the test reads their
  metrics and readiness there directly, as the operator's scraper would;
- Redis listens on TCP at 127.0.0.30 (:class:`bench.lib.balancer.NetworkRedis`: the fixtures
  that make the service's Redis start one; the nodes get any Redis URL the service has);
- clients connect from 127.0.3.1, 127.0.3.2, ... (Linux routes all of 127/8 to loopback), and
  name ``localhost`` as the host they asked for, as a browser on the machine would: the name
  the certificate has and compose's ``ALLOWED_HOSTS`` allows.

Skipped without ``haproxy`` or ``openssl`` on PATH (.ci/run installs haproxy).
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import ssl
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from bench.lib.balancer import FRONT, NODE_HOSTS, SOURCE, Missing, certificate, environment, haproxy
from bench.lib.spawn import distinct_free_ports
from tests.nodes.conftest import NodeProcess, Service


def client_address(n: int) -> str:
    """The loopback address of the ``n``-th client (from 1)."""
    return f"127.0.3.{n}"


@dataclass
class Deployment:
    """A running balancer in front of ``nodes``: its ports, certificate and log."""

    nodes: list[NodeProcess]
    plain_port: int
    tls_port: int
    certificate: Path
    log: Path
    opened: list[ClientConnection] = field(default_factory=list)

    @property
    def tls(self) -> ssl.SSLContext:
        context = ssl.create_default_context(cafile=str(self.certificate))
        context.check_hostname = False  # the certificate names localhost; the test dials an address
        return context

    async def connect(self, client: int, tls: bool = True, **options: Any) -> ClientConnection:
        """A websocket through the balancer from client ``client``'s address, to ``localhost``
        (its ``Host``), dialled at the balancer's address."""
        options.setdefault("compression", None)
        options.setdefault("max_size", 2**22)
        port = self.tls_port if tls else self.plain_port
        if tls:
            options.setdefault("ssl", self.tls)
        url = f"{'wss' if tls else 'ws'}://localhost:{port}"
        socket = await connect(url, host=FRONT, port=port, local_addr=(client_address(client), 0), **options)
        self.opened.append(socket)
        return socket

    async def raw(self, client: int, request: bytes, tls: bool = True, answers: int = 1) -> bytes:
        """The balancer's answers to ``request``, sent as it is from client ``client``: all it
        sends until it closes, or until ``answers`` whole answers came (it keeps a connection
        open for the next request a while after an answer without ``Connection: close``)."""
        reader, writer = await asyncio.open_connection(
            FRONT,
            self.tls_port if tls else self.plain_port,
            ssl=self.tls if tls else None,
            local_addr=(client_address(client), 0),
        )
        try:
            writer.write(request)
            await writer.drain()
            return await asyncio.wait_for(_read_answers(reader, answers), 10)
        finally:
            writer.close()
            with contextlib.suppress(OSError, ssl.SSLError):
                await writer.wait_closed()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


@contextlib.asynccontextmanager
async def deployed(
    service: Service, directory: Path, *node_settings: str, routes: bool = False
) -> AsyncIterator[Deployment]:
    """Three nodes (with ``node_settings``), each on its own address, behind the shipped
    balancer, ready to serve; with ``routes``, each knows its name at the balancer (node1,
    node2, node3: ``--route``), and sends clients home."""
    each = [["--route", f"node{k + 1}"] for k in range(len(NODE_HOSTS))] if routes else []
    nodes = await service.start(
        len(NODE_HOSTS), "--trusted-proxies", SOURCE, *node_settings, hosts=NODE_HOSTS, each=each
    )
    plain, tls = distinct_free_ports([FRONT, FRONT])
    log = directory / "haproxy.log"
    with contextlib.ExitStack() as stack:
        try:
            pem = certificate(directory / "certs")
            stack.enter_context(haproxy(environment(plain, tls, pem, [(node.host, node.port) for node in nodes]), log))
        except Missing as missing:
            pytest.skip(str(missing))
        deployment = Deployment(nodes, plain, tls, pem, log)
        deadline = time.monotonic() + 20
        while not await _answers(deployment):
            assert time.monotonic() < deadline, deployment.log_text()
            await asyncio.sleep(0.1)
        try:
            yield deployment
        finally:
            for socket in deployment.opened:
                with contextlib.suppress(Exception):
                    await socket.close()


async def _read_answers(reader: asyncio.StreamReader, count: int) -> bytes:
    """What ``reader`` gives until it ends or ``count`` whole HTTP answers came (a body as
    long as its ``Content-Length``, none without one after a 101; else until the end)."""
    data, start = b"", 0
    while count > 0 and (chunk := await reader.read(65536)):
        data += chunk
        while count > 0 and (end := data.find(b"\r\n\r\n", start)) >= 0:
            head = data[start:end].lower()
            length = re.search(rb"\r\ncontent-length: *(\d+)", head)
            if length is None and not head.startswith(b"http/1.1 101 "):
                break  # its body ends when the connection does
            after = end + 4 + (int(length.group(1)) if length else 0)
            if len(data) < after:
                break
            start, count = after, count - 1
    return data


async def _answers(deployment: Deployment) -> bool:
    """Whether the balancer serves /healthz over TLS (some node is up behind it)."""
    try:
        answer = await deployment.raw(1, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    except OSError:
        return False
    return answer.startswith(b"HTTP/1.1 200")
