"""How much of a sampled check one run of the suite does.

The heaviest property tests and the longest lists of deals re-proved run a third of their
examples or deals in an ordinary run: each run draws its own (its seed is pytest-randomly's,
printed in the header), so successive runs cover the rest. ``SOLITAIRE_THOROUGH=1`` runs all
of them, as a release or a change to the rules engine, the solver or the codec should.
"""

from __future__ import annotations

import os
import random
from collections.abc import Sequence
from typing import TypeVar

T = TypeVar("T")

#: Whether this run does every example and every deal.
THOROUGH = os.environ.get("SOLITAIRE_THOROUGH") == "1"
#: The share an ordinary run does.
SHARE = 3


def examples(full: int) -> int:
    """The Hypothesis examples to run of a property whose thorough count is ``full``."""
    return full if THOROUGH else max(10, full // SHARE)


def sample(items: Sequence[T]) -> list[T]:
    """``items`` in a thorough run; else a third of them (at least one), drawn from the
    test's seeded ``random``, in their order."""
    if THOROUGH or len(items) <= 1:
        return list(items)
    chosen = set(random.sample(range(len(items)), max(1, len(items) // SHARE)))
    return [item for index, item in enumerate(items) if index in chosen]
