"""Tests of the solver. :data:`LARGEST` marks the re-checks of the largest searches of the
survey (seeds/winnability.md): about a minute of CPU in all, so they run on demand
(``SOLVER_LARGEST=1``), as the long fault run does; the survey's CSVs are their record."""

from __future__ import annotations

import os

import pytest

LARGEST = pytest.mark.skipif(
    os.environ.get("SOLVER_LARGEST") != "1", reason="the survey's largest searches run with SOLVER_LARGEST=1"
)
