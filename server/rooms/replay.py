"""A finished race, step by step: what a replay shows of one racer, without rules on the client."""

from __future__ import annotations

from protocol.errors import ErrorCode
from protocol.messages import Patch, ReplayStep
from server.games import Autoplay, Game, Options, variant_class
from server.games.game import PilePatch
from server.rooms.entries import LogEntry, Played, Resigned, Undone, entry_text
from server.rooms.errors import RoomError
from server.rooms.record import RoomRecord


def race_replay(record: RoomRecord, seat: int, log: list[LogEntry]) -> tuple[list[list[int | None]], list[ReplayStep]]:
    """The starting board of the racer in ``seat`` of the finished race ``record``, and for
    each entry of their stored ``log`` the patches it made."""
    if record.state != "finished" or record.deal is None:
        raise RoomError(ErrorCode.NOT_FINISHED, "the move logs are published when the race ends")
    if all(s.seat != seat for s in record.seats):
        raise RoomError(ErrorCode.NO_SUCH_SEAT, f"nobody raced in seat {seat}")
    game: Game = variant_class(record.variant).new(record.deal, Options(autoplay=Autoplay(record.options.autoplay)))
    board = [list(pile) for pile in game.public_piles()]
    steps: list[ReplayStep] = []
    for entry in log:
        patches: tuple[PilePatch, ...]
        match entry:
            case Resigned():
                patches = ()
            case Undone():
                patches = game.undo()
            case Played(move):
                patches = game.apply(game.parse_move(move))
        steps.append(ReplayStep(entry=entry_text(entry), patches=[Patch(p.pile, p.keep, list(p.add)) for p in patches]))
    return board, steps
