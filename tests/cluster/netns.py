"""A network namespace one node runs in, whose route to Redis the fault run can cut and heal.

:func:`redis_cut_namespace` makes (as root, with iproute2's ``ip``) a namespace linked to the
host by a veth pair on ``10.231.K.0/24``, ``K`` unique among the test processes of the
machine: the host side has ``10.231.K.1`` (where the other nodes listen) and ``10.231.K.100``
(where Redis listens, see :class:`TcpEmbeddedRedis`), the namespace side ``10.231.K.2``.
:meth:`RedisCutNamespace.cut` adds a blackhole route to the Redis address inside the
namespace, as a real partition would: established connections hang (nothing leaves), new
ones fail, while the nodes and the test's clients still reach each other;
:meth:`RedisCutNamespace.heal` removes it, and the hung connections deliver again. The
namespace and the veth pair are deleted when the context ends, whatever way it ends.

One namespace serves the whole test session (:func:`open_session_namespace`, called by the
session's first process before any test runs; :func:`session_namespace` in the tests). Adding
the host side's addresses is a network change to every program on the machine, and Chromium
aborts what it is loading with ``net::ERR_NETWORK_CHANGED``: made once before any browser
starts, and deleted after the last has closed, it changes nothing the web tests can see.
Cutting and healing happen inside the namespace, out of the host's sight.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from server.storage.embedded import EmbeddedRedis

#: Namespaces tried (each on another ``K``) before giving up: another process may hold a ``K``.
_TRIES = 8
_NAME = "fault-ns-"
_IP_TIMEOUT = 10.0


class NamespaceUnavailable(Exception):
    """The machine does not allow the namespace (not root, no ``ip``, an ``ip`` error); the message says why."""


@dataclass(frozen=True)
class RedisCutNamespace:
    name: str
    host_address: str  # the host side's own address: nodes in the host namespace listen here
    redis_address: str  # the host side's second address: Redis listens here
    inner_address: str  # the namespace side's address: the node inside listens here

    async def cut(self) -> None:
        """Drop everything the namespace sends to Redis (established connections hang)."""
        await _ip_async("netns", "exec", self.name, "ip", "route", "add", "blackhole", f"{self.redis_address}/32")

    async def heal(self) -> None:
        """Undo :meth:`cut`."""
        await _ip_async("netns", "exec", self.name, "ip", "route", "del", "blackhole", f"{self.redis_address}/32")


@contextlib.contextmanager
def redis_cut_namespace() -> Iterator[RedisCutNamespace]:
    """A fresh :class:`RedisCutNamespace`, deleted afterwards; raises :class:`NamespaceUnavailable`."""
    if shutil.which("ip") is None:
        raise NamespaceUnavailable("no `ip` command (iproute2)")
    last_error = ""
    for k in random.sample(range(1, 255), _TRIES):
        name, outer, inner = f"{_NAME}{k}", f"fault-h-{k}", f"fault-n-{k}"
        try:
            _ip("netns", "add", name)  # fails if another test process (or a leftover) has this K
        except NamespaceUnavailable as error:
            if "exists" not in str(error):
                raise
            last_error = str(error)
            continue
        try:
            try:
                _ip("link", "add", outer, "type", "veth", "peer", "name", inner)
                _ip("link", "set", inner, "netns", name)
                # No IPv6 on the host side: its link-local address would turn from tentative to
                # valid a moment after the link comes up, an address change a browser sees.
                ipv6 = Path("/proc/sys/net/ipv6/conf") / outer / "disable_ipv6"
                if ipv6.exists():
                    ipv6.write_text("1\n")
                _ip("addr", "add", f"10.231.{k}.1/24", "dev", outer)
                _ip("addr", "add", f"10.231.{k}.100/24", "dev", outer)
                _ip("link", "set", outer, "up")
                _ip("netns", "exec", name, "ip", "addr", "add", f"10.231.{k}.2/24", "dev", inner)
                _ip("netns", "exec", name, "ip", "link", "set", inner, "up")
                _ip("netns", "exec", name, "ip", "link", "set", "lo", "up")
                yield _described(name)
            finally:
                with contextlib.suppress(NamespaceUnavailable):
                    _ip("link", "del", outer)  # its peer goes with it
        finally:
            with contextlib.suppress(NamespaceUnavailable):
                _ip("netns", "del", name)
        return
    raise NamespaceUnavailable(f"no free namespace in {_TRIES} tries: {last_error}")


#: The environment variable through which the session's namespace reaches the test processes:
#: its name, or ``unavailable:`` and why not.
SESSION_VARIABLE = "SOLITAIRE_TEST_NETNS"
#: The host's addresses just after the namespace was made (:func:`host_network`).
SESSION_NETWORK_VARIABLE = "SOLITAIRE_TEST_HOST_NETWORK"


def host_network() -> str:
    """What programs in the host's namespace see of its network: every address, by interface."""
    return subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True, timeout=_IP_TIMEOUT).stdout


def open_session_namespace(stack: contextlib.ExitStack) -> None:
    """Make the session's namespace (deleted when ``stack`` closes), or note why it cannot be,
    in :data:`SESSION_VARIABLE` for this process and the worker processes it starts."""
    try:
        namespace = stack.enter_context(redis_cut_namespace())
    except NamespaceUnavailable as why:
        os.environ[SESSION_VARIABLE] = f"unavailable: {why}"
        return
    os.environ[SESSION_VARIABLE] = namespace.name
    os.environ[SESSION_NETWORK_VARIABLE] = host_network()
    stack.callback(os.environ.pop, SESSION_VARIABLE, None)
    stack.callback(os.environ.pop, SESSION_NETWORK_VARIABLE, None)


def session_namespace() -> RedisCutNamespace:
    """The namespace :func:`open_session_namespace` made, healed (no cut left by an earlier
    test); raises :class:`NamespaceUnavailable` with the reason it was not made."""
    noted = os.environ.get(SESSION_VARIABLE, "unavailable: no namespace was made for this test session")
    if noted.startswith("unavailable: "):
        raise NamespaceUnavailable(noted.removeprefix("unavailable: "))
    namespace = _described(noted)
    with contextlib.suppress(NamespaceUnavailable):
        _ip("netns", "exec", namespace.name, "ip", "route", "del", "blackhole", f"{namespace.redis_address}/32")
    return namespace


def _described(name: str) -> RedisCutNamespace:
    k = name.removeprefix(_NAME)
    return RedisCutNamespace(name, f"10.231.{k}.1", f"10.231.{k}.100", f"10.231.{k}.2")


class TcpEmbeddedRedis(EmbeddedRedis):
    """An :class:`EmbeddedRedis` that also listens on TCP at ``bind``:``port`` (its restarts too)."""

    def __init__(self, data_dir: Path, bind: str, port: int) -> None:
        super().__init__(data_dir)
        self.tcp_url = f"redis://{bind}:{port}"
        self._tcp = ["--port", str(port), "--bind", bind, "--protected-mode", "no"]

    def command(self) -> list[str]:
        return [*super().command(), *self._tcp]  # the later --port wins over the embedded one's 0


def _ip(*args: str) -> None:
    try:
        done = subprocess.run(["ip", *args], capture_output=True, timeout=_IP_TIMEOUT, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise NamespaceUnavailable(f"ip {' '.join(args)}: {error}") from error
    if done.returncode != 0:
        raise NamespaceUnavailable(f"ip {' '.join(args)}: {done.stderr.decode(errors='replace').strip()}")


async def _ip_async(*args: str) -> None:
    """:func:`_ip` without blocking the event loop (the nemesis runs beside the racers)."""
    process = await asyncio.create_subprocess_exec("ip", *args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, error = await asyncio.wait_for(process.communicate(), _IP_TIMEOUT)
    if process.returncode != 0:
        raise NamespaceUnavailable(f"ip {' '.join(args)}: {error.decode(errors='replace').strip()}")
