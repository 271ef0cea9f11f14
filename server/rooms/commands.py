"""The commands a room takes, as values: :meth:`server.rooms.room.Room.decide` matches on them."""

from __future__ import annotations

import msgspec


class Join(msgspec.Struct, frozen=True):
    """Seat ``player`` (again, if they already are: that is a reconnect)."""

    player: str
    name: str
    bot: bool = False


class Leave(msgspec.Struct, frozen=True):
    player: str


class SetReady(msgspec.Struct, frozen=True):
    player: str
    ready: bool


class Start(msgspec.Struct, frozen=True):
    """The creator starts the countdown, ready or not."""

    player: str


class Move(msgspec.Struct, frozen=True):
    """Play a move given in the notation."""

    player: str
    text: str


class TakeBack(msgspec.Struct, frozen=True):
    """Undo the player's last move."""

    player: str


class Resign(msgspec.Struct, frozen=True):
    player: str


class Rematch(msgspec.Struct, frozen=True):
    """A new race in the room; ``next_deal`` is a prepared (certified) deal for it, if any."""

    player: str
    next_deal: str | None = None


class Presence(msgspec.Struct, frozen=True):
    """A racer's last connection dropped (``connected`` false), or they came back."""

    player: str
    connected: bool


class SetSpectators(msgspec.Struct, frozen=True):
    """How many distinct players spectate the room now."""

    count: int


class Tick(msgspec.Struct, frozen=True):
    """Do what is due now: countdown end, time limit, grace periods."""


Command = Join | Leave | SetReady | Start | Move | TakeBack | Resign | Rematch | Presence | SetSpectators | Tick
