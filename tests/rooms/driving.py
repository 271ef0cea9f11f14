"""A room driven as the runner drives it: each command decided, then applied at once.

:class:`Driven` keeps the room tests readable (``room.move(ann, "4D>2", t)``) while every
command goes through :meth:`Room.decide` and :meth:`Room.apply`, exactly the sans-I/O path
the live runner takes after storage. ``decide_*`` helpers leave the step unapplied, as the
runner does when storage fails.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protocol.messages import RoomOptions, Variant
from server.rooms import commands
from server.rooms.commands import Command
from server.rooms.entries import LogEntry, entry_text, parse_entry
from server.rooms.record import RoomRecord
from server.rooms.room import Room, random_deal
from server.rooms.step import Outcome, Step
from server.rooms.timing import DEFAULT_TIMING, RoomTiming


class Driven:
    """A :class:`Room` whose commands are decided and applied in one call."""

    def __init__(self, room: Room) -> None:
        self.room = room

    def __getattr__(self, name: str) -> Any:
        return getattr(self.room, name)

    def run(self, command: Command, now: int) -> Outcome:
        step = self.room.decide(command, now)
        self.room.apply(step)
        return step.outcome

    def decide(self, command: Command, now: int) -> Step:
        return self.room.decide(command, now)

    def join(self, player: str, name: str, now: int, bot: bool = False) -> Outcome:
        return self.run(commands.Join(player, name, bot), now)

    def leave(self, player: str, now: int) -> Outcome:
        return self.run(commands.Leave(player), now)

    def ready(self, player: str, ready: bool, now: int) -> Outcome:
        return self.run(commands.SetReady(player, ready), now)

    def start(self, player: str, now: int) -> Outcome:
        return self.run(commands.Start(player), now)

    def move(self, player: str, text: str, now: int) -> Outcome:
        return self.run(commands.Move(player, text), now)

    def undo(self, player: str, now: int) -> Outcome:
        return self.run(commands.TakeBack(player), now)

    def resign(self, player: str, now: int) -> Outcome:
        return self.run(commands.Resign(player), now)

    def rematch(self, player: str, now: int, next_deal: str | None = None) -> Outcome:
        return self.run(commands.Rematch(player, next_deal), now)

    def connection(self, player: str, connected: bool, now: int) -> Outcome:
        return self.run(commands.Presence(player, connected), now)

    def set_spectators(self, count: int, now: int = 0) -> Outcome:
        return self.run(commands.SetSpectators(count), now)

    def tick(self, now: int) -> Outcome:
        return self.run(commands.Tick(), now)

    @classmethod
    def restore(
        cls, record: RoomRecord, logs: dict[int, list[str]], now: int, timing: RoomTiming = DEFAULT_TIMING
    ) -> Driven:
        entries: dict[int, list[LogEntry]] = {s: [parse_entry(t) for t in texts] for s, texts in logs.items()}
        return cls(Room.restore(record, entries, now, timing=timing))


def create(
    code: str,
    variant: Variant,
    options: RoomOptions,
    creator: str,
    name: str,
    now: int,
    deal_picker: Callable[[str], str] = random_deal,
    timing: RoomTiming = DEFAULT_TIMING,
    **kwargs: Any,
) -> tuple[Driven, Outcome]:
    """A room with its creator seated (the creation step applied), and that step's outcome."""
    room, step = Room.create(code, variant, options, creator, name, now, deal_picker, timing, **kwargs)
    room.apply(step)
    return Driven(room), step.outcome


def log_texts(outcome: Outcome) -> list[tuple[int, str]]:
    """An outcome's log entries as the stored texts."""
    return [(seat, entry_text(entry)) for seat, entry in outcome.log]
