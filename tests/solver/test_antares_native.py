"""The Antares position's C port (``antares_core.c``): the same moves in the same order, the
same positions and the same estimates as the Python it ports, so the search visits the same
positions (``test_antares_search.py`` checks both against the engine)."""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.games import Antares, Autoplay, Options
from server.solver import antares_search
from server.solver.antares_core import AUTOPLAY_CODE, Estimator, encode, python_moves, python_play
from server.solver.compiled import native_antares
from tests.thorough import examples

NATIVE = native_antares()
pytestmark = pytest.mark.skipif(NATIVE is None, reason="the C port is not built here (no compiler, or pure Python)")

WEIGHTS = [
    antares_search.HOMEWARD,
    antares_search.TIDY,
    antares_search.CELLS_FREE,
    antares_search.UNBURYING,
    antares_search.ORDERLY,
    antares_search.UNBURYING_UNORDERED,
]


@settings(deadline=None, max_examples=examples(40), suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.integers(1, 10**6), autoplay=st.sampled_from(list(Autoplay)), seed=st.integers(0, 2**32))
def test_the_port_lists_plays_and_estimates_as_the_python(deal: int, autoplay: Autoplay, seed: int) -> None:
    assert NATIVE is not None
    rng = random.Random(seed)
    mode = AUTOPLAY_CODE[autoplay]
    estimators = [(Estimator(weights), Estimator(weights, native=False)) for weights in WEIGHTS]
    position = encode(Antares.new(deal, Options(autoplay=autoplay)))
    for step in range(120):
        listed = python_moves(*position)
        assert NATIVE.moves(*position) == listed
        for native, python in estimators:
            assert native(position) == python(position)
        for move in listed:
            for settled in (True, False):  # False: the deal itself, before its autoplay
                assert NATIVE.play(position, move, mode, settled=settled) == python_play(position, move, mode, settled)
        if not listed:
            break
        position = python_play(position, rng.choice(listed), mode, settled=step > 0)


@pytest.mark.parametrize(
    ("name", "args"),
    [
        ("moves", ((b"",) * 7, b"", b"\0\0\0\0")),
        ("moves", ((b"\x40",) + (b"",) * 7, b"", b"\0\0\0\0")),
        ("moves", ((b"",) * 8, b"\1\2\3\4\5", b"\0\0\0\0")),
        ("play", (((b"\1",) + (b"",) * 7, b"", b"\0\0\0\0"), (0, 5, 1), 0)),
        ("play", (((b"\1",) + (b"",) * 7, b"", b"\0\0\0\0"), (8, 9, 1), 0)),
        ("play", (((b"\6",) + (b"",) * 7, b"\5", b"\0\0\0\0"), (8, 261, 0), 0)),  # 261 is 5 in a byte
        ("play", (((b"\6\5",) + (b"",) * 7, b"", b"\0\0\0\0"), (0, 0, 8), 0)),  # two cards to a cell
        ("moves", ((b"\1",) + (b"",) * 7, b"\5\3", b"\0\0\0\0")),  # cells not sorted
        ("moves", ((b"\1",) + (b"\1",) + (b"",) * 6, b"", b"\0\0\0\0")),  # a card twice
        ("estimate", (((b"",) * 8, b"", b"\0\0\0\x0e"), (1, 1, 1, 1))),
    ],
)
def test_the_port_refuses_what_is_not_a_position_or_one_of_its_moves(name: str, args: tuple[object, ...]) -> None:
    with pytest.raises(ValueError):
        getattr(NATIVE, name)(*args)
