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
