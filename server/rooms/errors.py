"""What a room answers when it refuses a request: the wire error code, a message, the rule."""

from __future__ import annotations

from protocol.errors import ErrorCode


class RoomError(Exception):
    """A request the room refuses. ``code`` is the wire error code; ``rule`` names the
    broken rule of an illegal move."""

    def __init__(self, code: ErrorCode, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule


class CommandRefused(RoomError):
    """A command the room's state does not take: the lifecycle table's answer."""
