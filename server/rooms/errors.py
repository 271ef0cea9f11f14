"""What a room answers when it refuses a request: the wire error code, a message, the rule.

Both are :class:`~server.errors.Refused` (see :mod:`server.errors` for the whole tree), so the
dispatcher answers them as it answers every refusal.
"""

from __future__ import annotations

from server.errors import Refused


class RoomError(Refused):
    """Raised when a room, race, quick-match or daily-challenge rule refuses a request: no
    such room or seat, a full room, an illegal or invalid move (``rule`` names the broken
    rule of an illegal one), bad options, a race log still secret, and the like."""


class CommandRefused(RoomError):
    """Raised when the room's state does not take a command: the lifecycle table's answer
    (``race-in-progress``, ``not-waiting``, ``race-over``, ...)."""
