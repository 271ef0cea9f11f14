"""The shipped balancer (server/deploy/haproxy.cfg, as docker-compose.yml mounts it) run as a
process on this machine, set through its environment only, for the tests and the benches.

Each part has its own loopback address (Linux routes all of 127/8 to loopback), as each has
its own container in compose: the balancer listens on :data:`FRONT` and connects to the nodes
from :data:`SOURCE`, the one address the nodes trust (``--trusted-proxies``); the nodes listen
on :data:`NODE_HOSTS` (``--host``, their peer ports too), one each, and the balancer's server
lines name those addresses; Redis is reached over TCP at :data:`REDIS_HOST`
(:class:`NetworkRedis`); clients connect from addresses of their own. The balancer's
certificate is made by server/deploy/self-signed.sh, as compose makes it.
"""

from __future__ import annotations

import contextlib
import os
import resource
import shutil
import subprocess
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final

from bench.lib.spawn import free_port
from server.storage.embedded import EmbeddedRedis

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "server" / "deploy" / "haproxy.cfg"
SELF_SIGNED = ROOT / "server" / "deploy" / "self-signed.sh"
FRONT, SOURCE = "127.0.0.10", "127.0.0.20"
#: The nodes' addresses, one each (the config has a server line for each), and Redis's.
NODE_HOSTS: Final = ("127.0.0.21", "127.0.0.22", "127.0.0.23")
REDIS_HOST: Final = "127.0.0.30"


class Missing(RuntimeError):
    """A program the balancer needs (haproxy, openssl) is not on PATH; the message says which."""


def environment(plain: int, tls: int, certificate: Path, nodes: Sequence[tuple[str, int]]) -> dict[str, str]:
    """The environment the shipped config reads (its header lists each variable); ``nodes``:
    each node's address and port, in the order of the config's server lines."""
    variables = {
        "SR_BIND": FRONT,
        "SR_PLAIN_PORT": str(plain),
        "SR_TLS_PORT": str(tls),
        "SR_CERTS": str(certificate),
        "SR_SOURCE": SOURCE,
        # Two descriptors per proxied connection, and a few of its own.
        "SR_MAXCONN": str((resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 100) // 2),
    }
    for n, (host, port) in enumerate(nodes, 1):
        variables[f"SR_NODE{n}"] = f"{host}:{port}"
    return variables


class NetworkRedis(EmbeddedRedis):
    """The embedded Redis, listening on TCP at ``host``:``port`` too (a free port by default),
    as a deployment's Redis is reached over the network: its :attr:`url` is
    ``redis://host:port``. Its Unix socket stays, for its own readiness checks."""

    def __init__(self, data_dir: Path, host: str = REDIS_HOST, port: int | None = None) -> None:
        super().__init__(data_dir)
        self.host = host
        self.port = free_port(host) if port is None else port

    @property
    def url(self) -> str:
        return f"redis://{self.host}:{self.port}"

    def command(self) -> list[str]:
        command = super().command()
        command[command.index("--port") + 1] = str(self.port)  # 0 there: no TCP
        return [*command, "--bind", self.host]


def certificate(directory: Path) -> Path:
    """The self-signed certificate compose would make, made by the same script."""
    if shutil.which("openssl") is None:
        raise Missing("no openssl on PATH")
    subprocess.run(["sh", str(SELF_SIGNED), str(directory)], check=True, capture_output=True)
    return directory / "self-signed.pem"


@contextlib.contextmanager
def haproxy(variables: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """HAProxy running the shipped config with ``variables``, its log in ``log``; stopped on exit.
    Raises :class:`Missing` without haproxy, and ValueError if the config does not check."""
    executable = shutil.which("haproxy")
    if executable is None:
        raise Missing("no haproxy on PATH (apt-get install haproxy)")
    env = {**os.environ, **variables}
    check = subprocess.run([executable, "-c", "-f", str(CONFIG)], capture_output=True, env=env)
    if check.returncode != 0:
        raise ValueError(check.stdout.decode() + check.stderr.decode())
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
