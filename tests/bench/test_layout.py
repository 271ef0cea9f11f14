"""bench/ keeps its shape: entry points (``python -m bench.X``) at the top, the library they
share in bench/lib/, imports going from the first to the second only, and no import cycle."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from graphlib import CycleError, TopologicalSorter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def name_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {name_of(path): path for path in sorted(BENCH.rglob("*.py"))}
ENTRY_POINTS = {name for name, path in MODULES.items() if path.parent == BENCH and path.name != "__init__.py"}
LIBRARY = {name for name in MODULES if name.startswith("bench.lib")}


def imported(path: Path) -> Iterator[tuple[str, int]]:
    """(bench module, line) for each import of one anywhere in ``path`` (inside a function
    too): ``from a.b import c`` names module a.b.c when there is one, else a.b."""
    tree = ast.parse(path.read_text(), str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            names = [f"{node.module}.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name:
                yield name, node.lineno


def runs_as_main(path: Path) -> bool:
    """The module has an ``if __name__ == "__main__":`` block."""
    return any(
        isinstance(node, ast.If) and "__name__" in ast.unparse(node.test) and "__main__" in ast.unparse(node.test)
        for node in ast.parse(path.read_text()).body
    )


def test_the_top_holds_entry_points_and_the_library_none() -> None:
    assert ENTRY_POINTS
    assert LIBRARY
    assert [name for name in sorted(ENTRY_POINTS) if not runs_as_main(MODULES[name])] == []
    assert [name for name in sorted(LIBRARY) if runs_as_main(MODULES[name])] == []


def test_no_entry_point_imports_another() -> None:
    found = [
        f"{name}:{line} imports {target}"
        for name in sorted(ENTRY_POINTS)
        for target, line in imported(MODULES[name])
        if target in ENTRY_POINTS and target != name
    ]
    assert found == []


def test_the_library_imports_no_entry_point() -> None:
    found = [
        f"{name}:{line} imports {target}"
        for name in sorted(LIBRARY)
        for target, line in imported(MODULES[name])
        if target in ENTRY_POINTS
    ]
    assert found == []


def test_there_is_no_import_cycle_in_bench() -> None:
    graph = {
        name: {target for target, _ in imported(path) if target != name and not name.startswith(target + ".")}
        for name, path in MODULES.items()
    }
    try:
        tuple(TopologicalSorter(graph).static_order())
    except CycleError as error:
        pytest.fail(f"import cycle: {' -> '.join(error.args[1])}")
