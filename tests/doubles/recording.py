"""A race recorder that keeps what it was asked (:class:`server.live.runner.RaceRecording`)."""

from __future__ import annotations

from server.rooms.room import Room
from server.rooms.step import Step
from server.storage.unrecorded import Noted


class RecordedRaces:
    """Rates nothing and stores nothing: it lists the races it was asked about, by room code."""

    def __init__(self) -> None:
        self.rated: list[str] = []
        self.noted: list[Noted] = []
        self.recorded: list[Noted | None] = []
        self.starts: list[str] = []

    async def rate(self, room: Room, step: Step) -> None:
        self.rated.append(room.code)

    async def note(self, room: Room, step: Step) -> Noted:
        noted = Noted(room.code, step.record.race, len(self.noted))
        self.noted.append(noted)
        return noted

    async def record(self, room: Room, noted: Noted | None = None) -> None:
        self.recorded.append(noted)

    async def started(self, room: Room) -> None:
        self.starts.append(room.code)
