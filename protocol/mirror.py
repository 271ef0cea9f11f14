"""A local copy of a room, kept current by applying the server's updates.

This is what every client does with the stream: start from a :class:`Snapshot`,
apply each :class:`Update` whose ``base`` is the copy's version, and ask for a new
snapshot on a gap. The server uses the same class for its delayed spectator view,
and the tests use it to check that diffs rebuild exactly what the server holds.
It knows no rules: patches are applied as they come.
"""

from __future__ import annotations

import msgspec

from protocol.messages import (
    BoardChanged,
    ProgressChanged,
    RaceOver,
    Racer,
    RacerConnection,
    RacerFinished,
    RacerJoined,
    RacerLeft,
    RacerReady,
    RacerResigned,
    Rematched,
    RoomEvent,
    RoomView,
    Snapshot,
    SpectatorsChanged,
    StateChanged,
    Update,
)


class RoomMirror:
    """A room as one viewer sees it, rebuilt from a snapshot and updates."""

    def __init__(self, snapshot: Snapshot) -> None:
        self.reset(snapshot)

    def reset(self, snapshot: Snapshot) -> None:
        """Start over from ``snapshot`` (after a gap, or a fresh snapshot from the server)."""
        self.version = snapshot.version
        self._view = snapshot.view
        self._racers: dict[int, Racer] = {racer.seat: racer for racer in snapshot.view.racers}

    def apply(self, update: Update) -> bool:
        """Apply ``update`` if it follows this copy's version; False (and no change) on a gap.

        An update already applied (``version`` not above ours) is ignored and returns True.
        """
        if update.version <= self.version:
            return True
        if update.base != self.version:
            return False
        for event in update.events:
            self._apply(event)
        self.version = update.version
        return True

    def view(self) -> RoomView:
        """The room as of :attr:`version`."""
        racers = [self._racers[seat] for seat in sorted(self._racers)]
        return msgspec.structs.replace(self._view, racers=racers)

    def board(self, seat: int) -> list[list[int | None]] | None:
        racer = self._racers.get(seat)
        return None if racer is None else racer.board

    def _racer(self, seat: int, **changes: object) -> None:
        self._racers[seat] = msgspec.structs.replace(self._racers[seat], **changes)

    def _apply(self, event: RoomEvent) -> None:
        view = self._view
        if isinstance(event, BoardChanged):
            board = self._racers[event.seat].board
            piles = [list(pile) for pile in board] if board else [[] for _ in view.piles]
            for patch in event.patches:
                piles[patch.pile][patch.keep :] = patch.add
            self._racer(event.seat, board=piles, progress=event.progress)
        elif isinstance(event, ProgressChanged):
            self._racer(event.seat, progress=event.progress)
        elif isinstance(event, RacerJoined):
            self._racers[event.racer.seat] = event.racer
        elif isinstance(event, RacerLeft):
            self._racers.pop(event.seat, None)
            if event.creator is not None:
                self._view = msgspec.structs.replace(view, creator=event.creator)
        elif isinstance(event, RacerReady):
            self._racer(event.seat, ready=event.ready)
        elif isinstance(event, RacerConnection):
            self._racer(event.seat, connected=event.connected)
        elif isinstance(event, SpectatorsChanged):
            self._view = msgspec.structs.replace(view, spectators=event.count)
        elif isinstance(event, StateChanged):
            self._view = msgspec.structs.replace(
                view,
                state=event.state,
                clock=event.clock,
                race=event.race,
                commitment=event.commitment,
                certified=event.certified,
            )
        elif isinstance(event, RacerFinished):
            self._racer(event.seat, finished_ms=event.time_ms)
        elif isinstance(event, RacerResigned):
            self._racer(event.seat, resigned=event.reason)
        elif isinstance(event, RaceOver):
            self._view = msgspec.structs.replace(view, results=event.results, reveal=event.reveal)
        elif isinstance(event, Rematched):
            self._view = msgspec.structs.replace(
                view, race=event.race, results=None, reveal=None, commitment=None, certified=None
            )
            for seat, racer in list(self._racers.items()):
                self._racers[seat] = msgspec.structs.replace(
                    racer,
                    board=None,
                    ready=False,
                    finished_ms=None,
                    resigned=None,
                    progress=msgspec.structs.replace(racer.progress, home=0, ordered=0, moves=0, won=False),
                )
