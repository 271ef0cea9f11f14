"""The pacing of new connections: a burst is let in one handshake at a time."""

from __future__ import annotations

import pytest

from server.connections.limits import Pacer, TokenBucket


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


def test_a_bucket_is_full_again_once_what_was_spent_has_refilled() -> None:
    bucket = TokenBucket(rate=2.0, burst=4.0)
    assert bucket.full(0.0)
    assert bucket.take(10.0, cost=3.0)
    assert not bucket.full(10.0)
    assert not bucket.full(11.0)  # 2 of the 3 back
    assert bucket.full(11.5)
