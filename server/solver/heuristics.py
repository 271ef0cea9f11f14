"""Position estimates that steer the best-first search: lower looks closer to a win.

An estimate only decides the order in which positions are expanded, so it may be
any function of the position: verdicts stay sound. It reads the full position
(the solver knows every card); it never reaches a player except through a
solution, which is legal whatever the estimate.
"""

from __future__ import annotations

from collections.abc import Callable

from server.games import Antares, Game, Scorpion


def antares_estimate(game: Game) -> int:
    """Cards not home, plus for each suit the cards lying on its next card, plus disorder."""
    piles = game.piles
    home = [len(piles[12 + suit]) for suit in range(4)]
    estimate = 2 * (52 - sum(home))
    for i in range(8):
        pile = piles[i]
        size = len(pile)
        same_suit = i < 4
        for k in range(size):
            card = pile[k]
            if card % 13 == home[card // 13]:
                estimate += 3 * (size - 1 - k)  # cards burying a card that could go home next
            if k:
                under = pile[k - 1]
                if under % 13 != card % 13 + 1 or (
                    under // 13 != card // 13 if same_suit else (under >= 26) == (card >= 26)
                ):
                    estimate += 2
    return estimate + sum(1 for i in range(8, 12) if piles[i])


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
