"""A known winnable deal the end-to-end tests race on, with its winning line."""

from __future__ import annotations

import functools

from server.competition.daily import solution_texts
from server.games import Antares, Autoplay, Deal, Game, Options
from server.solver import Solved, solve

#: Antares deal 24 with safe autoplay (the rooms' default): the solver wins it in a fraction
#: of a second.
ANTARES_DEAL = 24


def new_antares() -> Game:
    """A local replica of a racer's board in an Antares room on :data:`ANTARES_DEAL`."""
    return Antares.new(ANTARES_DEAL, Options(autoplay=Autoplay.SAFE))


@functools.cache
def winning_line() -> tuple[str, ...]:
    """A winning line of :data:`ANTARES_DEAL`, as move texts (each written in its position)."""
    solved = solve(Antares, ANTARES_DEAL, new_antares().options)
    assert isinstance(solved, Solved)
    texts = solution_texts(Antares, Deal(ANTARES_DEAL), solved)
    assert Antares.replay(ANTARES_DEAL, new_antares().options, texts).is_won()
    return texts
