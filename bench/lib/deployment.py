"""A deployment on this machine, for the benches that go through the balancer, each part on a
loopback address of its own (bench/lib/balancer.py names them): a private embedded Redis
reached over TCP, three ``python -m server`` nodes on it, each on an address of its own with a
fixed port and a fixed peer port there (``--trusted-proxies`` the balancer, no solver or hint
workers, each logging to ``node-<port>.log``), and the shipped HAProxy config in front of them
(bench/lib/balancer.py: its environment, its server lines naming the nodes' addresses, and its
certificate made as compose makes it), its log in ``haproxy.log``.

:func:`deployed` starts it all and waits until the balancer serves; :meth:`Deployment.restart`
stops one node with SIGTERM and starts a replacement on the same address and ports, as a
rolling restart does, timing how soon the balancer marks the draining node DOWN. The nodes are
started and stopped by :mod:`bench.lib.node_fleet`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import ssl
import subprocess
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from bench.lib.balancer import FRONT, NODE_HOSTS, SOURCE, NetworkRedis, certificate, environment, haproxy
from bench.lib.node_fleet import NODE_TTL, Node, start_nodes, stop_nodes
from bench.lib.spawn import distinct_free_ports

#: The nodes behind the balancer (its config has a server line for each).
NODES = len(NODE_HOSTS)
#: The longest wait for a node to be ready, and then for the balancer to mark it UP.
START_TIMEOUT = 60.0
#: The longest wait for the balancer to serve once started.
SERVE_TIMEOUT = 20.0


def client_context(pem: Path) -> ssl.SSLContext:
    """A TLS client context trusting the balancer's self-signed certificate ``pem``."""
    context = ssl.create_default_context(cafile=str(pem))
    context.check_hostname = False  # the certificate names localhost; the benches dial an address
    return context


async def http_status(host: str, port: int, path: str, tls: ssl.SSLContext | None = None) -> int:
    """The status of ``GET path`` at host:port (0: no answer within 5 s)."""
    try:
        reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port, ssl=tls), 5)
    except (OSError, TimeoutError):
        return 0
    try:
        writer.write(f"GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readline(), 5)
    except (OSError, TimeoutError):
        return 0
    finally:
        writer.close()
        with contextlib.suppress(OSError, ssl.SSLError):
            await writer.wait_closed()
    parts = head.split()
    return int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0


async def wait_for(what: str, check: Callable[[], Awaitable[bool]], timeout: float) -> None:
    """Poll the coroutine function ``check`` until it is true; RuntimeError after ``timeout``."""
    deadline = time.monotonic() + timeout
    while not await check():
        if time.monotonic() > deadline:
            raise RuntimeError(f"{what}: not within {timeout:.0f} s")
        await asyncio.sleep(0.05)


def count_in(log: Path, text: str) -> int:
    """How many times ``text`` is in ``log`` so far (HAProxy's: its servers' state changes)."""
    return log.read_text(errors="replace").count(text) if log.exists() else 0


def size_of(log: Path) -> int:
    return log.stat().st_size if log.exists() else 0


async def logged(log: Path, text: str, offset: int) -> float:
    """When (monotonic) ``text`` first shows in ``log`` past ``offset``, looked for every 20 ms."""
    while True:
        if log.exists():
            with log.open("rb") as file:
                file.seek(offset)
                if text.encode() in file.read():
                    return time.monotonic()
        await asyncio.sleep(0.02)


@dataclass
class Restart:
    """The timings (monotonic) of one node's restart; ``down`` is None if the balancer never
    logged the node DOWN before its replacement came UP."""

    host: str
    port: int
    signalled: float
    exited: float = 0.0
    ready: float = 0.0
    up: float = 0.0
    down: float | None = None
    exit_code: int | None = None

    @property
    def drain_to_down(self) -> float | None:
        """Seconds from SIGTERM (the drain's start) to the balancer marking the node DOWN."""
        return None if self.down is None else self.down - self.signalled


async def start_ready(
    redis_url: str,
    logs: Path,
    hosts: Sequence[str],
    ports: Sequence[int],
    peer_ports: Sequence[int],
    node_ttl: float | None,
    flags: Sequence[str],
) -> list[Node]:
    """Nodes on ``hosts``, each on its port of ``ports`` and ``peer_ports`` there (a node's log
    goes on after its predecessor's on the port), each answering /readyz."""
    nodes = await start_nodes(
        len(ports), redis_url, logs, ports=ports, peer_ports=peer_ports, hosts=hosts, node_ttl=node_ttl, extra=flags
    )
    try:
        for node in nodes:

            async def ready(node: Node = node) -> bool:
                if node.process.poll() is not None:  # it could not listen, or broke
                    tail = node.log.read_text(errors="replace")[-3000:]
                    raise RuntimeError(f"the node on port {node.port} exited:\n{tail}")
                return await http_status(node.host, node.port, "/readyz") == 200

            await wait_for(f"node on port {node.port} to be ready", ready, START_TIMEOUT)
    except BaseException:
        stop_nodes(nodes)
        raise
    return nodes


@dataclass
class Deployment:
    """A running deployment: its Redis, its nodes (a restarted one replaced in place), their
    peer ports, and the balancer's ports, certificate, process and log."""

    redis: NetworkRedis
    nodes: list[Node]
    peer_ports: tuple[int, ...]
    plain_port: int
    tls_port: int
    certificate: Path
    balancer: subprocess.Popen[bytes]
    balancer_log: Path
    logs: Path
    node_ttl: float | None
    flags: tuple[str, ...]

    @property
    def redis_url(self) -> str:
        return self.redis.url

    @property
    def peers(self) -> tuple[tuple[str, int], ...]:
        """Each node's peer port, with its address."""
        return tuple((node.host, port) for node, port in zip(self.nodes, self.peer_ports, strict=True))

    @property
    def plain_url(self) -> str:
        return f"ws://{FRONT}:{self.plain_port}"

    def tls(self) -> ssl.SSLContext:
        return client_context(self.certificate)

    def service_pids(self) -> list[int]:
        """The nodes' processes and Redis's."""
        return [node.process.pid for node in self.nodes] + ([self.redis.pid] if self.redis.pid is not None else [])

    async def serves(self) -> bool:
        """Whether the balancer's TLS port answers /healthz with 200 (some node is up behind it)."""
        return await http_status(FRONT, self.tls_port, "/healthz", self.tls()) == 200

    async def restart(self, index: int) -> Restart:
        """SIGTERM node ``index``; once it has exited, start a replacement on its address and
        ports and wait until it is ready and the balancer has marked it UP (its server line is
        node<index + 1>). Meanwhile, the time the balancer marks it DOWN (the log is read from
        the signal on, every 20 ms)."""
        old = self.nodes[index]
        server = f"node{index + 1}"
        ups = count_in(self.balancer_log, f"{server} is UP")

        async def exited() -> bool:
            return old.process.poll() is not None

        async def up() -> bool:
            return count_in(self.balancer_log, f"{server} is UP") > ups

        downs = asyncio.ensure_future(logged(self.balancer_log, f"{server} is DOWN", size_of(self.balancer_log)))
        timing = Restart(old.host, old.port, time.monotonic())
        old.process.send_signal(signal.SIGTERM)
        try:
            await wait_for(f"node on port {old.port} to exit after SIGTERM", exited, 60)
            timing.exited, timing.exit_code = time.monotonic(), old.process.returncode
            (self.nodes[index],) = await start_ready(
                self.redis_url, self.logs, [old.host], [old.port], [self.peer_ports[index]], self.node_ttl, self.flags
            )
            timing.ready = time.monotonic()
            await wait_for(f"the balancer to mark {server} UP", up, START_TIMEOUT)
            timing.up = time.monotonic()
        finally:
            if downs.done() and not downs.cancelled() and downs.exception() is None:
                timing.down = downs.result()
            downs.cancel()
        return timing


@contextlib.asynccontextmanager
async def deployed(
    directory: Path,
    logs: Path,
    log_level: str,
    node_ttl: float | None = NODE_TTL,
    flags: Sequence[str] = (),
) -> AsyncIterator[Deployment]:
    """The deployment, serving: Redis's data and the certificate in ``directory``, the logs in
    ``logs``; the nodes log at ``log_level``, with lease TTL ``node_ttl`` (None: the server's
    default) and ``flags`` besides. Raises :class:`bench.lib.balancer.Missing` without haproxy or
    openssl. Everything is stopped on exit, the balancer first."""
    ports = distinct_free_ports([*NODE_HOSTS, *NODE_HOSTS, FRONT, FRONT])
    node_ports, peer_ports, (plain, tls) = ports[:NODES], ports[NODES : 2 * NODES], ports[2 * NODES :]
    pem = certificate(directory / "certs")
    node_flags = ("--trusted-proxies", SOURCE, "--hint-workers", "0", "--log-level", log_level, *flags)
    redis = NetworkRedis(directory / "redis")
    await redis.start()
    nodes: list[Node] = []
    try:
        nodes = await start_ready(redis.url, logs, NODE_HOSTS, node_ports, peer_ports, node_ttl, node_flags)
        balancer_log = logs / "haproxy.log"
        addresses = [(node.host, node.port) for node in nodes]
        with haproxy(environment(plain, tls, pem, addresses), balancer_log) as balancer:
            deployment = Deployment(
                redis, nodes, tuple(peer_ports), plain, tls, pem, balancer, balancer_log, logs, node_ttl, node_flags
            )
            deadline = time.monotonic() + SERVE_TIMEOUT
            while not await deployment.serves():
                if time.monotonic() > deadline:
                    raise SystemExit("the balancer did not serve:\n" + balancer_log.read_text(errors="replace"))
                await asyncio.sleep(0.1)
            yield deployment
    finally:
        stop_nodes(nodes)  # the list the deployment holds: restarted nodes included
        await redis.stop()
