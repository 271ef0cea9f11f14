"""Fixtures of the fault tests: a private Redis and a server process per test, always reaped.

``FAULT_RUNS`` (default 1) runs every randomized scenario with that many seeds, from
``FAULT_SEED`` (default 9) on: ``FAULT_RUNS=200 pytest tests/faults`` is the long run.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest_asyncio

from tests.faults.harness import Racer, RedisProcess, ServerProcess
from tests.polling import COUNTDOWN


def seeds() -> list[int]:
    first = int(os.environ.get("FAULT_SEED", "9"))
    return list(range(first, first + int(os.environ.get("FAULT_RUNS", "1"))))


@dataclass
class Cluster:
    """One private Redis, one server process using it, and the racers connected to it."""

    redis: RedisProcess
    server: ServerProcess
    racers: list[Racer] = field(default_factory=list)

    async def racer(self, name: str) -> Racer:
        racer = await Racer.connect(self.server.url, name)
        self.racers.append(racer)
        return racer

    def log(self) -> str:
        return self.server.log.read_text(errors="replace")


async def start_cluster(tmp_path: Path, grace: float = 60.0, countdown: float = COUNTDOWN) -> Cluster:
    redis = RedisProcess(tmp_path / "redis")
    await redis.start()
    server = ServerProcess(redis.url, tmp_path / "server.log", grace=grace, countdown=countdown)
    try:
        await server.start()
    except BaseException:
        await redis.stop()
        raise
    return Cluster(redis, server)


@pytest_asyncio.fixture
async def cluster_factory(tmp_path: Path) -> AsyncIterator[list[Cluster]]:
    """Tests append the clusters they start (with :func:`start_cluster`); all are stopped after."""
    clusters: list[Cluster] = []
    try:
        yield clusters
    finally:
        for cluster in clusters:
            for racer in cluster.racers:
                await racer.close()
            if cluster.redis.paused:
                cluster.redis.resume()
            await cluster.server.stop()
            await cluster.redis.stop()


@pytest_asyncio.fixture
async def cluster(tmp_path: Path, cluster_factory: list[Cluster]) -> Cluster:
    started = await start_cluster(tmp_path)
    cluster_factory.append(started)
    return started
