"""The deployment's shape on one machine: the shipped HAProxy config (server/deploy/haproxy.cfg,
as docker-compose.yml mounts it, set through its environment only) in front of three real
nodes on one Redis, each part on its own loopback address, clients on addresses of their own.

- the balancer listens on 127.0.0.10 (plain and TLS, with a certificate made by
  server/deploy/self-signed.sh, as compose makes it) and connects to the nodes from 127.0.0.20,
  the one address the nodes trust (``--trusted-proxies``);
- the nodes listen on 127.0.0.1 (the test reads their metrics and readiness directly);
- clients connect from 127.0.3.1, 127.0.3.2, ... (Linux routes all of 127/8 to loopback).

Skipped without ``haproxy`` or ``openssl`` on PATH (.ci/run installs haproxy).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import shutil
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from websockets.asyncio.client import ClientConnection, connect

from bench.spawn import free_port
from tests.nodes.conftest import NodeProcess, Service

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "server" / "deploy" / "haproxy.cfg"
SELF_SIGNED = ROOT / "server" / "deploy" / "self-signed.sh"
FRONT, SOURCE = "127.0.0.10", "127.0.0.20"


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
        """A websocket through the balancer from client ``client``'s address."""
        options.setdefault("compression", None)
        options.setdefault("max_size", 2**22)
        if tls:
            url = f"wss://{FRONT}:{self.tls_port}"
            options.setdefault("ssl", self.tls)
        else:
            url = f"ws://{FRONT}:{self.plain_port}"
        socket = await connect(url, local_addr=(client_address(client), 0), **options)
        self.opened.append(socket)
        return socket

    async def raw(self, client: int, request: bytes, tls: bool = True) -> bytes:
        """The balancer's whole answer to ``request``, sent as it is from client ``client``."""
        reader, writer = await asyncio.open_connection(
            FRONT,
            self.tls_port if tls else self.plain_port,
            ssl=self.tls if tls else None,
            local_addr=(client_address(client), 0),
        )
        try:
            writer.write(request)
            await writer.drain()
            return await asyncio.wait_for(reader.read(), 10)
        finally:
            writer.close()
            with contextlib.suppress(OSError, ssl.SSLError):
                await writer.wait_closed()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace")


def balancer_environment(plain: int, tls: int, certificate: Path, nodes: list[NodeProcess]) -> dict[str, str]:
    """The environment the shipped config reads (its header lists each variable)."""
    environment = {
        "SR_BIND": FRONT,
        "SR_PLAIN_PORT": str(plain),
        "SR_TLS_PORT": str(tls),
        "SR_CERTS": str(certificate),
        "SR_SOURCE": SOURCE,
        # Two descriptors per proxied connection, and a few of its own.
        "SR_MAXCONN": str((resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 100) // 2),
    }
    for n, node in enumerate(nodes, 1):
        environment[f"SR_NODE{n}"] = f"127.0.0.1:{node.port}"
    return environment


@contextlib.contextmanager
def haproxy(environment: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    executable = shutil.which("haproxy")
    if executable is None:
        pytest.skip("no haproxy on PATH (apt-get install haproxy)")
    env = {**os.environ, **environment}
    check = subprocess.run([executable, "-c", "-f", str(CONFIG)], capture_output=True, env=env)
    assert check.returncode == 0, check.stdout.decode() + check.stderr.decode()
    with log.open("wb") as output:
        process = subprocess.Popen(
            [executable, "-db", "-f", str(CONFIG)], stdout=output, stderr=subprocess.STDOUT, env=env
        )
    try:
        yield process
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def certificate(directory: Path) -> Path:
    """The self-signed certificate compose would make, made by the same script."""
    if shutil.which("openssl") is None:
        pytest.skip("no openssl on PATH")
    subprocess.run(["sh", str(SELF_SIGNED), str(directory)], check=True, capture_output=True)
    return directory / "self-signed.pem"


@contextlib.asynccontextmanager
async def deployed(service: Service, directory: Path, *node_settings: str) -> AsyncIterator[Deployment]:
    """Three nodes (with ``node_settings``) behind the shipped balancer, ready to serve."""
    nodes = await service.start(3, "--trusted-proxies", SOURCE, *node_settings)
    pem = certificate(directory / "certs")
    plain, tls = free_port(), free_port()
    log = directory / "haproxy.log"
    with haproxy(balancer_environment(plain, tls, pem, nodes), log):
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


async def _answers(deployment: Deployment) -> bool:
    """Whether the balancer serves /healthz over TLS (some node is up behind it)."""
    try:
        answer = await deployment.raw(1, b"GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    except OSError:
        return False
    return answer.startswith(b"HTTP/1.1 200")
