"""Move-log entries: typed values, stored as short texts (``QS>5``, ``undo``, ``resign left``).

A seat's log is exactly what its racer did, in order: the stored texts are what ``race_log``
publishes, and replaying them through the engine rebuilds the board.
"""

from __future__ import annotations

import msgspec

_UNDO = "undo"
_RESIGN = "resign "


class Played(msgspec.Struct, frozen=True):
    """A move, in canonical notation."""

    move: str


class Undone(msgspec.Struct, frozen=True):
    """The racer took their last move back."""


class Resigned(msgspec.Struct, frozen=True):
    """The racer stopped: ``"resigned"``, ``"left"`` or ``"disconnected"``."""

    reason: str


LogEntry = Played | Undone | Resigned


class BadEntry(ValueError):
    """A stored text that is no log entry (storage corruption, never client input)."""


def entry_text(entry: LogEntry) -> str:
    """The stored text of ``entry``."""
    match entry:
        case Played(move):
            return move
        case Undone():
            return _UNDO
        case Resigned(reason):
            return _RESIGN + reason


def parse_entry(text: str) -> LogEntry:
    """The entry a stored text holds; :class:`BadEntry` if it holds none."""
    if text == _UNDO:
        return Undone()
    if text.startswith(_RESIGN):
        return Resigned(text[len(_RESIGN) :])
    if not text or " " in text:
        raise BadEntry(f"not a move-log entry: {text[:40]!r}")
    return Played(text)
