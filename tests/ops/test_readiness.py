"""The ``solitaire_ready`` gauge (server/ops/readiness.py): what ``/readyz`` would answer,
readable from ``/metrics`` without a probe."""

from __future__ import annotations

import asyncio

import pytest

from server.ops.metrics import REGISTRY
from server.ops.readiness import Readiness, drain

pytestmark = pytest.mark.asyncio


def ready() -> float | None:
    return REGISTRY.get_sample_value("solitaire_ready")


async def test_the_gauge_reads_0_until_restored_1_when_ready_and_0_at_once_when_draining() -> None:
    readiness = Readiness()
    assert ready() == 0
    assert await readiness() is not None
    assert ready() == 0
    readiness.mark_restored()
    assert ready() == 1  # no probe needed
    assert await readiness() is None
    assert ready() == 1
    readiness.start_draining()
    assert ready() == 0  # at once, before any probe
    assert await readiness() == "draining: the server is shutting down"
    assert ready() == 0


async def test_drain_turns_the_gauge_to_0_before_it_waits() -> None:
    readiness = Readiness()
    readiness.mark_restored()
    assert ready() == 1
    waiting = asyncio.create_task(drain(readiness, 10))
    await asyncio.sleep(0)
    assert ready() == 0
    waiting.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiting


async def test_the_gauge_follows_the_storage_check() -> None:
    answers = True

    async def ping() -> None:
        if not answers:
            raise ConnectionError("no route to Redis")

    readiness = Readiness(ping=ping)
    readiness.mark_restored()
    assert await readiness() is None
    assert ready() == 1
    answers = False
    assert await readiness() == "storage unavailable: no route to Redis"
    assert ready() == 0
    answers = True
    assert await readiness() is None
    assert ready() == 1


async def test_a_check_that_times_out_reads_0() -> None:
    """/readyz gives up on a ping that does not answer (server/net/http.py) and answers 503."""

    async def hang() -> None:
        await asyncio.sleep(10)

    readiness = Readiness(ping=hang)
    readiness.mark_restored()
    assert ready() == 1
    with pytest.raises(TimeoutError):
        await asyncio.wait_for(readiness(), 0.01)
    assert ready() == 0


async def test_a_node_whose_heartbeat_lapsed_is_not_ready_until_it_beats_again() -> None:
    beating = True
    readiness = Readiness(current=lambda: beating)
    readiness.mark_restored()
    assert await readiness() is None
    beating = False
    reason = await readiness()
    assert reason is not None
    assert reason.startswith("fenced")
    assert ready() == 0
    beating = True
    assert await readiness() is None
    assert ready() == 1
