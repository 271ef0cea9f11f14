"""Idle connections: how much memory the server needs per connected client.

Run::

    python -m bench.idle --connections 10000 --spawn
    python -m bench.idle --connections 2000 --url ws://127.0.0.1:8765 --server-pid 1234

Opens ``--connections`` websocket connections, each a :class:`~client.lib.connection.RaceClient`
that says hello (so each is a player the server knows), holds them for ``--hold``
seconds, then reports the time it took to open them all and the server's RSS (and the
growth per connection over the RSS it had before). The connections are spread over
``--processes`` processes, each opening ``--concurrency`` at a time; every process
(and, with ``--spawn``, the server child) first raises its open-files limit to the hard
limit. ``--spawn`` and the server measurements work as in ``bench.load``.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import multiprocessing.connection
import signal
import time
from dataclasses import dataclass

from bench.lib.spawn import (
    ProcSample,
    check_loopback,
    describe_memory,
    exit_on_sigterm,
    raise_nofile_limit,
    redis_child,
    spawn_server,
)
from client.lib.connection import RaceClient, ServerError


@dataclass(frozen=True, slots=True)
class Opened:
    """What one process managed: how many connections, in how long, and what failed."""

    connections: int
    seconds: float
    failures: dict[str, int]


async def hold_connections(
    url: str, count: int, concurrency: int, offset: int, pipe: multiprocessing.connection.Connection
) -> None:
    """Open ``count`` connections, report them, keep them until the parent says 'close'."""
    gate = asyncio.Semaphore(concurrency)
    clients: list[RaceClient] = []
    failures: dict[str, int] = {}

    async def open_one(number: int) -> None:
        async with gate:
            try:
                clients.append(await RaceClient.connect(url, f"idle{number}", reconnect=False))
            except (OSError, ServerError, TimeoutError) as error:
                key = getattr(error, "code", type(error).__name__)
                failures[key] = failures.get(key, 0) + 1

    started = time.monotonic()
    await asyncio.gather(*(open_one(offset + n) for n in range(count)))
    pipe.send(Opened(len(clients), time.monotonic() - started, failures))
    loop = asyncio.get_running_loop()
    closing = asyncio.Event()

    def on_pipe() -> None:
        pipe.recv()
        closing.set()

    loop.add_reader(pipe.fileno(), on_pipe)
    await closing.wait()
    loop.remove_reader(pipe.fileno())
    await asyncio.gather(*(client.close() for client in clients), return_exceptions=True)


def process_main(
    url: str, count: int, concurrency: int, offset: int, pipe: multiprocessing.connection.Connection
) -> None:
    """Entry point of a client process."""
    raise_nofile_limit()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C
    asyncio.run(hold_connections(url, count, concurrency, offset, pipe))
    pipe.send("closed")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench.idle", description=__doc__.splitlines()[0])
    parser.add_argument("--connections", type=int, default=10_000, help="idle connections, default 10000")
    parser.add_argument("--url", default="ws://127.0.0.1:8765", help="server (loopback only)")
    parser.add_argument("--spawn", action="store_true", help="start the server (embedded Redis) for the run")
    parser.add_argument("--server-pid", type=int, help="without --spawn: the server process to measure")
    parser.add_argument("--processes", type=int, default=2, help="client processes, default 2")
    parser.add_argument("--concurrency", type=int, default=40, help="handshakes in flight per process, default 40")
    parser.add_argument("--hold", type=float, default=5.0, help="seconds to hold the connections open")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> str:
    raise_nofile_limit()
    spawned = spawn_server() if args.spawn else None
    try:
        url = spawned.url if spawned is not None else args.url
        check_loopback(url)
        server_pid = spawned.pid if spawned is not None else args.server_pid
        baseline = ProcSample.read(server_pid) if server_pid is not None else None
        context = multiprocessing.get_context("spawn")
        share, extra = divmod(args.connections, args.processes)
        pipes = []
        processes = []
        offset = 0
        started = time.monotonic()
        for k in range(args.processes):
            count = share + (k < extra)
            ours, theirs = context.Pipe()
            process = context.Process(
                target=process_main, args=(url, count, args.concurrency, offset, theirs), name=f"idle-{k}"
            )
            process.start()
            pipes.append(ours)
            processes.append(process)
            offset += count
        opened: list[Opened] = [pipe.recv() for pipe in pipes]
        open_seconds = time.monotonic() - started
        total = sum(o.connections for o in opened)
        failures: dict[str, int] = {}
        for o in opened:
            for key, n in o.failures.items():
                failures[key] = failures.get(key, 0) + n
        loaded = ProcSample.read(server_pid) if server_pid is not None else None
        time.sleep(args.hold)
        held = ProcSample.read(server_pid) if server_pid is not None else None
        redis_pid = redis_child(server_pid) if server_pid is not None else None
        redis = ProcSample.read(redis_pid) if redis_pid is not None else None
        for pipe in pipes:
            pipe.send("close")
        for pipe in pipes:
            if pipe.poll(60):
                pipe.recv()
        for process in processes:
            process.join(10)
            if process.is_alive():
                process.terminate()
        lines = [
            f"idle: {total} of {args.connections} connections open (each said hello), "
            f"{args.processes} client processes, {args.concurrency} handshakes in flight each",
            f"time to open them all: {open_seconds:.1f} s ({total / open_seconds:.0f} connections/s, "
            f"slowest process {max(o.seconds for o in opened):.1f} s; process start-up included)",
        ]
        if baseline is not None and held is not None and loaded is not None:
            grown = held.rss_kb - baseline.rss_kb
            per = grown * 1024 / total if total else float("nan")
            lines.append(
                f"server RSS: {baseline.rss_kb / 1024:.1f} MB before, {describe_memory(held)} after holding "
                f"{args.hold:g} s; {per / 1024:.1f} KB per connection; "
                f"CPU to accept them {loaded.cpu - baseline.cpu:.1f} s"
            )
        if redis is not None:
            lines.append(f"redis RSS: {describe_memory(redis)}")
        lines.append("failures: " + (", ".join(f"{k} x{n}" for k, n in failures.items()) or "none"))
        return "\n".join(lines)
    finally:
        if spawned is not None:
            spawned.stop()


def main(argv: list[str] | None = None) -> None:
    exit_on_sigterm()
    print(run(parse_args(argv)))


if __name__ == "__main__":
    main()
