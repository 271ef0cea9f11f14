"""Load-generator worker processes: start them on a plan, wait until their rooms race, stop, merge.

    with Fleet(split_plan(plan, workers=2)) as fleet:
        fleet.wait_ready(120)
        ...  # measure
        result = fleet.stop()

Each worker (:func:`bench.lib.bots.worker_main`) is a process of its own (the ``spawn`` start
method), because one Python process cannot drive thousands of moves a second and also read
its frames on time. Worker timestamps are ``time.monotonic()``, which is one clock for every
process on Linux, so the parent can cut the workers' samples by its own windows.
"""

from __future__ import annotations

import dataclasses
import time

from bench.lib.bot_results import WorkerResult
from bench.lib.bots import Plan, worker_main
from bench.lib.spawn import WorkerProcesses


def split_plan(plan: Plan, workers: int) -> list[Plan]:
    """``plan`` (all its rooms, its total rate) shared out over ``workers`` processes."""
    rooms = list(plan.rooms)
    workers = max(1, min(workers, len(rooms)))
    return [
        dataclasses.replace(plan, rooms=rooms[k::workers], rate=plan.rate / workers, seed=plan.seed * 7919 + k)
        for k in range(workers)
    ]


def merge(results: list[WorkerResult]) -> WorkerResult:
    merged = WorkerResult()
    for result in results:
        merged.ack.extend(result.ack)
        merged.rival.extend(result.rival)
        merged.legal.extend(result.legal)
        merged.acked_at.extend(result.acked_at)
        merged.undos += result.undos
        merged.errors += result.errors
        merged.races += result.races
        merged.endings += result.endings
        merged.connections += result.connections
        merged.rooms_racing += result.rooms_racing
    return merged


class Fleet(WorkerProcesses):
    """The load bench's worker processes, one per plan, started at once
    (:class:`WorkerProcesses`; on exit they are terminated at once, :meth:`stop` having
    waited for them)."""

    grace = 0.0

    def __init__(self, plans: list[Plan]) -> None:
        super().__init__(worker_main, plans, "load-worker")
        self.started = time.monotonic()
        #: Codes of the rooms racing, once :meth:`wait_ready` has returned.
        self.rooms: list[str] = []

    def wait_ready(self, timeout: float) -> tuple[int, float]:
        """Wait until every worker's rooms race (or gave up); (rooms racing, seconds it took)."""
        racing = 0
        for pipe in self.pipes:
            remaining = max(0.1, timeout - (time.monotonic() - self.started))
            if pipe.poll(remaining):
                _, _seconds, rooms, codes = pipe.recv()
                racing += rooms
                self.rooms += codes
        return racing, time.monotonic() - self.started

    def pause(self) -> None:
        """Hold every bot before its next move (the requests in flight still complete)."""
        for pipe in self.pipes:
            pipe.send("pause")

    def go(self) -> None:
        """Let the bots move again (or for the first time, with a ``paused`` plan)."""
        for pipe in self.pipes:
            pipe.send("go")

    def stop(self) -> WorkerResult:
        """Tell every worker to stop and return their merged results."""
        for pipe in self.pipes:
            pipe.send("stop")
        results = []
        for pipe in self.pipes:
            # A worker whose rooms were not racing by wait_ready's deadline says "ready" late:
            # that message may still come before its result.
            while pipe.poll(60):
                message = pipe.recv()
                if message[0] == "result":
                    results.append(message[1])
                    break
        self.join(10)
        return merge(results)
