"""A survey's progress: a live rich.progress bar on a terminal, plain lines in a log.

On a terminal, :mod:`rich.progress` draws the bar (verdict counts, elapsed time and
time left) in place. Elsewhere (a log file, a pipe) a line is written each tenth of
the way, so logs stay short and can be read while the survey runs.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final, TextIO

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, TextColumn, TimeElapsedColumn, TimeRemainingColumn
from rich.progress import Progress as RichProgress

from server.solver.statistics import DealRecord, Verdict


def format_seconds(seconds: float) -> str:
    """A duration for people: ``"12ms"``, ``"1.57s"``, ``"12.3s"``, ``"2m13s"``, ``"1h05m"``."""
    if seconds < 1:
        return f"{seconds * 1000:.0f}ms"
    if seconds < 10:
        return f"{seconds:.2f}s"
    if seconds < 60:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60}m{whole % 60:02d}s"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


class Progress:
    """Progress of ``total`` deals on ``stream``, of which ``done_before`` were finished by
    an earlier run (a resumed survey): they count as done, but not towards the time left."""

    BAR: Final = 20

    def __init__(
        self,
        total: int,
        stream: TextIO,
        clock: Callable[[], float] = time.monotonic,
        done_before: int = 0,
    ) -> None:
        self.total = total
        self.stream = stream
        self.clock = clock
        self.start = clock()
        self.counts = dict.fromkeys(Verdict, 0)
        self.done_before = done_before
        self.tty = stream.isatty()
        self._next_line = done_before + self._step()
        self._bar: RichProgress | None = None
        if self.tty:
            self._bar = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[counts]}"),
                TimeElapsedColumn(),
                TimeRemainingColumn(),
                console=Console(file=stream),
            )
            self._task = self._bar.add_task("survey", total=total, completed=done_before, counts=self._counts())
            self._bar.start()

    @property
    def done(self) -> int:
        return self.done_before + sum(self.counts.values())

    def add(self, record: DealRecord) -> None:
        """Count one finished deal."""
        self.counts[record.verdict] += 1
        if self._bar is not None:
            self._bar.update(self._task, advance=1, counts=self._counts())
        elif self.done >= self._next_line or self.done == self.total:
            self._next_line += self._step()
            self.stream.write(self.line() + "\n")
            self.stream.flush()

    def finish(self) -> None:
        """End the progress display."""
        if self._bar is not None:
            self._bar.stop()

    def line(self) -> str:
        """``[#####...............] 512/2000 solved 120 unwinnable 380 unknown 12 eta 1m20s``
        (``in 2m13s``, the time this run took, once every deal is done)."""
        done = self.done
        filled = self.BAR * done // self.total if self.total else self.BAR
        bar = "#" * filled + "." * (self.BAR - filled)
        elapsed = self.clock() - self.start
        run = done - self.done_before
        if done == self.total:
            when = f"in {format_seconds(elapsed)}"
        elif run == 0:
            when = "eta ?"
        else:
            when = f"eta {format_seconds(elapsed / run * (self.total - done))}"
        return f"[{bar}] {done}/{self.total} {self._counts()} {when}"

    def _counts(self) -> str:
        return " ".join(f"{verdict.value} {count}" for verdict, count in self.counts.items())

    def _step(self) -> int:
        return max(1, self.total // 10)
