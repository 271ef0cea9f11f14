"""Position estimates that steer the best-first search: lower looks closer to a win.

An estimate only decides the order in which positions are expanded, so it may be
any function of the position: verdicts stay sound. It reads the full position
(the solver knows every card); it never reaches a player except through a
solution, which is legal whatever the estimate.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from server.games import Antares, Game, Scorpion


@dataclass(frozen=True, slots=True)
class AntaresWeights:
    """How much each feature of an Antares position counts against it."""

    not_home: int = 2  # each card not yet home
    burying: int = 3  # each card lying on a card that could go home next
    disorder: int = 2  # each card not built on the card under it
    cell: int = 1  # each occupied cell


#: The weights best-first search starts with: progress home first.
HOMEWARD = AntaresWeights()
#: The second opinion: order and free cells first. It finds some lines the first misses.
TIDY = AntaresWeights(not_home=1, burying=3, disorder=3, cell=2)


def antares_estimate(game: Game, weights: AntaresWeights = HOMEWARD) -> int:
    """Cards not home, cards lying on a card that could go home next, cards out of order on
    their pile, and occupied cells, each counted with its weight."""
    piles = game.piles
    home = [len(piles[12 + suit]) for suit in range(4)]
    estimate = weights.not_home * (52 - sum(home))
    burying, disorder = weights.burying, weights.disorder
    for i in range(8):
        pile = piles[i]
        size = len(pile)
        same_suit = i < 4
        for k in range(size):
            card = pile[k]
            if card % 13 == home[card // 13]:
                estimate += burying * (size - 1 - k)  # cards burying a card that could go home next
            if k:
                under = pile[k - 1]
                if under % 13 != card % 13 + 1 or (
                    under // 13 != card // 13 if same_suit else (under >= 26) == (card >= 26)
                ):
                    estimate += disorder
    return estimate + weights.cell * sum(1 for i in range(8, 12) if piles[i])


def scorpion_estimate(game: Game) -> int:
    """Face-down cards, cards out of suit sequence, and suits not yet home."""
    piles, hidden = game.piles, game.hidden
    estimate = 0
    for i in range(7):
        pile = piles[i]
        estimate += 6 * hidden[i]
        for k in range(max(hidden[i], 1), len(pile)):
            if pile[k] + 1 != pile[k - 1] or pile[k - 1] % 13 == 0:
                estimate += 3
        if hidden[i] and len(pile) > hidden[i]:
            estimate += len(pile) - hidden[i]  # cards on face-down cards
    estimate += 2 * len(piles[7])
    return estimate + sum(13 for suit in range(4) if not piles[8 + suit])


def estimate_function(variant: type[Game]) -> Callable[[Game], int]:
    if variant is Scorpion:
        return scorpion_estimate
    if variant is Antares:
        return antares_estimate
    raise ValueError(f"no estimate for {variant.VARIANT}")
