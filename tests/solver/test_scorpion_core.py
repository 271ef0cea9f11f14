"""The search's C core (``scorpion_core.c``) is the Python search, only faster: without sleep
sets the same verdicts, lines and position counts, and the same budgets; with them (the
default, stubborn sets with them) the same verdicts from fewer positions."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.games import Game, Scorpion
from server.solver import Budget, Result, Solved, Unknown, Unwinnable
from server.solver.compiled import PURE_PYTHON_VARIABLE, native_core
from server.solver.pruning import POLL_EVERY
from server.solver.scorpion_dead import FACE_DOWN_BASE, is_lost
from server.solver.scorpion_search import _encode, depth_first_scorpion
from tests.games.positions import random_play
from tests.solver import LARGEST
from tests.solver.test_scorpion_search import assert_wins
from tests.thorough import examples

CORE = native_core()
pytestmark = pytest.mark.skipif(CORE is None, reason="the C core is not built here (no compiler, or pure Python)")
ROOT = Path(__file__).resolve().parent.parent.parent
#: CPU seconds, and ample: a busy machine, or coverage tracing the pure-Python search, is no
#: reason for Unknown (a verdict takes well under a minute untraced).
BUDGET = Budget(seconds=300, clock=time.process_time)
#: Random positions in play: a minute of CPU for the core; the Python loop (about 25,000
#: positions a second) stops at 50,000 positions, so one with a huge space holds no run for long.
IN_PLAY_BUDGET = Budget(seconds=60, clock=time.process_time)
IN_PLAY_LOOP_BUDGET = Budget(seconds=60, nodes=50_000, clock=time.process_time)


def _both(game: Game, budget: Budget = BUDGET) -> tuple[Result, Result]:
    """The core without sleep sets, and the Python loop."""
    return depth_first_scorpion(game, budget, sleep_sets=False), depth_first_scorpion(game, budget, native=False)


#: Compared with the Python loop (about 25,000 positions a second): small spaces, solved and
#: unwinnable, the King and empty-column code, and a larger proof (45: 66,000 positions).
LOOP_DEALS = [*range(1, 27), *range(28, 31), 33, 37, 45, 100, 617]


@functools.cache
def _python_verdict(deal: int) -> Result:
    """The Python loop's result on ``deal``, searched once for the tests that compare with it."""
    return depth_first_scorpion(Scorpion.new(deal), BUDGET, native=False)


def _in_play(deal: int, data: st.DataObject) -> Game:
    """The deal after up to 40 random moves."""
    game = Scorpion.new(deal)
    for _ in random_play(game, data, 40):
        pass
    return game


def _same(native: Result, python: Result) -> None:
    assert type(native) is type(python)
    assert native.stats.nodes == python.stats.nodes
    if isinstance(native, Solved) and isinstance(python, Solved):
        assert native.moves == python.moves
    if isinstance(native, Unknown) and isinstance(python, Unknown):
        assert native.reason == python.reason


@pytest.mark.sampled
@pytest.mark.parametrize("deal", LOOP_DEALS)
def test_deals_get_the_python_searchs_verdict_line_and_position_count(deal: int) -> None:
    native = depth_first_scorpion(Scorpion.new(deal), BUDGET, sleep_sets=False)
    _same(native, _python_verdict(deal))
    if isinstance(native, Solved):
        assert_wins(Scorpion.new(deal), native)


@pytest.mark.parametrize("deal", LOOP_DEALS)
def test_sleep_sets_keep_every_verdict_from_fewer_positions(deal: int) -> None:
    """(Deal 5197's larger proof is compared with the core's search without sleep sets below.)"""
    asleep = depth_first_scorpion(Scorpion.new(deal), BUDGET)
    python = _python_verdict(deal)
    assert type(asleep) is type(python)
    assert asleep.stats.nodes <= python.stats.nodes
    if isinstance(asleep, Solved):
        assert_wins(Scorpion.new(deal), asleep)


def test_sleep_and_stubborn_sets_halve_a_large_proof() -> None:
    asleep = depth_first_scorpion(Scorpion.new(5197), BUDGET)
    awake = depth_first_scorpion(Scorpion.new(5197), BUDGET, sleep_sets=False)
    assert (type(asleep), type(awake)) == (Unwinnable, Unwinnable)
    assert asleep.stats.nodes < 0.5 * awake.stats.nodes


@LARGEST
@pytest.mark.parametrize("deal", [11103, 30655])
def test_the_largest_proofs_the_survey_decides_are_found(deal: int) -> None:
    """Two of the largest state spaces of deals 1-32,000 (seeds/winnability.md), exhausted
    to a proof of loss."""
    result = depth_first_scorpion(Scorpion.new(deal), BUDGET)
    assert isinstance(result, Unwinnable)


@settings(deadline=None, max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.integers(1, 10**6), data=st.data())
def test_sleep_sets_keep_the_verdict_of_positions_in_play(deal: int, data: st.DataObject) -> None:
    """Every verdict the plain Python loop reaches, the core with sleep sets reaches too."""
    game = _in_play(deal, data)
    python = depth_first_scorpion(game, IN_PLAY_LOOP_BUDGET, native=False)
    if isinstance(python, Unknown):
        return  # too large a space for the loop: nothing to compare with
    asleep = depth_first_scorpion(game, IN_PLAY_BUDGET)
    assert type(asleep) is type(python)
    if isinstance(asleep, Solved):
        assert_wins(game, asleep)


@settings(deadline=None, max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.integers(1, 10**6), data=st.data())
def test_positions_in_play_get_the_python_searchs_result(deal: int, data: st.DataObject) -> None:
    """Mid-game positions, before and after the deal, with empty columns and suits home."""
    _same(*_both(_in_play(deal, data), Budget(seconds=60, nodes=20 * POLL_EVERY)))


@settings(deadline=None, max_examples=examples(60), suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.integers(1, 10**6), data=st.data())
def test_the_lost_position_test_agrees_with_the_python_one(deal: int, data: st.DataObject) -> None:
    assert CORE is not None
    for game in random_play(Scorpion.new(deal), data, 60):
        columns, stock = _encode(game)
        assert CORE.is_lost(columns, stock) == is_lost(columns, stock)
        for column in columns:
            for card in column[column[0] - FACE_DOWN_BASE + 1 :]:
                assert CORE.is_lost(columns, stock, card) == is_lost(columns, stock, card)


def test_a_node_cap_stops_both_at_the_same_position() -> None:
    budget = Budget(seconds=60, nodes=3 * POLL_EVERY)
    native, python = _both(Scorpion.new(27), budget)
    assert isinstance(native, Unknown)
    assert native.reason == "nodes"
    _same(native, python)


def test_an_interrupt_stops_the_core() -> None:
    result = depth_first_scorpion(Scorpion.new(27), Budget(seconds=60, interrupt=lambda: True))
    assert isinstance(result, Unknown)
    assert (result.reason, result.stats.nodes) == ("interrupted", POLL_EVERY)


def test_an_error_in_the_budget_reaches_the_caller() -> None:
    def broken() -> bool:
        raise RuntimeError("interrupt failed")

    with pytest.raises(RuntimeError, match="interrupt failed"):
        depth_first_scorpion(Scorpion.new(27), Budget(seconds=60, interrupt=broken))


@pytest.mark.parametrize(
    ("columns", "stock"),
    [
        ((b"d",) * 6, b""),  # six columns
        ((b"d\x01",) * 7, b"\x01\x02\x03\x04"),  # four stock cards
        ((b"",) * 7, b""),  # no marker
        ((b"\x05\x01",) * 7, b""),  # marker below the base
        ((b"f\x01",) * 7, b""),  # two face down of one card
        ((b"e\x01",) * 7, b""),  # a top card face down
        ((b"d\x40",) * 7, b""),  # no such card
        ((b"d" + bytes(60),) * 7, b""),  # a column longer than the deck
    ],
)
def test_malformed_positions_are_refused(columns: tuple[bytes, ...], stock: bytes) -> None:
    assert CORE is not None
    with pytest.raises(ValueError):
        CORE.search(columns, stock, lambda searched, stored: "")


def test_pure_python_mode_leaves_the_core_out() -> None:
    env = {**os.environ, PURE_PYTHON_VARIABLE: "1"}
    code = "from server.solver.compiled import native_core; print(native_core())"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    assert out.stdout.strip() == "None"
