"""How long a room's timed phases last: settings of the server, the same for all its rooms.

The countdown's end is stored in the room's record when it starts (``countdown_ends``), so a
room restored elsewhere, or under other settings, keeps the countdown it announced.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

#: How long a disconnected racer keeps the seat unless set otherwise (``--grace``), in milliseconds.
DEFAULT_GRACE_MS: Final = 60_000
#: How long the countdown lasts unless set otherwise (``--countdown``), in milliseconds.
DEFAULT_COUNTDOWN_MS: Final = 3000


@dataclass(frozen=True, slots=True)
class RoomTiming:
    """A room's durations, in milliseconds."""

    #: How long a disconnected racer keeps the seat.
    grace_ms: int = DEFAULT_GRACE_MS
    #: From all ready (or the creator's start) to the race.
    countdown_ms: int = DEFAULT_COUNTDOWN_MS

    @classmethod
    def of_seconds(cls, grace: float, countdown: float) -> RoomTiming:
        """The timing of settings given in seconds (``--grace``, ``--countdown``)."""
        return cls(grace_ms=round(grace * 1000), countdown_ms=round(countdown * 1000))


#: The durations of a server with the default settings.
DEFAULT_TIMING: Final = RoomTiming()
