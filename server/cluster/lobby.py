"""What a node shares of the lobby beside its public rooms: its live ranked daily attempts.

They are listed only to a player whose own ranked attempt at that game and day is over (the
watch rule of :mod:`server.features.daily`), so each line carries its day and the player ids
of its racers, for the node that answers the lobby to filter; neither leaves the server.
"""

from __future__ import annotations

import msgspec

from protocol.messages import RoomSummary


class DailyLine(msgspec.Struct, frozen=True):
    """A live ranked daily attempt: the UTC day of its deal, its racers' player ids, its line."""

    date: str
    players: list[str]
    room: RoomSummary
