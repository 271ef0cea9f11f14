"""What an arena race leaves behind: its points in the arena's standings
(:mod:`server.competition.arena`), added once per race, if it ended inside the arena's window.
Retried with the rest of the race's recording while storage is away."""

from __future__ import annotations

from server.competition.arena import counts, read_race_tag
from server.rooms.room import Room
from server.storage.arenas import ArenaStore
from server.storage.connection import Storage


class ArenaResults:
    """Scores finished arena races in the arenas of ``storage``."""

    def __init__(self, storage: Storage) -> None:
        self._arenas = ArenaStore(storage)

    async def record(self, room: Room) -> None:
        """Add ``room``'s finished race to its arena's standings (nothing for another room)."""
        record = room.record
        if record.arena is None or record.finished is None:
            return
        arena = await self._arenas.get(read_race_tag(record.arena)[0])
        if arena is None or not counts(arena, record.finished):
            return
        racers = {seat.seat: seat for seat in record.seats}
        places = [(racers[r.seat].player, r.name, r.place) for r in room.results() if r.seat in racers]
        await self._arenas.score_race(arena, record.code, record.race, places, record.finished)
