"""The shipped balancer (server/deploy/haproxy.cfg, as docker-compose.yml mounts it) run as a
process on this machine, set through its environment only, for the tests and the benches.

Each part has its own loopback address (Linux routes all of 127/8 to loopback): the balancer
listens on :data:`FRONT` and connects to the nodes from :data:`SOURCE`, the one address the
nodes trust (``--trusted-proxies``); clients connect from addresses of their own. Its
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

ROOT = Path(__file__).resolve().parents[2]
CONFIG = ROOT / "server" / "deploy" / "haproxy.cfg"
SELF_SIGNED = ROOT / "server" / "deploy" / "self-signed.sh"
FRONT, SOURCE = "127.0.0.10", "127.0.0.20"


class Missing(RuntimeError):
    """A program the balancer needs (haproxy, openssl) is not on PATH; the message says which."""


def environment(plain: int, tls: int, certificate: Path, node_ports: Sequence[int]) -> dict[str, str]:
    """The environment the shipped config reads (its header lists each variable)."""
    variables = {
        "SR_BIND": FRONT,
        "SR_PLAIN_PORT": str(plain),
        "SR_TLS_PORT": str(tls),
        "SR_CERTS": str(certificate),
        "SR_SOURCE": SOURCE,
        # Two descriptors per proxied connection, and a few of its own.
        "SR_MAXCONN": str((resource.getrlimit(resource.RLIMIT_NOFILE)[0] - 100) // 2),
    }
    for n, port in enumerate(node_ports, 1):
        variables[f"SR_NODE{n}"] = f"127.0.0.1:{port}"
    return variables


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
