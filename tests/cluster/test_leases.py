"""A node's room leases on their cadence: renewed three times a TTL, and at once after a
renewal that timed out, so one slow Redis reply does not let the lease lapse. Real Redis for
the claim; the renewals are the test's own, timed."""

from __future__ import annotations

import asyncio
import time

import pytest

from server.cluster.leases import RENEWALS_PER_TTL, RoomLeases
from server.ops.stopping import stop_tasks
from server.storage.connection import Storage, StoreUnavailable
from server.storage.nodes import NodeStore
from tests.polling import eventually

pytestmark = pytest.mark.asyncio

TTL = 3.0
#: How long the first renewal waits before it fails, as a reply that times out does: longer
#: than the interval between renewals.
TIMED_OUT_AFTER = 1.5


class FirstRenewalTimesOut(NodeStore):
    """Claims in Redis; records when each renewal was sent, and fails the first one slowly."""

    def __init__(self, storage: Storage) -> None:
        super().__init__(storage)
        self.sent: list[float] = []

    async def renew(self, leases: dict[str, str], ttl_ms: int) -> dict[str, bool]:
        self.sent.append(time.monotonic())
        if len(self.sent) == 1:
            await asyncio.sleep(TIMED_OUT_AFTER)
            raise StoreUnavailable("no reply in time")
        return dict.fromkeys(leases, True)


async def test_a_renewal_that_timed_out_is_followed_at_once_and_the_others_come_on_time(store: Storage) -> None:
    nodes = FirstRenewalTimesOut(store)
    leases = RoomLeases(nodes, "node-a", TTL)
    assert (await leases.claim("ROOM1", must_exist=False)).lease is not None

    async def lost(code: str) -> None:
        raise AssertionError(f"lease of {code} lost")

    keeping = asyncio.create_task(leases.keep(lost))
    try:
        await eventually(lambda: len(nodes.sent) >= 3, timeout=15, what="three renewals")
    finally:
        await stop_tasks([keeping])
    first, second, third = nodes.sent[:3]
    interval = TTL / RENEWALS_PER_TTL
    # The second goes out as the first gives up (waiting a whole interval more would send it
    # past the lease's expiry in Redis, with the default TTL and reply timeout).
    assert second - first < TIMED_OUT_AFTER + interval / 2
    assert third - second >= interval * 0.95  # then on the cadence again
