"""The floor under a node's cost a move: the CPU an asyncio process spends to wake for one frame.

Run: ``python -m bench.wake_floor [--frames 600] [--periods 1,4,16]``. A child process runs a
bare asyncio protocol that answers every small frame at once (no parsing, no logic); this
process sends it a frame, waits for the answer, then waits PERIOD ms before the next.
Printed per period: the child's CPU per frame (scheduler nanoseconds, kernel included) and
its wake-ups per frame (voluntary context switches), medians of ``--repeats`` runs.

Why: :mod:`bench.nodes_side_by_side` runs a few moves a second per racer, so each of a node's
wake-ups finds the process cold. The CPU a wake-up costs then, before any of the server's own
work, times the wake-ups a move takes (a forwarded move wakes the client's node and the owner
twice each, where one node wakes twice in all) is the part of the three-node ratio no
change to the forwarding code can remove.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import statistics
import time

from bench.lib.node_costs import cpu_of, kernel_and_wakeups
from bench.lib.spawn import free_port

_FRAME = b"x" * 100


class _Echo(asyncio.Protocol):
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.transport.write(data)


def _serve(port: int) -> None:
    async def main() -> None:
        loop = asyncio.get_running_loop()
        await loop.create_server(_Echo, "127.0.0.1", port)
        await asyncio.Event().wait()

    asyncio.run(main())


async def _send(port: int, frames: int, period: float) -> None:
    """``frames`` frames, each ``period`` after the answer to the one before."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for _ in range(frames):
        writer.write(_FRAME)
        await reader.readexactly(len(_FRAME))
        await asyncio.sleep(period)
    writer.close()
    await writer.wait_closed()


def _wait_listening(port: int, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def measure(frames: int, period_ms: float) -> tuple[float, float]:
    """(the receiver's CPU µs a frame, its wake-ups a frame) for one run."""
    port = free_port()
    child = multiprocessing.get_context("spawn").Process(target=_serve, args=(port,), daemon=True)
    child.start()
    try:
        assert child.pid is not None
        _wait_listening(port)
        asyncio.run(_send(port, 5, 0.001))  # the code paths warm
        cpu, (_, wakes) = cpu_of([child.pid]), kernel_and_wakeups([child.pid])
        asyncio.run(_send(port, frames, period_ms / 1000))
        cpu, wakes = cpu_of([child.pid]) - cpu, kernel_and_wakeups([child.pid])[1] - wakes
    finally:
        child.kill()
        child.join()
    # The measured connection's own opening and closing (a few wake-ups) count too: spread
    # over the run's frames.
    return cpu * 1e6 / frames, wakes / frames


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.wake_floor", description=__doc__.split("\n")[0])
    parser.add_argument("--frames", type=int, default=600, help="frames a run")
    parser.add_argument("--periods", default="1,4,16", help="ms between frames, comma-separated")
    parser.add_argument("--repeats", type=int, default=3)
    own = parser.parse_args()
    print("period    CPU a frame (median, range)      wake-ups a frame")
    for period in (float(text) for text in own.periods.split(",")):
        runs = [measure(own.frames, period) for _ in range(own.repeats)]
        costs = [cost for cost, _ in runs]
        wakes = statistics.median(wake for _, wake in runs)
        print(
            f"{period:5g} ms  {statistics.median(costs):7.1f} us ({min(costs):.1f}-{max(costs):.1f})"
            f"          {wakes:.2f}"
        )


if __name__ == "__main__":
    main()
