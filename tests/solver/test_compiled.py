"""The compiled Scorpion search: it runs what its source says, and a stale build gives way."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from server.games import Scorpion
from server.solver import Budget
from server.solver.compiled import (
    ANTARES_SOURCES,
    COMPILED,
    CORE_SOURCES,
    PURE_PYTHON_VARIABLE,
    built_here,
    is_compiled,
    module_name,
    native_core,
    source_hash,
    stale_builds,
)
from server.solver.scorpion_search import depth_first_scorpion

ROOT = Path(__file__).resolve().parent.parent.parent
#: Solved and unwinnable deals, small and large spaces, and the King and empty-column code.
DEALS = [*range(1, 26), 33, 37]

RUN = """
import json, sys, time
from server.games import Scorpion
from server.solver import Budget
from server.solver.compiled import COMPILED, is_compiled, module_name
from server.solver.scorpion_search import depth_first_scorpion
results = {}
for deal in map(int, sys.argv[1].split(",")):
    for stubborn in (False, True):
        r = depth_first_scorpion(Scorpion.new(deal), Budget(seconds=60, clock=time.process_time), stubborn=stubborn)
        results[f"{deal} {stubborn}"] = [type(r).__name__, r.stats.nodes]
print(json.dumps({"compiled": [is_compiled(module_name(p)) for p in COMPILED], "results": results}))
"""


#: CPU seconds: a busy machine is no reason for Unknown.
BUDGET = Budget(seconds=60, clock=time.process_time)


def _run_pure(deals: list[int]) -> dict[str, object]:
    env = {**os.environ, PURE_PYTHON_VARIABLE: "1"}
    out = subprocess.run(
        [sys.executable, "-c", RUN, ",".join(map(str, deals))], cwd=ROOT, env=env, check=True, capture_output=True
    )
    result: dict[str, object] = json.loads(out.stdout)
    return result


@pytest.mark.skipif(
    bool(os.environ.get(PURE_PYTHON_VARIABLE)) or shutil.which("cc") is None,
    reason="no C compiler, or installed with SOLITAIRE_PURE_PYTHON=1: the core is not built",
)
def test_the_installed_c_core_is_built_and_current() -> None:
    assert native_core() is not None, "the C core is missing or older than scorpion_core.c: pip install -e ."


@pytest.mark.skipif(not built_here(), reason="mypyc's build is opt-in (SOLITAIRE_MYPYC=1): not built here")
def test_the_mypyc_build_runs_and_is_current() -> None:
    assert stale_builds() == [], "the build is older than its source: run pip install -e . again"
    assert all(is_compiled(module_name(path)) for path in COMPILED)


@pytest.mark.slow
@pytest.mark.skipif(not built_here(), reason="mypyc's build is opt-in (SOLITAIRE_MYPYC=1): nothing compiled to compare")
def test_compiled_and_pure_python_searches_visit_the_same_positions() -> None:
    """mypyc compiles the very source: every verdict and position count must match."""
    pure = _run_pure(DEALS)
    assert pure["compiled"] == [False] * len(COMPILED)
    here = {}
    for deal in DEALS:
        for stubborn in (False, True):
            result = depth_first_scorpion(Scorpion.new(deal), BUDGET, stubborn=stubborn, native=False)
            here[f"{deal} {stubborn}"] = [type(result).__name__, result.stats.nodes]
    assert here == pure["results"]


def test_a_source_changed_since_its_build_is_stale(tmp_path: Path) -> None:
    for path in COMPILED:
        tmp_path.joinpath(path).parent.mkdir(parents=True, exist_ok=True)
        tmp_path.joinpath(path).write_text("# built\n", encoding="utf-8")
    recorded = {path: source_hash(tmp_path / path) for path in COMPILED}
    assert stale_builds(recorded, tmp_path) == []
    tmp_path.joinpath(COMPILED[0]).write_text("# edited\n", encoding="utf-8")
    assert stale_builds(recorded, tmp_path) == [COMPILED[0]]
    assert stale_builds({}, tmp_path) == []  # nothing recorded: nothing was built here


def test_the_build_compiles_the_sources_the_search_looks_for() -> None:
    """setup.py cannot import the package, so it keeps its own lists: a file in one list and
    not the other would leave its build unrecorded, and the search on Python."""
    lists = {
        target.id: ast.literal_eval(node.value)
        for node in ast.parse((ROOT / "setup.py").read_text(encoding="utf-8")).body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name) and target.id in {"MODULES", "CORE", "ANTARES"}
    }
    assert lists == {"MODULES": list(COMPILED), "CORE": list(CORE_SOURCES), "ANTARES": list(ANTARES_SOURCES)}


def test_a_c_file_changed_since_the_core_was_built_is_stale(tmp_path: Path) -> None:
    for path in CORE_SOURCES:
        tmp_path.joinpath(path).parent.mkdir(parents=True, exist_ok=True)
        tmp_path.joinpath(path).write_text("/* built */\n", encoding="utf-8")
    recorded = {path: source_hash(tmp_path / path) for path in CORE_SOURCES}
    assert stale_builds(recorded, tmp_path, CORE_SOURCES) == []
    tmp_path.joinpath(CORE_SOURCES[-1]).write_text("/* edited */\n", encoding="utf-8")
    assert stale_builds(recorded, tmp_path, CORE_SOURCES) == [CORE_SOURCES[-1]]
