"""Which Scorpion modules run compiled: mypyc's build of them, or their Python source; and
whether the C ports (the Scorpion search's core, ``scorpion_core.c``, and the Antares
position's, ``antares_core.c``) are built and current.

``SOLITAIRE_MYPYC=1 pip install`` compiles :data:`COMPILED` with mypyc (opt-in, see
``setup.py``); Python then imports the extension in preference to the source beside it. An
editable install keeps both in the tree, so an edited source would silently lose to its
stale build. The build records a
hash of each source it compiled (:data:`HASHES_FILE`); :func:`prefer_fresh`, called when
:mod:`server.solver` is imported, loads the sources instead of the builds when one source
has changed since (logged at INFO; ``tests/solver/test_compiled.py`` fails on a stale build,
and ``bench.solver_speed`` prints what runs compiled). ``SOLITAIRE_PURE_PYTHON=1`` loads
the sources (for comparing the two, or debugging), and at install time skips the build.

The C ports are looked at apart (:func:`native_core`, :func:`native_antares`): each is used
when it is built from its C source as it is now, and otherwise the Python it ports runs.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import logging
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Final

#: The modules ``setup.py`` compiles, as paths from the project root; a module's imports
#: among them come before it (a source loaded in place of a build imports the others).
COMPILED: Final = (
    "server/solver/scorpion_dead.py",
    "server/solver/scorpion_stubborn.py",
    "server/solver/scorpion_search.py",
)
#: The search's C core, its files from the project root, and the module the build makes of it.
CORE_SOURCES: Final = (
    "server/solver/scorpion_core.c",
    "server/solver/scorpion_core_lost.c",
    "server/solver/scorpion_core_table.c",
    "server/solver/scorpion_core_stubborn.c",
    "server/solver/scorpion_core.h",
    "server/solver/scorpion_core_short.h",
)
CORE_MODULE: Final = "server.solver._scorpion_core"
#: The Antares position's C port (moves, play, the estimate), and the module built of it.
ANTARES_SOURCES: Final = ("server/solver/antares_core.c",)
ANTARES_MODULE: Final = "server.solver._antares_core"
#: Written by the build beside the modules: one ``path sha256`` line per compiled source.
HASHES_FILE: Final = Path(__file__).with_name("compiled_sources.txt")
PURE_PYTHON_VARIABLE: Final = "SOLITAIRE_PURE_PYTHON"
#: Set to 1, the searches run their Python (mypyc's build of it) and leave the C ports out.
NO_CORE_VARIABLE: Final = "SOLITAIRE_NO_CORE"
_ROOT: Final = Path(__file__).resolve().parent.parent.parent
_log = logging.getLogger(__name__)


def source_hash(path: Path) -> str:
    """The hash the build records for a source file."""
    return hashlib.sha256(path.read_bytes()).hexdigest()


def recorded_hashes(path: Path = HASHES_FILE) -> dict[str, str]:
    """The hashes of the sources the last build compiled (empty when nothing was built here)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    return dict(line.split(" ", 1) for line in text.splitlines() if " " in line)


def module_name(path: str) -> str:
    """``server/solver/scorpion_search.py`` -> ``server.solver.scorpion_search``."""
    return path.removesuffix(".py").replace("/", ".")


def is_compiled(name: str) -> bool:
    """Whether the module ``name`` (imported) runs as a compiled extension."""
    module = sys.modules.get(name)
    return module is not None and str(getattr(module, "__file__", "")).endswith((".so", ".pyd"))


def built_here(root: Path = _ROOT) -> list[str]:
    """The compiled modules that have a build beside their source (an extension file)."""
    return [path for path in COMPILED if any((root / path).parent.glob(Path(path).stem + ".*.so"))]


def stale_builds(
    recorded: dict[str, str] | None = None, root: Path = _ROOT, paths: tuple[str, ...] = COMPILED
) -> list[str]:
    """The built ``paths`` (by default the mypyc modules; :data:`CORE_SOURCES` for the C
    core) whose source differs from what their build compiled (``recorded``: by default
    what the last build here recorded)."""
    recorded = recorded_hashes() if recorded is None else recorded
    stale: list[str] = []
    for path in paths:
        source = root / path
        if path in recorded and source.exists() and source_hash(source) != recorded[path]:
            stale.append(path)
    return stale


def prefer_fresh() -> None:
    """Load every compiled module from source, before anything imports it, when one of
    their builds is stale or ``SOLITAIRE_PURE_PYTHON=1`` is set.

    All or none: a compiled module calls the compiled modules it imports directly, through
    their builds' own tables, so it cannot run beside their sources (it crashes)."""
    pure = bool(os.environ.get(PURE_PYTHON_VARIABLE))
    stale = [] if pure else stale_builds()
    if not pure and not stale:
        return
    if stale:
        _log.info("%s changed since compiled: running the sources (pip install -e . compiles them again)", stale)
    for path in COMPILED:
        name = module_name(path)
        spec = importlib.util.find_spec(name)
        if name in sys.modules or spec is None or not str(spec.origin).endswith((".so", ".pyd")):
            continue  # already imported, or no build to pass over
        source = importlib.util.spec_from_file_location(name, _ROOT / path)
        assert source is not None
        assert source.loader is not None
        module = importlib.util.module_from_spec(source)
        sys.modules[name] = module
        source.loader.exec_module(module)


@functools.cache
def native_core() -> ModuleType | None:
    """The Scorpion search's C core, or None when it is not built here, its build is older
    than its C files (logged at INFO), or ``SOLITAIRE_PURE_PYTHON=1`` or
    ``SOLITAIRE_NO_CORE=1`` is set."""
    return _native(CORE_SOURCES, CORE_MODULE)


@functools.cache
def native_antares() -> ModuleType | None:
    """The Antares position's C port, or None, as :func:`native_core`."""
    return _native(ANTARES_SOURCES, ANTARES_MODULE)


def _native(sources: tuple[str, ...], module: str) -> ModuleType | None:
    if os.environ.get(PURE_PYTHON_VARIABLE) or os.environ.get(NO_CORE_VARIABLE):
        return None
    recorded = recorded_hashes()
    if any(path not in recorded for path in sources):
        return None  # not built here
    changed = stale_builds(recorded, paths=sources)
    if changed:
        _log.info("%s changed since compiled: the Python they port runs instead", changed)
        return None
    try:
        return importlib.import_module(module)
    except ImportError:
        return None
