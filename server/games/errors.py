"""Exceptions of the rules engine.

The hierarchy separates input that cannot be read (:class:`InvalidNotation`,
:class:`InvalidDeal`, :class:`InvalidPosition`) from input that is understood
but breaks a rule (:class:`IllegalMove`), so callers can answer each with the
right error code. Every message is meant to be shown to a player as it is, and
none of them ever names a face-down or stock card.
"""

from __future__ import annotations

from typing import Final

#: The most characters of bad input an error message quotes.
QUOTE_LIMIT: Final = 40


def quoted(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` as a message quotes it: its ``repr``, cut to its first ``limit`` characters
    (marked with ``...``; escapes count), so 100,000 characters in never make a 100,000-character message."""
    shown = repr(text[:limit])
    if len(text) <= limit and len(shown) <= limit + 2:
        return shown
    return shown[: limit + 2] + "..."  # escapes (\xa0) count too


class GameError(Exception):
    """Base class of every error the rules engine raises on purpose."""


class InvalidNotation(GameError, ValueError):
    """Text that is not a card, a pile, a move or an option."""


class InvalidDeal(GameError, ValueError):
    """A deal number outside the numbering of DEALS.md."""


class InvalidPosition(GameError, ValueError):
    """A position text that does not describe a consistent position."""


class IllegalMove(GameError):
    """A well-formed move that the rules forbid in the current position.

    ``rule`` is a short stable identifier of the rule broken (for example
    ``"build-in-suit"``), fit for error codes and tests; the message says the
    same thing in words.
    """

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(message)
        self.rule = rule


class NothingToUndo(GameError):
    """Undo was asked for at the deal, before any move."""
