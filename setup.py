"""Compiles the Scorpion search: its C core, and its Python modules with mypyc; everything
else is in pyproject.toml.

``server/solver/scorpion_core.c`` is the search's loop in C (``server.solver._scorpion_core``,
about seven times the mypyc build's speed); the Python search stays the reference it is
tested against, and what runs where the core is not built.

The search, its lost-position test and its stubborn sets are plain, typed Python; mypyc
(part of mypy, pinned in ``[build-system]``) turns them into C extensions at install time,
which run the same code more than twice as fast (``python -m bench.solver_speed`` measures
both). Without a C compiler, or with ``SOLITAIRE_PURE_PYTHON=1``, the install goes on
without them and the modules run as written. The build records a hash of each source it
compiled, so that an edited source runs as written until the next install
(``server/solver/compiled.py``).
"""

import hashlib
import os
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

# The same list as server.solver.compiled.COMPILED (importing the package here would need
# its dependencies in the build environment).
MODULES = [
    "server/solver/scorpion_dead.py",
    "server/solver/scorpion_stubborn.py",
    "server/solver/scorpion_search.py",
]
#: The C core's files, built as server.solver._scorpion_core (the same list and name as in
#: server.solver.compiled).
CORE = [
    "server/solver/scorpion_core.c",
    "server/solver/scorpion_core_lost.c",
    "server/solver/scorpion_core_table.c",
    "server/solver/scorpion_core.h",
]
ROOT = Path(__file__).parent
HASHES = ROOT / "server" / "solver" / "compiled_sources.txt"
FALLBACK = "the Scorpion search will run as pure Python, at a tenth of the speed or less"


def remove_builds() -> None:
    """Removes the extensions an earlier build left beside the sources: they would run in
    their place, stale."""
    for path in MODULES:
        source = ROOT / path
        for built in source.parent.glob(f"{source.stem}.*.so"):
            built.unlink()
        for built in source.parent.glob(f"{source.stem}__mypyc.*.so"):
            built.unlink()
    for built in (ROOT / "server" / "solver").glob("_scorpion_core.*.so"):
        built.unlink()


class OptionalBuildExt(build_ext):
    """Builds the extensions, or warns and leaves them out when compiling fails."""

    built = False

    def run(self) -> None:
        try:
            super().run()
        except Exception as error:  # a missing compiler or headers: the source still runs
            print(f"warning: cannot compile the solver ({error}); {FALLBACK}", file=sys.stderr)
            remove_builds()
            return
        OptionalBuildExt.built = True
        if not self.inplace:
            # A wheel (the Docker image's, say) carries the record too, or its builds would
            # count as not built and the search would run as plain Python.
            record = Path(self.build_lib) / HASHES.relative_to(ROOT)
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(hashes, encoding="utf-8")


def extensions() -> list[object]:
    if os.environ.get("SOLITAIRE_PURE_PYTHON"):
        remove_builds()
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        print(f"warning: mypyc is not installed; {FALLBACK}", file=sys.stderr)
        remove_builds()
        return []
    sources = [path for path in CORE if path.endswith(".c")]
    core = Extension("server.solver._scorpion_core", sources, depends=CORE[-1:], extra_compile_args=["-O3"])
    # One extension per module (separate=True) keeps every built file beside its source.
    return [core, *mypycify(MODULES, opt_level="3", separate=True)]


# Hashed before the build reads them; recorded only once a build has succeeded.
hashes = "".join(f"{path} {hashlib.sha256((ROOT / path).read_bytes()).hexdigest()}\n" for path in [*MODULES, *CORE])
HASHES.unlink(missing_ok=True)
setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
if OptionalBuildExt.built:
    HASHES.write_text(hashes, encoding="utf-8")
