"""The games we offer, by name."""

from __future__ import annotations

from typing import Final

from server.games.antares import Antares
from server.games.errors import InvalidNotation, quoted
from server.games.game import Game
from server.games.scorpion import Scorpion

VARIANTS: Final[dict[str, type[Game]]] = {"scorpion": Scorpion, "antares": Antares}


def variant_class(name: str) -> type[Game]:
    """The game class called ``name`` (case-insensitive); :class:`InvalidNotation` if none is."""
    try:
        return VARIANTS[name.strip().lower()]
    except KeyError:
        raise InvalidNotation(f"{quoted(name)} is not a game: choose one of {', '.join(VARIANTS)}") from None
