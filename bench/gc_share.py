"""The collector's share of a saturated server's CPU, under each of some collector thresholds.

Run::

    python -m bench.gc_share --thresholds 5000,2,1000 --thresholds 20000,10,1000 --repeats 2

For each setting in turn (alternating, ``--repeats`` times), a server is started with the
collector's thresholds set to it (its embedded Redis, no solver workers, pinned to core 0),
and :mod:`bench.load` saturates it (``--racers`` bots, 1,000 by default, two to a room,
pinned to core 1, legal moves asked) for
``--seconds``. A callback on :data:`gc.callbacks` times every collection in the server's
thread CPU. Printed per run: the collections by generation, their CPU and its share of the
server's CPU from the load's start to its end, the longest collection of each generation,
and the load's CPU a move. The server's own ``solitaire_gc_pause_seconds`` times the same
collections in wall time.

``python -m bench.gc_share --serve ...`` is the server side: ``python -m server`` with the
thresholds set and the callback installed, writing its figures to ``--report`` on SIGUSR1.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import server.app
from bench.lib.spawn import precise_cpu, spawn_server
from server.__main__ import main as server_main


class _Collections:
    """Every collection's thread CPU, by generation."""

    def __init__(self) -> None:
        self.count = [0, 0, 0]
        self.cpu = [0.0, 0.0, 0.0]
        self.longest = [0.0, 0.0, 0.0]
        self._started = 0.0

    def callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.thread_time()
            return
        generation, spent = info["generation"], time.thread_time() - self._started
        self.count[generation] += 1
        self.cpu[generation] += spent
        self.longest[generation] = max(self.longest[generation], spent)


def serve(thresholds: tuple[int, int, int], report: Path, server_args: list[str]) -> None:
    """Run the server with ``thresholds``, writing the collections to ``report`` on SIGUSR1."""
    collections = _Collections()
    gc.callbacks.append(collections.callback)

    def write(signum: int, frame: object) -> None:
        report.write_text(json.dumps(vars(collections) | {"at_cpu": time.process_time()}))

    signal.signal(signal.SIGUSR1, write)
    server.app.GC_THRESHOLDS = thresholds  # type: ignore[misc]
    server_main(server_args)


def _figures(pid: int, report: Path) -> dict[str, Any]:
    report.unlink(missing_ok=True)
    os.kill(pid, signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while not report.exists() or not report.read_text():
        if time.monotonic() > deadline:
            raise SystemExit("the server wrote no figures")
        time.sleep(0.05)
    figures: dict[str, Any] = json.loads(report.read_text())
    figures["cpu_seconds"] = precise_cpu(pid)
    return figures


def run(thresholds: str, seconds: float, racers: int) -> str:
    """One saturated load against a server with ``thresholds``; its line of figures."""
    with tempfile.TemporaryDirectory(prefix="gc-share-") as scratch:
        report = Path(scratch) / "collections.json"
        extra = ["--serve", "--thresholds", thresholds, "--report", str(report), "--solver-workers", "0"]
        os.environ.setdefault("IDENTITIES_PER_ADDRESS", "1000000000")  # every bot is a new guest
        with spawn_server(module="bench.gc_share", cpus=(0,), extra=extra) as target:
            before = _figures(target.pid, report)
            command = [sys.executable, "-m", "bench.load", "--url", target.url, "--server-pid", str(target.pid)]
            command += ["--rate", "100000", "--bot-rate", "20", "--seconds", str(seconds), "--client-cpus", "1"]
            command += ["--racers", str(racers), "--rooms", str(racers // 2)]
            load = subprocess.run(command, capture_output=True, text=True, check=True).stdout
            after = _figures(target.pid, report)
    per_move = re.search(r"([0-9.]+) ms CPU per move", load)
    spent = after["cpu_seconds"] - before["cpu_seconds"]
    collected = [after["cpu"][g] - before["cpu"][g] for g in range(3)]
    counts = [after["count"][g] - before["count"][g] for g in range(3)]
    longest = " / ".join(f"{1000 * after['longest'][g]:.1f}" for g in range(3))
    return (
        f"{thresholds:>16}  {counts[0]:5d} {counts[1]:4d} {counts[2]:3d}  {sum(collected):6.2f} s of {spent:6.2f} s"
        f" ({100 * sum(collected) / spent:4.1f}%)  longest {longest} ms"
        f"  {per_move.group(1) if per_move else '?'} ms a move"
    )


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.gc_share", description=__doc__.split("\n")[0])
    parser.add_argument("--thresholds", action="append", default=[], help="young,middle,old (repeatable)")
    parser.add_argument("--seconds", type=float, default=15.0, help="the load's measured window")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--racers", type=int, default=1000, help="bots, two to a room")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, help=argparse.SUPPRESS)
    own, rest = parser.parse_known_args()
    settings = own.thresholds or ["5000,2,1000", "20000,10,1000"]
    if own.serve:
        young, middle, old = (int(part) for part in settings[0].split(","))
        serve((young, middle, old), own.report, rest)
        return
    print("      thresholds  collections (young middle full)  their CPU, of the server's  longest (ms)  CPU a move")
    for _ in range(own.repeats):
        for setting in settings:
            print(run(setting, own.seconds, own.racers), flush=True)


if __name__ == "__main__":
    main()
