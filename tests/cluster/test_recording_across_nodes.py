"""A race whose node died between storing its end and recording it is recorded by another
node, on one Redis and on a Redis Cluster (the ledger, the room's keys and the statistics
are in different slots)."""

from __future__ import annotations

import uuid

import pytest

from server.clock import now_ms
from server.live.recording import RaceRecorder
from server.storage.boards import Leaderboards
from server.storage.connection import Storage
from server.storage.moderation import ModerationStore
from server.storage.unrecorded import DUE_AFTER_MS, UnrecordedRaces
from tests.live.test_recording import DiesBeforeRecording, finished_race

pytestmark = pytest.mark.asyncio


async def test_a_race_left_unrecorded_on_one_node_is_recorded_on_another(backend: str) -> None:
    prefix = f"t:{uuid.uuid4().hex[:8]}:"
    first, second = await Storage.connect(backend, prefix=prefix), await Storage.connect(backend, prefix=prefix)
    try:
        await finished_race(first, DiesBeforeRecording(first, Leaderboards(first)))
        other = RaceRecorder(second, Leaderboards(second))
        assert await other.record_left_over(now_ms() + DUE_AFTER_MS) == 1
        assert await ModerationStore(second).races("p2") == [("ROOMTEST", 1)]
        assert await UnrecordedRaces(first).pending() == 0
    finally:
        await first.close()
        await second.close()
