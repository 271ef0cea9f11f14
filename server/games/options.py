"""Game options: the choices, besides the deal, that change how a game plays."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from server.games.errors import InvalidNotation, quoted


class Autoplay(enum.Enum):
    """Antares only: which cards the engine sends home after each player move."""

    OFF = "off"
    #: Aces and twos always; rank r once both foundations of the other colour reach r-1.
    SAFE = "safe"
    #: Every card that fits a foundation.
    ALL = "all"

    @classmethod
    def parse(cls, text: str) -> Autoplay:
        try:
            return cls(text.strip().lower())
        except ValueError:
            raise InvalidNotation(f"autoplay is one of off, safe, all; not {quoted(text)}") from None


@dataclass(frozen=True, slots=True)
class Options:
    """Options of a game; part of what defines a game, with the deal and the moves.

    Scorpion has no options: it removes completed suits automatically, always.
    """

    autoplay: Autoplay = Autoplay.SAFE
