"""The tree keeps the shape the README's layout table promises: small modules, one-way imports,
Redis only behind the storage layer, pure parts free of I/O, and no import cycle."""

from __future__ import annotations

import ast
import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.covered_elsewhere import COVERED_ELSEWHERE

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("server", "protocol", "client")
#: The pure parts: rules, solver, rooms, competition, and the wire contract.
PURE = ("server/games", "server/solver", "server/rooms", "server/competition", "protocol")
IO_MODULES = ("asyncio", "websockets", "redis")
MAX_LINES = 500


#: Held to the size rule besides the packages: the benchmarks (the other rules are the packages').
SIZED = (*PACKAGES, "bench")


def modules(folders: tuple[str, ...] = PACKAGES) -> Iterator[Path]:
    for package in folders:
        yield from sorted((ROOT / package).rglob("*.py"))


def name_of(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports(path: Path, top_level_only: bool) -> Iterator[tuple[str, int]]:
    """(imported module, line) for each import in ``path`` (module level only, or everywhere)."""
    tree = ast.parse(path.read_text(), str(path))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    for node in nodes:
        if isinstance(node, ast.If):  # `if TYPE_CHECKING:` imports are for types only
            continue
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            yield node.module, node.lineno


@pytest.mark.parametrize("path", list(modules(SIZED)), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_is_over_500_lines(path: Path) -> None:
    assert len(path.read_text().splitlines()) <= MAX_LINES


def test_redis_is_imported_only_by_the_storage_layer() -> None:
    outside = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in modules()
        for module, line in imports(path, top_level_only=False)
        if module.split(".")[0] == "redis" and not str(path.relative_to(ROOT)).startswith("server/storage/")
    ]
    assert outside == []


def test_the_pure_parts_import_no_io() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for part in PURE
        for path in sorted((ROOT / part).rglob("*.py"))
        for module, line in imports(path, top_level_only=False)
        if module.split(".")[0] in IO_MODULES
    ]
    assert found == []


def test_nothing_is_imported_inside_a_function() -> None:
    found = []
    for path in modules():
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [
                    f"{path.relative_to(ROOT)}:{inner.lineno}"
                    for inner in ast.walk(node)
                    if isinstance(inner, (ast.Import, ast.ImportFrom))
                ]
    assert found == []


def test_there_is_no_import_cycle() -> None:
    known = {name_of(path): path for path in modules()}
    graph: dict[str, set[str]] = {}
    for name, path in known.items():
        targets = set()
        for module, _ in imports(path, top_level_only=True):
            # `from a.b import c` may name module a.b.c or a name in a.b.
            while module and module not in known:
                module = module.rpartition(".")[0]
            if module and module != name:
                targets.add(module)
        graph[name] = targets
    cycles: list[list[str]] = []
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for target in sorted(graph[node]):
            if state.get(target) == 1:
                cycles.append([*trail[trail.index(target) :], target] if target in trail else [node, target])
            elif target not in state:
                visit(target, [*trail, target])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    # A package's __init__ re-exporting its modules is not a cycle worth reporting.
    real = [
        cycle for cycle in cycles if not all(a.startswith(b) or b.startswith(a) for a, b in itertools.pairwise(cycle))
    ]
    assert real == []


#: Layers from the top down: a module imports only from its own layer or those below it, so
#: data flows one way (the edge calls features, features run rooms and use storage, ...).
LAYERS = (
    ("server.app", "server.__main__", "server.local_nodes", "server.admin"),
    ("server.net",),
    ("server.features",),
    ("server.live",),
    ("server.cluster",),
    ("server.supply",),
    ("server.storage",),
    ("server.connections",),
    ("server.ops",),
    ("server.rooms",),
    ("server.competition",),
    ("server.solver",),
    ("server.games",),
    ("server.config", "server.clock", "server"),
    ("protocol",),
)


def layer_of(module: str) -> int | None:
    best: tuple[int, int] | None = None
    for index, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".")
            if matches and (best is None or len(prefix) > best[1]):
                best = (index, len(prefix))
    return None if best is None else best[0]


def test_imports_go_down_the_layers_only() -> None:
    upward = []
    for path in modules():
        name = name_of(path)
        here = layer_of(name)
        if here is None or not name.startswith(("server", "protocol")):
            continue
        for module, line in imports(path, top_level_only=False):
            there = layer_of(module)
            if there is not None and there < here:
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
    assert upward == []


#: What only the cluster package uses: the node, its post and links to other nodes, the
#: proxies of other nodes' connections, and the Redis adapter of all that. Everyone else asks
#: ``server.cluster.cluster.Cluster``.
CLUSTER_INSIDES = (
    "server.cluster.node",
    "server.cluster.node_mail",
    "server.cluster.peers",
    "server.cluster.inbox",
    "server.cluster.proxies",
    "server.storage.nodes",
)
#: Besides the package: the process's wiring, and the edge's router (with the answers it waits
#: for, and where it finds a room's owner), which forwards a request to its room's owner in
#: the cluster's messages.
CLUSTER_NEIGHBOURS = (
    "server/cluster/",
    "server/storage/nodes.py",
    "server/app.py",
    "server/net/forwarding.py",
    "server/net/answers.py",
    "server/net/locating.py",
)


def test_only_the_cluster_package_knows_other_nodes_exist() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in modules()
        if not str(path.relative_to(ROOT)).startswith(CLUSTER_NEIGHBOURS)
        for module, line in imports(path, top_level_only=False)
        if module.startswith(CLUSTER_INSIDES)
    ]
    assert found == []


def test_the_features_declare_no_port_for_the_edge_to_fill_in() -> None:
    """What the features use is built before them and passed down: a Protocol declared among
    them would be a port the edge above fills in after they are built, to be called back up
    (forwarding is decided at the edge, before a request reaches a feature)."""
    found = [
        f"{path.relative_to(ROOT)}:{node.lineno} declares {node.name}"
        for path in sorted((ROOT / "server" / "features").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.ClassDef)
        and any(ast.unparse(base).split("[")[0].rpartition(".")[2] == "Protocol" for base in node.bases)
    ]
    assert found == []


def mirror_of(path: Path) -> Path:
    """Where a module's own tests live: ``tests/`` and its package path (``server/`` left
    out), ``test_`` and its name."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    folders = parts[1:-1] if parts[0] == "server" else parts[:-1]
    return ROOT.joinpath("tests", *folders, f"test_{parts[-1]}.py")


def test_every_module_has_its_tests_or_says_where_they_are() -> None:
    product = {str(p.relative_to(ROOT)): p for p in modules() if p.name != "__init__.py" and "web" not in p.parts}
    unmirrored = {name for name, path in product.items() if not mirror_of(path).exists()}
    assert unmirrored - COVERED_ELSEWHERE.keys() == set(), "give these a test module or list where they are tested"
    assert COVERED_ELSEWHERE.keys() - unmirrored == set(), "listed but mirrored (or gone): take them off the list"
    missing = {test for test in COVERED_ELSEWHERE.values() if not (ROOT / test).exists()}
    assert missing == set()


def test_the_files_run_first_exist() -> None:
    """tests/conftest.py hands the longest files out first: a path there that no longer exists
    would quietly stop doing so."""
    from tests.conftest import LONGEST_FIRST

    assert [path for path in LONGEST_FIRST if not (ROOT / path).is_file()] == []
