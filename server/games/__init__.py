"""The rules engine: pure code, no I/O. Both games, their deals, moves and views.

Import what you need from here::

    from server.games import Scorpion, Deal
    game = Scorpion.new(617)
    for move in game.legal_moves(): ...
"""

from server.games.antares import Antares
from server.games.cards import Card, card_text, parse_card
from server.games.deals import Deal
from server.games.errors import GameError, IllegalMove, InvalidDeal, InvalidNotation, InvalidPosition, NothingToUndo
from server.games.game import FullView, Game, Move, PileKind, PilePatch, PileSpec, Progress, PublicPiles
from server.games.hints import Hint, hint
from server.games.options import Autoplay, Options
from server.games.scorpion import Scorpion
from server.games.variants import VARIANTS, variant_class

__all__ = [
    "VARIANTS",
    "Antares",
    "Autoplay",
    "Card",
    "Deal",
    "FullView",
    "Game",
    "GameError",
    "Hint",
    "IllegalMove",
    "InvalidDeal",
    "InvalidNotation",
    "InvalidPosition",
    "Move",
    "NothingToUndo",
    "Options",
    "PileKind",
    "PilePatch",
    "PileSpec",
    "Progress",
    "PublicPiles",
    "Scorpion",
    "card_text",
    "hint",
    "parse_card",
    "variant_class",
]
