"""What a bracket round's finished run leaves behind: how it ended, in its round
(:mod:`server.competition.bracket`), once; the round then closes when it is due."""

from __future__ import annotations

import msgspec

from server.competition.bracket import Bracket, Run
from server.rooms.record import SeatStatus
from server.rooms.room import Room
from server.storage.brackets import BracketStore
from server.storage.connection import Storage


class BracketRuns:
    """Records finished bracket runs in the brackets of ``storage``."""

    def __init__(self, storage: Storage) -> None:
        self._brackets = BracketStore(storage)

    async def record(self, room: Room) -> None:
        """Record ``room``'s finished run in its bracket's round (nothing for another room)."""
        record = room.record
        if record.bracket is None or not record.seats:
            return
        code, _, number = record.bracket.partition("/")
        seat = record.seats[0]
        game = room.game_of(seat.seat)
        progress = game.progress() if game is not None else None
        run = Run(
            room=record.code,
            finished_ms=seat.finished_ms if seat.status is SeatStatus.FINISHED else None,
            moves=room.results()[0].moves,
            home=progress.home if progress is not None else 0,
            ordered=progress.ordered if progress is not None else 0,
            done=True,
        )
        index = int(number) - 1

        def ended(bracket: Bracket) -> Bracket | None:
            if not 0 <= index < len(bracket.rounds):
                return None
            round_ = bracket.rounds[index]
            held = round_.runs.get(seat.player)
            if round_.places is not None or held is None or held.done or held.room != record.code:
                return None  # closed already, not this run, or recorded before
            changed = msgspec.structs.replace(round_, runs={**round_.runs, seat.player: run})
            return msgspec.structs.replace(
                bracket, rounds=[*bracket.rounds[:index], changed, *bracket.rounds[index + 1 :]]
            )

        await self._brackets.change(code, ended)
