"""Every Unwinnable verdict on deals 1-200 re-proved by the naive search of
:mod:`tests.solver.naive_search`, which shares no code with the fast solver.

By default (for CI) the Scorpion deals of :data:`DEFAULT_SCORPION` are re-proved, and Antares
deals 1-20 are solved (no Antares deal of 1-200 is unwinnable): a third of each list, drawn
anew each run, or all of it with ``SOLITAIRE_THOROUGH=1`` (:mod:`tests.thorough`). The naive
search has no symmetry reduction and runs on the engine, so the large spaces take minutes each. Set
``NAIVE_PROOFS=all`` to re-prove every Unwinnable verdict of deals 1-200 (about half an hour on
one core), or ``NAIVE_PROOFS=1-50`` for another range, all of it.
"""

from __future__ import annotations

import os

import pytest

from server.games import Antares, Game, Scorpion
from server.solver import Budget, Solved, Unwinnable, solve, solve_position
from server.solver.survey import parse_deals
from tests.games.positions import antares, scorpion
from tests.solver.naive_search import naive_search
from tests.thorough import sample

DEALS = range(1, 201)
#: Antares deals solved by default (each is won within a few thousand positions).
ANTARES_DEFAULT_DEALS = 20
#: Exact positions the naive search may visit (it needs many more than the fast one).
NAIVE_LIMIT = 50_000_000
#: Exact positions the naive search may visit by default.
DEFAULT_NAIVE_LIMIT = 20_000
#: The Scorpion deals re-proved by default: the Unwinnable deals of 1-200 whose whole space the
#: naive search walks within DEFAULT_NAIVE_LIMIT positions (the fast search proves some others
#: lost within a few positions whose full space runs to millions).
# fmt: off
DEFAULT_SCORPION = (
    1, 4, 8, 11, 12, 13, 16, 18, 19, 20, 22, 25, 28, 29, 30, 31, 38, 42, 43, 48, 50, 54, 59, 61,
    62, 69, 73, 77, 83, 85, 88, 89, 90, 97, 98, 104, 105, 110, 111, 112, 115, 116, 118, 120, 121,
    127, 132, 134, 141, 142, 145, 148, 150, 155, 156, 161, 162, 166, 174, 177, 179, 184, 185, 186,
    189, 192, 196, 197, 198, 200,
)
# fmt: on


def _selection(variant: type[Game]) -> tuple[list[int], int, bool]:
    """The deals to re-prove, the naive search's position limit, and whether each of those
    deals must be Unwinnable (the default Scorpion list) rather than skipped when it is not."""
    setting = os.environ.get("NAIVE_PROOFS", "")
    if setting == "all":
        return list(DEALS), NAIVE_LIMIT, False
    if setting:
        return parse_deals(setting), NAIVE_LIMIT, False
    if variant is Scorpion:
        return sample(DEFAULT_SCORPION), DEFAULT_NAIVE_LIMIT, True
    # Antares deals are won (none of 1-200 is unwinnable): by default, a sample only.
    return sample(list(DEALS)[:ANTARES_DEFAULT_DEALS]), DEFAULT_NAIVE_LIMIT, False


@pytest.mark.parametrize("variant", [Scorpion, Antares], ids=lambda v: v.VARIANT)
def test_every_unwinnable_verdict_is_re_proved_by_the_naive_search(variant: type[Game]) -> None:
    deals, naive_limit, all_lost = _selection(variant)
    proved = 0
    for deal in deals:
        result = solve(variant, deal, None, Budget(seconds=30), par_seconds=0.0)
        if not isinstance(result, Unwinnable):
            assert not all_lost, f"deal {deal}: {result!r}, not Unwinnable"
            continue
        naive = naive_search(variant.new(deal), naive_limit)
        assert naive is not None, f"deal {deal}: too big for the naive search"
        assert not naive.won, f"deal {deal}: the fast solver said unwinnable, the naive search found a win"
        # Exact positions can only outnumber positions up to interchangeable piles.
        assert naive.positions >= result.stats.nodes
        proved += 1
    if variant is Scorpion:
        assert proved > 0


@pytest.mark.parametrize(
    "game",
    [
        # Aces under nines, nothing builds on anything, the cells are full.
        antares(
            "s1: AC 9D\ns2: AS 9H\ns3: AH 9S\ns4: AD 9C\nf1: 5C\nf2: 5S\nf3: 5H\nf4: 5D\nc1: 2C\nc2: 2S\nc3: 2H\nc4: 2D"
        ),
        # The 2 of clubs lies face down under its own King-to-3 run: it can never be uncovered.
        scorpion("1: <2C> KC QC JC TC 9C 8C 7C 6C 5C 4C 3C\n2: AC\nhome: KS KH KD"),
    ],
    ids=["antares", "scorpion"],
)
def test_both_searches_agree_on_small_lost_positions(game: Game) -> None:
    fast = solve_position(game, Budget(seconds=10), par_seconds=0.0)
    naive = naive_search(game, 1_000_000)
    assert naive is not None
    assert isinstance(fast, Unwinnable) == (not naive.won)
    assert isinstance(fast, Unwinnable | Solved)


def test_the_naive_search_finds_wins_too() -> None:
    naive = naive_search(antares("s1: 2C AC\nhome: KS KH KD"), 1000)
    assert naive is not None
    assert naive.won
