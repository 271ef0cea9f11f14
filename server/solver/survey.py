"""Survey many deals: solve each in a pool of worker processes, then summarize.

A survey answers "what share of this game's deals can be won, and how hard is the
solver working for it". Each deal is solved in its own task with the same budget;
only a small :class:`DealRecord` travels back. Ctrl-C (SIGINT) stops the survey
cleanly: running solves are interrupted through :attr:`Budget.interrupt`, and the
deals finished so far are kept. A second Ctrl-C raises KeyboardInterrupt at once.
"""

from __future__ import annotations

import csv
import multiprocessing
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from types import FrameType
from typing import TYPE_CHECKING, Final, TextIO

from server.games import Deal, Game, Options
from server.solver.progress import format_seconds
from server.solver.results import Budget, Solved, Unknown, Unwinnable
from server.solver.solve import solve
from server.solver.statistics import DealRecord, Summary, Verdict

if TYPE_CHECKING:
    from multiprocessing.synchronize import Event

#: The most deals one survey may name; a typo like 1-10000000000 should not eat the memory.
MAX_SURVEY_DEALS: Final = 1_000_000


# -- deal ranges --------------------------------------------------------------------


def parse_deals(text: str) -> list[int]:
    """The deal numbers of ``"1-1000"``, ``"7"`` or ``"1-10,20,30-35"``, in the order written.

    A deal named twice is surveyed once. Raises ValueError with a message fit for the
    user for anything else: empty parts, reversed ranges, numbers that are not deals,
    more than :data:`MAX_SURVEY_DEALS` deals.
    """
    deals: dict[int, None] = {}  # an ordered set
    for part in text.split(","):
        first_text, dash, last_text = part.strip().partition("-")
        first = _deal_number(first_text, text)
        last = _deal_number(last_text, text) if dash else first
        if last < first:
            raise ValueError(f"{part.strip()!r} is a reversed range: write the smaller deal number first")
        if last - first + 1 + len(deals) > MAX_SURVEY_DEALS:
            raise ValueError(f"{text!r} names more than {MAX_SURVEY_DEALS:,} deals")
        deals.update(dict.fromkeys(range(first, last + 1)))
    return list(deals)


def _deal_number(token: str, whole: str) -> int:
    cleaned = token.strip()
    if not cleaned.isascii() or not cleaned.isdigit():
        raise ValueError(f"{whole!r} is not a list of deals: write numbers and ranges like 1-1000,2000,3000-3010")
    return Deal(int(cleaned)).number  # InvalidDeal (a ValueError) outside the numbering


# -- formatting -----------------------------------------------------------------------


def format_budget(budget: Budget) -> str:
    """``"10s"``, or ``"10s or 2,000,000 nodes"`` with a node cap: the limits a user chose
    (not the memory cap)."""
    seconds = format_seconds(budget.seconds) if budget.seconds < 1 else f"{budget.seconds:g}s"
    return seconds if budget.nodes is None else f"{seconds} or {budget.nodes:,} nodes"


def report(summary: Summary) -> list[str]:
    """The survey's result as lines of text (no header, no trailing newlines)."""
    if summary.deals == 0:
        return ["no deal was finished"]
    lines = [
        f"{label:<12}{count:>7}  {count / summary.deals:6.1%}"
        for label, count in (
            ("solved", summary.solved),
            ("unwinnable", summary.unwinnable),
            ("unknown", summary.unknown),
        )
    ]
    observed = f"{summary.observed_low:.1%}"
    if summary.unknown:
        observed += f" to {summary.observed_high:.1%}"
    lines.append(
        f"{'winnable':<12}{observed} of deals; 95% confidence interval "
        f"{summary.winnable_low:.1%} to {summary.winnable_high:.1%} (Wilson)"
    )
    # Every figure below is None only when there are no deals, handled above.
    assert summary.seconds_median is not None
    assert summary.seconds_p90 is not None
    assert summary.seconds_max is not None
    lines.append(
        f"{'time/deal':<12}median {format_seconds(summary.seconds_median)}, "
        f"p90 {format_seconds(summary.seconds_p90)}, max {format_seconds(summary.seconds_max)} "
        "(search to the verdict)"
    )
    if summary.par_mean is not None and summary.par_median is not None:
        lines.append(
            f"{'par':<12}mean {summary.par_mean:.1f}, median {summary.par_median:g}, "
            f"p90 {summary.par_p90:g}, max {summary.par_max} moves "
            f"(over {summary.solved} solved deal{'s' if summary.solved > 1 else ''})"
        )
    return lines


CSV_COLUMNS: Final = ("deal", "verdict", "seconds", "nodes", "par", "found", "par_seconds")


def write_csv(records: Sequence[DealRecord], stream: TextIO) -> None:
    """One row per record, in deal order, under a header of :data:`CSV_COLUMNS`.

    Fields that only solved deals have are left empty for the others.
    """
    writer = csv.writer(stream, lineterminator="\n")
    writer.writerow(CSV_COLUMNS)
    for r in sorted(records, key=lambda record: record.deal):
        writer.writerow(csv_row(r))


def csv_row(r: DealRecord) -> tuple[object, ...]:
    """The CSV fields of one record, as :data:`CSV_COLUMNS` names them."""
    return (
        r.deal,
        r.verdict.value,
        f"{r.seconds:.6f}",
        r.nodes,
        "" if r.par is None else r.par,
        "" if r.found is None else r.found,
        "" if r.par_seconds is None else f"{r.par_seconds:.6f}",
    )


def read_csv(stream: TextIO) -> list[DealRecord]:
    """The records of a CSV written by :func:`write_csv` or :func:`csv_row` rows under its
    header (what a survey wrote before it was interrupted). A last row cut short by the
    interruption is dropped; raises ValueError for a file that is not a survey CSV."""
    reader = csv.reader(stream)
    header = next(reader, None)
    if header is None:
        return []
    if tuple(header) != CSV_COLUMNS:
        raise ValueError(f"not a survey CSV: its header is {','.join(header)!r}")
    records: dict[int, DealRecord] = {}
    for row in reader:
        if len(row) != len(CSV_COLUMNS):
            continue  # a row cut short when the survey was killed
        deal, verdict, seconds, nodes, par, found, par_seconds = row
        records[int(deal)] = DealRecord(
            int(deal),
            Verdict(verdict),
            float(seconds),
            int(nodes),
            int(par) if par else None,
            int(found) if found else None,
            float(par_seconds) if par_seconds else None,
        )
    return list(records.values())


# -- the pool ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SurveyRun:
    """What :func:`run_survey` did: the records of finished deals (in deal order),
    whether it was interrupted, and its wall-clock seconds."""

    records: tuple[DealRecord, ...]
    interrupted: bool
    seconds: float


#: Set in each worker process: the pool's stop signal.
_stop_event: Event | None = None


def _start_worker(stop: Event) -> None:
    global _stop_event
    _stop_event = stop
    # Ctrl-C in a terminal reaches every process of the group; the parent decides
    # what happens (it sets ``stop``), the workers must not die with a traceback.
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def solve_deal(
    variant: type[Game], deal: int, options: Options | None, budget: Budget, par_seconds: float | None = None
) -> DealRecord | None:
    """Solve one deal into a record; None when the survey was stopped before a verdict.

    Runs in a worker process; uses the pool's stop signal when there is one.
    """
    stop = _stop_event
    if stop is not None:
        if stop.is_set():
            return None
        budget = replace(budget, interrupt=stop.is_set)
    result = solve(variant, deal, options, budget, par_seconds)
    nodes, seconds = result.stats.nodes, result.stats.seconds
    if isinstance(result, Solved):
        return DealRecord(deal, Verdict.SOLVED, seconds, nodes, result.par, result.found, result.par_seconds)
    if isinstance(result, Unwinnable):
        return DealRecord(deal, Verdict.UNWINNABLE, seconds, nodes)
    assert isinstance(result, Unknown)
    if result.reason == "interrupted":
        return None
    return DealRecord(deal, Verdict.UNKNOWN, seconds, nodes)


def run_survey(
    variant: type[Game],
    deals: Sequence[int],
    options: Options | None,
    budget: Budget,
    workers: int,
    on_record: Callable[[DealRecord], None] | None = None,
    par_seconds: float | None = None,
) -> SurveyRun:
    """Solve ``deals`` in ``workers`` processes, each with ``budget``; call ``on_record``
    (in this process) as each deal finishes. ``par_seconds`` is each solved deal's time
    for shortening its line (:func:`server.solver.solve.solve_position`'s default if None).

    Only a few tasks per worker are queued at a time, so an interrupted survey has
    little to cancel. When called from the main thread, Ctrl-C stops the survey and
    returns what was finished (``interrupted`` set); a second one raises
    KeyboardInterrupt. ``budget.interrupt`` is not used (it cannot cross processes).
    """
    if workers < 1:
        raise ValueError(f"need at least one worker, not {workers}")
    start = time.monotonic()
    budget = replace(budget, interrupt=None)
    context = multiprocessing.get_context()
    stop = context.Event()
    stopping = False

    def on_sigint(signum: int, frame: FrameType | None) -> None:
        nonlocal stopping
        if stopping:
            raise KeyboardInterrupt
        stopping = True
        stop.set()

    in_main = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGINT, on_sigint) if in_main else None
    records: list[DealRecord] = []
    try:
        with ProcessPoolExecutor(
            max_workers=min(workers, max(1, len(deals))),
            mp_context=context,
            initializer=_start_worker,
            initargs=(stop,),
        ) as pool:
            todo: Iterator[int] = iter(deals)
            pending: set[Future[DealRecord | None]] = set()
            while True:
                while not stopping and len(pending) < 2 * workers:
                    deal = next(todo, None)
                    if deal is None:
                        break
                    pending.add(pool.submit(solve_deal, variant, deal, options, budget, par_seconds))
                if not pending:
                    break
                # A timeout, so a Ctrl-C is noticed even while every solve is long.
                done, pending = wait(pending, timeout=0.2, return_when=FIRST_COMPLETED)
                for future in done:
                    record = future.result()
                    if record is not None:
                        records.append(record)
                        if on_record is not None:
                            on_record(record)
    finally:
        if in_main:
            signal.signal(signal.SIGINT, signal.default_int_handler if previous is None else previous)
    records.sort(key=lambda record: record.deal)
    return SurveyRun(tuple(records), stopping, time.monotonic() - start)
