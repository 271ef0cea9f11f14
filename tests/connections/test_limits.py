"""The pacing of new connections: a burst is let in one handshake at a time."""

from __future__ import annotations

import pytest

from server.connections.limits import Pacer


def test_a_burst_is_spaced_one_interval_apart() -> None:
    pacer = Pacer(0.001)
    waits = [pacer.delay(10.0) for _ in range(5)]
    assert waits == pytest.approx([0.0, 0.001, 0.002, 0.003, 0.004])


def test_a_quiet_moment_lets_the_next_one_in_at_once() -> None:
    pacer = Pacer(0.001)
    pacer.delay(10.0)
    pacer.delay(10.0)
    assert pacer.delay(11.0) == 0.0
    assert pacer.delay(11.0) == pytest.approx(0.001)
