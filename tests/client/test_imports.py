"""The client's modules import each other in one direction only: no import cycle, and no
import inside a function (which would hide one), checked on the source with ``ast``."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

CLIENT = Path(__file__).resolve().parents[2] / "client"


def module_name(path: Path) -> str:
    parts = path.relative_to(CLIENT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, ast.Module]:
    return {module_name(path): ast.parse(path.read_text(encoding="utf-8")) for path in sorted(CLIENT.rglob("*.py"))}


def imported(tree: ast.Module, names: set[str]) -> set[str]:
    """The client modules ``tree`` imports anywhere (``from client.tui import navigation``
    counts as importing ``client.tui.navigation``)."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            if node.module in names:
                found.add(node.module)
            found.update(name for alias in node.names if (name := f"{node.module}.{alias.name}") in names)
    return found


def cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle of ``graph`` (the modules on it, the first repeated at the end), or None."""
    done: set[str] = set()
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in path:
            return [*path[path.index(node) :], node]
        if node in done:
            return None
        path.append(node)
        for successor in sorted(graph[node]):
            found = visit(successor)
            if found is not None:
                return found
        path.pop()
        done.add(node)
        return None

    for node in sorted(graph):
        found = visit(node)
        if found is not None:
            return found
    return None


def test_the_client_has_no_import_cycle() -> None:
    trees = modules()
    names = set(trees)
    # A package's own __init__ is imported by its modules implicitly: not an edge of ours.
    graph = {name: imported(tree, names) - {name} for name, tree in trees.items()}
    assert cycle(graph) is None, " -> ".join(cycle(graph) or [])


def test_the_client_imports_nothing_inside_a_function() -> None:
    inside = [
        f"{name}:{node.lineno}"
        for name, tree in modules().items()
        for function in ast.walk(tree)
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(function)
        if isinstance(node, ast.Import | ast.ImportFrom)
    ]
    assert inside == []


def test_the_checks_see_a_cycle() -> None:
    assert cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert cycle({"a": {"b"}, "b": set()}) is None


@pytest.mark.parametrize("folder", ["lib", "render"])
def test_the_library_and_the_rendering_do_not_import_the_ui(folder: str) -> None:
    trees = modules()
    names = set(trees)
    for name, tree in trees.items():
        if name.startswith(f"client.{folder}"):
            assert not {m for m in imported(tree, names) if m.startswith(("client.tui", "client.commands"))}, name


def test_no_client_module_is_over_500_lines() -> None:
    long = {path.name: n for path in CLIENT.rglob("*.py") if (n := len(path.read_text().splitlines())) > 500}
    assert long == {}
