"""The fault run's network namespace: cutting a node from Redis is invisible to the host's
other programs (a browser in another test aborts its loads on any address change)."""

from __future__ import annotations

import subprocess

import pytest

from tests.cluster.netns import NamespaceUnavailable, session_namespace

pytestmark = pytest.mark.asyncio


def host_network() -> str:
    """What a program in the host namespace can see of its network: addresses and links."""
    return subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout


async def test_cutting_and_healing_changes_nothing_the_host_sees() -> None:
    try:
        namespace = session_namespace()
    except NamespaceUnavailable as why:
        pytest.skip(f"no namespace on this machine: {why}")
    before = host_network()
    await namespace.cut()
    cut = host_network()
    await namespace.heal()
    assert cut == before
    assert host_network() == before
    assert namespace.host_address in before  # made before the session's tests, once
