"""Glicko-2 ratings for races of two or more players (pure: no I/O, no clock).

The method is Mark Glickman's "Example of the Glicko-2 system" (glicko.net), step by step:
ratings move on the Glicko-2 scale (``mu = (r - 1500) / 173.7178``, ``phi = RD / 173.7178``),
a rating period's games give the estimated variance ``v`` and improvement ``delta``, the new
volatility is found with the Illinois algorithm (convergence tolerance 0.000001), and the
system constant ``tau`` (default 0.5) limits how fast volatility changes.

How races become games: a race of n racers is ONE rating period in which every racer has
played n - 1 games, one against each other racer: a win against everyone who placed behind,
a loss against everyone who placed ahead, a draw against anyone with the same place. All
games of the race use the ratings from before it, so the order racers are listed in does not
matter. This is the usual pairwise decomposition of a multi-player result; it counts a
four-racer race as three games per racer, so a race with more racers moves ratings (and
shrinks RDs) more than a duel.

One deliberate addition to the paper: the RD never grows past :data:`MAX_RD` (350, a new
player's RD) however long a player sits out, as in the original Glicko system; a player who
has been away is never less known than one never seen.

Note that a game does not always shrink the RD in Glicko-2: the period first widens it by the
volatility (``phi* = sqrt(phi^2 + sigma'^2)``) and the games then narrow it, so a player whose
RD is already small (below about 60 with the usual volatility 0.06) can come out of a
game with a slightly larger RD. What always holds is that playing leaves the RD smaller than
sitting the period out would.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

SCALE = 173.7178
"""Glicko-2's conversion factor between the Glicko scale (1500 +- RD) and its internal scale."""

DEFAULT_RATING = 1500.0
DEFAULT_RD = 350.0
DEFAULT_VOLATILITY = 0.06
DEFAULT_TAU = 0.5

MAX_RD = DEFAULT_RD
"""The RD of an unknown player; no update makes an RD larger than this."""

_EPSILON = 0.000001  # the paper's convergence tolerance for the volatility


@dataclass(frozen=True, slots=True)
class Rating:
    """A player's rating on the Glicko scale, its rating deviation and its volatility.

    A new player has the defaults (1500, 350, 0.06). ``rd`` and ``volatility`` must be positive.
    """

    rating: float = DEFAULT_RATING
    rd: float = DEFAULT_RD
    volatility: float = DEFAULT_VOLATILITY

    def __post_init__(self) -> None:
        if not (math.isfinite(self.rating) and math.isfinite(self.rd) and math.isfinite(self.volatility)):
            raise ValueError(f"a rating's numbers must be finite: {self}")
        if self.rd <= 0 or self.volatility <= 0:
            raise ValueError(f"a rating's RD and volatility must be positive: {self}")


def update(player: Rating, results: Sequence[tuple[Rating, float]], tau: float = DEFAULT_TAU) -> Rating:
    """``player``'s rating after one rating period with these games.

    Each game is (the opponent's rating at the start of the period, ``player``'s score: 1 for a
    win, 0.5 for a draw, 0 for a loss; any score from 0 to 1 is accepted). With no games the
    rating and volatility stay and only the RD grows (up to :data:`MAX_RD`).
    """
    if not tau > 0:
        raise ValueError(f"tau must be positive, not {tau}")
    for _, score in results:
        if not 0 <= score <= 1:
            raise ValueError(f"a game's score is between 0 and 1, not {score}")
    phi = player.rd / SCALE
    if not results:
        return Rating(player.rating, _widened(phi, player.volatility) * SCALE, player.volatility)

    mu = (player.rating - DEFAULT_RATING) / SCALE
    information = 0.0  # 1 / v: how much the games tell about the player
    surprise = 0.0  # sum of g(phi_j) * (s_j - E_j): how much better than expected they went
    for opponent, score in results:
        g = _g(opponent.rd / SCALE)
        expected = 1 / (1 + math.exp(-g * (mu - (opponent.rating - DEFAULT_RATING) / SCALE)))
        information += g * g * expected * (1 - expected)
        surprise += g * (score - expected)
    v = 1 / information
    volatility = _new_volatility(phi, player.volatility, v, v * surprise, tau)
    new_phi = 1 / math.sqrt(1 / _widened(phi, volatility) ** 2 + 1 / v)
    # r' = r + SCALE * (mu' - mu): written as a change of r, so a game that went exactly as
    # expected (surprise == 0, e.g. a draw between equals) leaves the rating bit for bit.
    return Rating(player.rating + SCALE * new_phi * new_phi * surprise, new_phi * SCALE, volatility)


def rate_race(ratings: Sequence[Rating], places: Sequence[int], tau: float = DEFAULT_TAU) -> list[Rating]:
    """Everyone's rating after a race, in the order given: ``places[i]`` is racer i's place
    (1 = first; equal places are a tie, any increasing numbers work).

    Each racer is scored against every other racer as a separate game of one rating period
    (see the module docstring), using everyone's rating from before the race.
    """
    if len(ratings) != len(places):
        raise ValueError(f"{len(ratings)} ratings but {len(places)} places")
    if len(ratings) < 2:
        raise ValueError("a rated race has at least two racers")
    return [
        update(
            mine,
            [
                (theirs, _score(place, their_place))
                for j, (theirs, their_place) in enumerate(zip(ratings, places, strict=True))
                if j != i
            ],
            tau,
        )
        for i, (mine, place) in enumerate(zip(ratings, places, strict=True))
    ]


def _score(place: int, other: int) -> float:
    """The game score of placing ``place`` against a racer who placed ``other`` (lower is better)."""
    if place < other:
        return 1.0
    if place > other:
        return 0.0
    return 0.5


def _g(phi: float) -> float:
    """How much an opponent's uncertainty discounts a game against them."""
    return 1 / math.sqrt(1 + 3 * phi * phi / (math.pi * math.pi))


def _widened(phi: float, volatility: float) -> float:
    """The deviation at the start of a period (phi*), capped at the RD of an unknown player."""
    return min(math.sqrt(phi * phi + volatility * volatility), MAX_RD / SCALE)


def _new_volatility(phi: float, sigma: float, v: float, delta: float, tau: float) -> float:
    """Step 5 of the paper: the volatility that solves f(x) = 0, by the Illinois algorithm."""
    a = math.log(sigma * sigma)
    spread = phi * phi + v

    def f(x: float) -> float:
        ex = math.exp(x)
        return ex * (delta * delta - spread - ex) / (2 * (spread + ex) ** 2) - (x - a) / (tau * tau)

    low = a
    if delta * delta > spread:
        high = math.log(delta * delta - spread)
    else:
        k = 1
        while f(a - k * tau) < 0:
            k += 1
        high = a - k * tau
    f_low, f_high = f(low), f(high)
    while abs(high - low) > _EPSILON:
        c = low + (low - high) * f_low / (f_high - f_low)
        f_c = f(c)
        if f_c * f_high <= 0:
            low, f_low = high, f_high
        else:
            f_low /= 2
        high, f_high = c, f_c
    return math.exp(low / 2)
