"""The commands a room takes, as values: :meth:`server.rooms.room.Room.decide` matches on them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Join:
    """Seat ``player`` (again, if they already are: that is a reconnect)."""

    player: str
    name: str
    bot: bool = False


@dataclass(frozen=True, slots=True)
class Leave:
    player: str


@dataclass(frozen=True, slots=True)
class SetReady:
    player: str
    ready: bool


@dataclass(frozen=True, slots=True)
class Start:
    """The creator starts the countdown, ready or not."""

    player: str


@dataclass(frozen=True, slots=True)
class Move:
    """Play a move given in the notation."""

    player: str
    text: str


@dataclass(frozen=True, slots=True)
class TakeBack:
    """Undo the player's last move."""

    player: str


@dataclass(frozen=True, slots=True)
class Resign:
    player: str


@dataclass(frozen=True, slots=True)
class Rematch:
    """A new race in the room; ``next_deal`` is a prepared (certified) deal for it, if any."""

    player: str
    next_deal: str | None = None


@dataclass(frozen=True, slots=True)
class Presence:
    """A racer's last connection dropped (``connected`` false), or they came back."""

    player: str
    connected: bool


@dataclass(frozen=True, slots=True)
class SetSpectators:
    """How many distinct players spectate the room now."""

    count: int


@dataclass(frozen=True, slots=True)
class Tick:
    """Do what is due now: countdown end, time limit, grace periods."""


Command = Join | Leave | SetReady | Start | Move | TakeBack | Resign | Rematch | Presence | SetSpectators | Tick
