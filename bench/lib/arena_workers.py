"""The worker processes of :mod:`bench.arena`'s bots (:mod:`bench.lib.arena_bots`): one
Python process cannot drive many hundred players' frames on time, so they are shared out.

A worker connects its bots, says ``ready``, is told when to ``go`` (the
:class:`~bench.lib.arena_bots.Schedule`) and which node was killed, and sends back a
:class:`~bench.lib.arena_bots.WorkerResult` once its bots have stopped.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import multiprocessing.connection
import multiprocessing.process
import signal
import time
from typing import Final

from websockets.exceptions import InvalidHandshake

from bench.lib.arena_bots import ArenaBot, Plan, Schedule, WorkerResult
from bench.lib.sources import address_of, connect_from, from_own_addresses
from bench.lib.spawn import WorkerProcesses, raise_nofile_limit
from client.lib.connection import RaceClient, ServerError

#: Bots of a worker opening their connections at once.
OPENING: Final = 16


async def _connect(
    plan: Plan, number: int, result: WorkerResult, gate: asyncio.Semaphore
) -> tuple[int, RaceClient] | None:
    async with gate:
        url = plan.urls[number % len(plan.urls)]
        try:
            client = await connect_from(url, f"arena{number}", address_of(number), reconnect=True)
        except (OSError, ServerError, TimeoutError, InvalidHandshake) as error:
            result.errors[f"connect failed ({type(error).__name__})"] += 1
            return None
    result.connected += 1
    return number, client


async def run_worker(plan: Plan, pipe: multiprocessing.connection.Connection) -> WorkerResult:
    """Connect the plan's bots, say ready, race from ``go`` to the schedule's end."""
    loop = asyncio.get_running_loop()
    result, dead = WorkerResult(), set[str]()
    gate = asyncio.Semaphore(OPENING)
    opened = [c for c in await asyncio.gather(*(_connect(plan, n, result, gate) for n in plan.bots)) if c is not None]
    clients = [client for _, client in opened]
    pipe.send(("ready", len(clients)))
    schedule: asyncio.Future[Schedule] = loop.create_future()

    def on_pipe() -> None:
        kind, value = pipe.recv()
        if kind == "go":
            schedule.set_result(value)
        elif kind == "killed":
            dead.add(value)

    loop.add_reader(pipe.fileno(), on_pipe)
    try:
        when = await schedule
        bots = [
            ArenaBot(client, plan, when, result, plan.measure_every > 0 and n % plan.measure_every == 0, dead)
            for n, client in opened
        ]
        await asyncio.gather(*(bot.run() for bot in bots))
        result.players = {bot.name: bot.client.player or "" for bot in bots}
        result.back = sum(1 for bot in bots if bot.name in result.drops and bot.client.connected.is_set())
    finally:
        loop.remove_reader(pipe.fileno())
        await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)
    return result


def worker_main(plan: Plan, pipe: multiprocessing.connection.Connection) -> None:
    """Entry point of a worker process."""
    raise_nofile_limit()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    gc.set_threshold(50_000, 50, 100)  # full collections of many bots pause for 100 ms and more
    with from_own_addresses():
        result = asyncio.run(run_worker(plan, pipe))
    pipe.send(("result", result))


class Workers(WorkerProcesses):
    """The arena bench's worker processes, one per plan (:class:`WorkerProcesses`)."""

    def __init__(self, plans: list[Plan]) -> None:
        super().__init__(worker_main, plans, "arena-worker")

    def ready(self, timeout: float) -> int:
        """Wait until every worker has connected its bots; how many are connected."""
        deadline, connected = time.monotonic() + timeout, 0
        for pipe in self.pipes:
            if not pipe.poll(max(0.1, deadline - time.monotonic())):
                raise TimeoutError(f"the bots were not connected within {timeout:.0f} s")
            _, count = pipe.recv()
            connected += count
        return connected

    def results(self, timeout: float) -> list[WorkerResult]:
        """Each worker's result, once its bots have stopped (blocking: run it in a thread)."""
        deadline, results = time.monotonic() + timeout, []
        for pipe in self.pipes:
            if pipe.poll(max(0.1, deadline - time.monotonic())):
                kind, result = pipe.recv()
                assert kind == "result"
                results.append(result)
        return results
