"""Solver worker processes that never outlive the server, even one killed with SIGKILL."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from concurrent.futures import ProcessPoolExecutor
from multiprocessing import get_context
from typing import Final

_PR_SET_PDEATHSIG: Final = 1


def solver_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` solver processes ("spawn": forking a process that runs threads can
    copy a held lock). Each asks Linux to kill it when the server dies, so a killed server
    leaves no worker spinning on a solve nobody will read."""
    return ProcessPoolExecutor(
        workers, mp_context=get_context("spawn"), initializer=die_with_parent, initargs=(os.getpid(),)
    )


def die_with_parent(parent: int) -> None:
    """In a worker: be killed when ``parent`` (the server) dies; exit now if it already has
    (a parent gone before the request would never send the signal)."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL))
    if os.getppid() != parent:
        os._exit(1)


def stop_pool(pool: ProcessPoolExecutor) -> None:
    """Stop ``pool`` now: a worker would finish the solve it is running before it exits (a
    daily pick tries deal after deal), and nothing it returns is wanted any more."""
    workers = list((pool._processes or {}).values())  # tests/supply/test_workers.py checks it
    pool.shutdown(wait=False, cancel_futures=True)
    for worker in workers:
        worker.terminate()
