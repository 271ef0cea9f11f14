"""What a run of server nodes cost, read off the processes and their Redis: CPU to the
nanosecond, wake-ups and kernel time, Redis's commands, the batches the nodes sent each
other, their system calls. Shared by the node benches (``bench.nodes``,
``bench.nodes_side_by_side``, ...).
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
from pathlib import Path

from redis.asyncio import Redis

from bench.lib.spawn import ProcSample, precise_cpu


def cpu_of(pids: list[int]) -> float:
    """CPU seconds these processes have run, to the nanosecond: /proc/<pid>/stat's 10 ms ticks
    would blur the few-second idle sample by up to 20 ms/s, a third of a millisecond a move."""
    return sum(precise_cpu(pid) for pid in pids)


def kernel_and_wakeups(pids: list[int]) -> tuple[float, int]:
    """System CPU seconds (10 ms ticks) and wake-ups (voluntary context switches of the main
    thread, the event loop's: each time it slept and was woken, by a socket or a timer) of
    these processes so far."""
    samples = [ProcSample.read(pid) for pid in pids]
    return sum(sample.system for sample in samples), sum(sample.wakeups for sample in samples)


async def redis_calls(url: str) -> dict[str, int]:
    """Commands Redis has run so far, by name (INFO commandstats): a count the machine's load
    does not blur, unlike CPU time."""
    client = Redis.from_url(url)
    try:
        stats = await client.info("commandstats")
    finally:
        await client.aclose()
    return {name.removeprefix("cmdstat_"): int(value["calls"]) for name, value in stats.items()}


async def batches_sent(ports: list[int]) -> int:
    """Batches the nodes have sent each other so far (their ``solitaire_node_batches_sent``,
    both roads): like Redis's command counts, a figure the machine's load does not blur."""
    total = 0
    for port in ports:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        try:
            writer.write(b"GET /metrics HTTP/1.1\r\nHost: bench\r\nConnection: close\r\n\r\n")
            text = (await reader.read()).decode()
        finally:
            writer.close()
        for line in text.splitlines():
            if line.startswith("solitaire_node_batches_sent_total{"):
                total += int(float(line.rsplit(" ", 1)[1]))
    return total


def start_strace(pids: list[int], out: Path) -> subprocess.Popen[bytes]:
    """Count these processes' system calls (every thread's) until :func:`stop_strace`."""
    command = ["strace", "-c", "-f", "-o", str(out)] + [arg for pid in pids for arg in ("-p", str(pid))]
    tracer = subprocess.Popen(command, stderr=subprocess.DEVNULL)
    time.sleep(0.5)  # strace attaches to each thread in turn
    return tracer


def stop_strace(tracer: subprocess.Popen[bytes], out: Path) -> dict[str, int]:
    """Detach ``tracer``; the calls it counted, by name (strace's ``-c`` table)."""
    tracer.send_signal(signal.SIGINT)
    tracer.wait(10)
    calls: dict[str, int] = {}
    if not out.exists():  # strace could not attach (ptrace not allowed): nothing counted
        return calls
    for line in out.read_text().splitlines():
        fields = line.split()
        # "% time  seconds  usecs/call  calls  [errors]  syscall"; skip the header and total.
        if len(fields) >= 5 and fields[0][0].isdigit() and fields[-1] != "total":
            calls[fields[-1]] = int(fields[3])
    return calls
