"""How much of a sampled check one run of the suite does.

The heaviest property tests, the longest lists of deals re-proved and the tests marked
``@pytest.mark.sampled`` (a test over many golden deals, say) run a third of their examples,
deals or cases in an ordinary run: each run draws its own from its seed (pytest-randomly's,
printed in the header; the same in every xdist worker), so successive runs cover the rest.
``SOLITAIRE_THOROUGH=1`` runs all of them, as a release or a change to the rules engine, the
solver or the codec should.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import TypeVar

import pytest

T = TypeVar("T")

#: Whether this run does every example and every deal.
THOROUGH = os.environ.get("SOLITAIRE_THOROUGH") == "1"
#: The share an ordinary run does.
SHARE = 3


def examples(full: int) -> int:
    """The Hypothesis examples to run of a property whose thorough count is ``full``."""
    return full if THOROUGH else max(min(full, 10), full // SHARE)


def sample(items: Sequence[T]) -> list[T]:
    """``items`` in a thorough run; else a third of them (at least one), drawn from the
    test's seeded ``random``, in their order."""
    if THOROUGH:
        return list(items)
    chosen = _a_third(len(items), random.Random(random.getrandbits(64)))
    return [item for index, item in enumerate(items) if index in chosen]


def sampled_cases(items: Sequence[pytest.Item], seed: int) -> tuple[list[pytest.Item], list[pytest.Item]]:
    """``items`` split into those to run and those left out: of each test marked ``sampled``,
    a third of its parametrized cases (at least one), drawn from ``seed`` and the test's name
    alone, so every worker collecting the same tests with the same seed draws the same."""
    cases: dict[str, list[pytest.Item]] = {}
    for item in items:
        if not THOROUGH and item.get_closest_marker("sampled") is not None:
            cases.setdefault(item.nodeid.partition("[")[0], []).append(item)
    left_out: set[str] = set()
    for test, its_cases in cases.items():
        kept = _a_third(len(its_cases), random.Random(f"{seed}:{test}"))
        left_out.update(case.nodeid for index, case in enumerate(its_cases) if index not in kept)
    return [item for item in items if item.nodeid not in left_out], [item for item in items if item.nodeid in left_out]


def _a_third(count: int, rng: random.Random) -> set[int]:
    """The indices of a third of ``count`` items (at least one, when there are any)."""
    return set(rng.sample(range(count), min(count, max(1, count // SHARE))))
