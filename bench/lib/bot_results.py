"""What the load generator's bots (:mod:`bench.lib.bots`) measure: timed samples, a worker's
result, and the recorder that matches each move to its rivals' updates by (room, version)."""

from __future__ import annotations

import time
from array import array
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Samples:
    """Times (monotonic seconds, comparable across processes on Linux) and latencies."""

    sent: array[float] = field(default_factory=lambda: array("d"))
    latency: array[float] = field(default_factory=lambda: array("d"))

    def add(self, sent: float, latency: float) -> None:
        self.sent.append(sent)
        self.latency.append(latency)

    def extend(self, other: Samples) -> None:
        self.sent.extend(other.sent)
        self.latency.extend(other.latency)

    def within(self, start: float, end: float) -> list[float]:
        """Latencies of the samples sent in [start, end), sorted."""
        return sorted(lat for sent, lat in zip(self.sent, self.latency, strict=True) if start <= sent < end)


@dataclass
class WorkerResult:
    """What one worker process measured; the parent merges them and cuts the window."""

    ack: Samples = field(default_factory=Samples)  # move (or undo) sent -> its Ack read
    rival: Samples = field(default_factory=Samples)  # move sent -> a rival read its Update
    legal: Samples = field(default_factory=Samples)  # AskLegalMoves sent -> reply read
    acked_at: array[float] = field(default_factory=lambda: array("d"))  # when each move's Ack came
    undos: int = 0
    errors: list[tuple[float, str]] = field(default_factory=list)
    races: int = 0  # races started
    endings: Counter[str] = field(default_factory=Counter)  # why bots stopped racing: stuck, move cap, won, ...
    connections: int = 0
    rooms_racing: int = 0


class Recorder:
    """Collects one worker's samples; matches moves to their rivals' updates by (room, version)."""

    def __init__(self) -> None:
        self.result = WorkerResult()
        # (room, version) -> when the move was sent, waiting for rivals' updates ...
        self._moves: dict[tuple[str, int], float] = {}
        # ... and rivals' updates read before the mover's Ack told us the version.
        self._early: dict[tuple[str, int], list[float]] = {}

    def acked(self, room: str, version: int, sent: float, now: float) -> None:
        self.result.ack.add(sent, now - sent)
        self.result.acked_at.append(now)
        key = (room, version)
        for seen in self._early.pop(key, ()):
            self.result.rival.add(sent, seen - sent)
        self._moves[key] = sent

    def seen(self, room: str, version: int, now: float) -> None:
        key = (room, version)
        sent = self._moves.get(key)
        if sent is None:
            self._early.setdefault(key, []).append(now)
        else:
            self.result.rival.add(sent, now - sent)

    def error(self, code: str) -> None:
        self.result.errors.append((time.monotonic(), code))

    def prune(self, older_than: float) -> None:
        """Forget moves and updates that will never be matched (a race's opening boards,
        a winning move whose Ack names a later version, rivals that left)."""
        self._moves = {k: t for k, t in self._moves.items() if t >= older_than}
        self._early = {k: ts for k, ts in self._early.items() if ts[-1] >= older_than}
