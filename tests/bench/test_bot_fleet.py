"""The load bench's fleet: a worker that said it was ready only after ``wait_ready`` gave up
(a slow start, under a profiler say) still has its result counted when the fleet stops."""

from __future__ import annotations

import multiprocessing

from bench.lib.bot_fleet import Fleet
from bench.lib.bot_results import WorkerResult


def test_a_late_ready_message_is_passed_over_for_the_result() -> None:
    ours, theirs = multiprocessing.Pipe()
    theirs.send(("ready", 130.0, 1, ["ROOM1"]))  # after wait_ready's deadline
    theirs.send(("result", WorkerResult(races=3, connections=2)))
    fleet = Fleet.__new__(Fleet)  # no worker processes: this end of the pipe plays one
    fleet.pipes, fleet.processes = [ours], []
    merged = fleet.stop()
    assert (merged.races, merged.connections) == (3, 2)
    assert theirs.recv() == "stop"
