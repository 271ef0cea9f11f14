"""Stubborn sets (partial-order reduction) for the Scorpion search: the same verdicts from
fewer positions, and every set a non-empty subset of the legal moves."""

from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.games import Scorpion
from server.solver import Budget, Solved, Unknown, Unwinnable
from server.solver.scorpion_search import _encode, _moves, _play, depth_first_scorpion
from server.solver.scorpion_stubborn import stubborn_moves
from tests.games.positions import random_play, scorpion
from tests.solver.naive_search import naive_search
from tests.solver.test_scorpion_search import assert_wins

BUDGET = Budget(seconds=30, clock=time.process_time)
#: Deals 1-60 hold wins (5, 33, 37) and proofs of every size; those whose full space passes
#: 40,000 positions (27, 39, 44, 45, 60) are left out: seconds each, minutes as pure Python.
DEALS = [deal for deal in range(1, 61) if deal not in (27, 39, 44, 45, 60)]


@pytest.mark.sampled
@pytest.mark.parametrize("deal", DEALS)
def test_the_reduced_search_gives_the_verdict_of_the_full_one(deal: int) -> None:
    game = Scorpion.new(deal)
    reduced = depth_first_scorpion(game, BUDGET, stubborn=True)
    full = depth_first_scorpion(game, BUDGET, native=False)
    assert type(reduced) is type(full)
    assert not isinstance(full, Unknown)
    if isinstance(reduced, Solved):
        assert_wins(game, reduced)
    else:
        assert reduced.stats.nodes <= full.stats.nodes


def test_independent_moves_are_tried_in_one_order_only() -> None:
    # Three builds, 9H onto TH, 5S onto 6S and 9S onto TS, in different columns, none of
    # which can ever stop another: the search tries one of them here, the others later.
    game = scorpion(
        "1: <KH> <JH> <8H> <7H> TH\n2: <KS> <JS> <8S> <7S> 9H\n3: <QH> <4H> <3H> <2H> 6S\n"
        "4: <QS> <4S> <3S> <2S> 5S\n5: <AH> <AS> <6H> <5H> 9S\n6: TS\nhome: KC KD"
    )
    columns, stock = _encode(game)
    moves = _moves(columns, stock, lone=False)
    assert len(moves) == 3
    assert len(stubborn_moves(columns, moves)) == 1
    assert len(_moves(columns, stock)) == 1  # each is also a persistent set on its own
    assert type(depth_first_scorpion(game, BUDGET, stubborn=True)) is type(depth_first_scorpion(game, BUDGET))


@settings(deadline=None, max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.integers(1, 10**6), data=st.data())
def test_each_stubborn_set_is_a_non_empty_subset_of_the_moves(deal: int, data: st.DataObject) -> None:
    game = Scorpion.new(deal)
    game.push(game.deal_move())
    columns, stock = _encode(game)
    for _ in range(data.draw(st.integers(0, 40), label="steps")):
        moves = _moves(columns, stock)
        if not moves:
            break
        reduced = stubborn_moves(columns, moves)
        assert reduced
        assert all(move in moves for move in reduced)
        assert reduced == [move for move in moves if move in reduced]  # the search's order kept
        columns, stock = _play(columns, stock, moves[data.draw(st.integers(0, len(moves) - 1), label="move")])


@settings(deadline=None, max_examples=25, suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.integers(1, 10**6), data=st.data())
def test_after_random_play_the_reduced_search_agrees_with_the_naive_one(deal: int, data: st.DataObject) -> None:
    """The naive search shares no code with the fast one and prunes nothing but repeats."""
    game = Scorpion.new(deal)
    game.push(game.deal_move())
    for _ in random_play(game, data, 60):
        pass
    naive = naive_search(game, 30_000)
    if naive is None:
        return  # too big for the naive search
    reduced = depth_first_scorpion(game, BUDGET, stubborn=True)
    assert isinstance(reduced, Solved | Unwinnable)
    assert isinstance(reduced, Solved) == naive.won
