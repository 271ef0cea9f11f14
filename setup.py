"""Compiles the solver's C ports; everything else is in pyproject.toml.

``server/solver/scorpion_core.c`` is the Scorpion search's loop in C
(``server.solver._scorpion_core``, about seven times the speed of the Python search compiled
by mypyc); ``server/solver/antares_core.c`` the Antares position's moves, play and estimate
(``server.solver._antares_core``). The Python they port stays the reference they are tested
against, and what runs where they are not built. Without a C
compiler, or with ``SOLITAIRE_PURE_PYTHON=1``, the install goes on without it.

The search's Python modules (the loop, its lost-position test and its stubborn sets) can
also be compiled with mypyc, on request: ``SOLITAIRE_MYPYC=1 pip install ...``. It is off by
default: the server searches in the C core, so mypyc's build only speeds up the Python loop
(where the core is not built, and ``bench.solver_speed``'s comparisons), and it would cost
every install mypy in its build environment and the modules' compiling. Asked for, mypy
(pinned below: the same release as the dev extra's) is added to the build requirements.

The build records a hash of each source it compiled, so that an edited source runs as
written until the next install (``server/solver/compiled.py``).
"""

import hashlib
import importlib.util
import os
import platform
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

#: Set to 1 to compile MODULES with mypyc as well.
MYPYC_VARIABLE = "SOLITAIRE_MYPYC"
#: The mypy whose mypyc compiles them: the dev extra's (tests/test_packaging.py checks it).
MYPY = "mypy==2.4.1"
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
    "server/solver/scorpion_core_stubborn.c",
    "server/solver/scorpion_core.h",
    "server/solver/scorpion_core_short.h",
]
#: The Antares position's C port, built as server.solver._antares_core (server.solver.compiled's
#: ANTARES_SOURCES and ANTARES_MODULE).
ANTARES = ["server/solver/antares_core.c"]
ROOT = Path(__file__).parent
HASHES = ROOT / "server" / "solver" / "compiled_sources.txt"
FALLBACK = "the searches will run as pure Python, Scorpion's at a tenth of the speed or less"
PURE = bool(os.environ.get("SOLITAIRE_PURE_PYTHON"))
MYPYC = os.environ.get(MYPYC_VARIABLE, "") not in ("", "0") and not PURE
#: Warnings printed when the build runs (not when setuptools only asks for build requirements).
NOTES: list[str] = []


def remove_builds(core: bool = True, modules: bool = True) -> None:
    """Removes the extensions an earlier build left beside the sources: they would run in
    their place, stale (``modules``: mypyc's, which Python prefers to the source)."""
    if modules:
        for path in MODULES:
            source = ROOT / path
            for built in source.parent.glob(f"{source.stem}.*.so"):
                built.unlink()
            for built in source.parent.glob(f"{source.stem}__mypyc.*.so"):
                built.unlink()
    if core:
        for stem in ("_scorpion_core", "_antares_core"):
            for built in (ROOT / "server" / "solver").glob(f"{stem}.*.so"):
                built.unlink()


class OptionalBuildExt(build_ext):
    """Builds the extensions, or warns and leaves them out when compiling fails."""

    built = False

    def run(self) -> None:
        for note in NOTES:
            print(f"warning: {note}", file=sys.stderr)
        if not self.extensions:
            return
        try:
            super().run()
        except Exception as error:  # a missing compiler or headers: the source still runs
            print(f"warning: cannot compile the solver ({error}); {FALLBACK}", file=sys.stderr)
            remove_builds()
            return
        OptionalBuildExt.built = True
        if not self.inplace:
            # A wheel (the Docker image's, say) carries the record too, or its builds would
            # count as not built and the search would run its Python loop.
            record = Path(self.build_lib) / HASHES.relative_to(ROOT)
            record.parent.mkdir(parents=True, exist_ok=True)
            record.write_text(hashes, encoding="utf-8")


def extensions() -> tuple[list[Extension], list[str]]:
    """The extensions to build, and the sources they compile."""
    if PURE:
        remove_builds()
        return [], []
    sources = [path for path in CORE if path.endswith(".c")]
    headers = [path for path in CORE if path.endswith(".h")]
    # POPCNT is part of x86-64-v2; without the flag GCC calls a function for each count, which
    # the stubborn sets' closure (scorpion_core_stubborn.c) feels.
    flags = ["-O3", "-mpopcnt"] if platform.machine().lower() in {"x86_64", "amd64"} else ["-O3"]
    core = Extension("server.solver._scorpion_core", sources, depends=headers, extra_compile_args=flags)
    antares = Extension("server.solver._antares_core", ANTARES, extra_compile_args=["-O3"])
    if not MYPYC:
        remove_builds(core=False)  # an earlier SOLITAIRE_MYPYC=1 build's, now stale
        return [core, antares], [*CORE, *ANTARES]
    try:
        from mypyc.build import mypycify
    except ImportError:
        # Asking for the build requirements (below) comes first, so this is a build without
        # isolation (--no-build-isolation) and without mypy: the core is built alone.
        NOTES.append(f"{MYPYC_VARIABLE}=1 but mypyc is not installed ({MYPY}): the C core alone")
        remove_builds(core=False)
        return [core, antares], [*CORE, *ANTARES]
    # One extension per module (separate=True) keeps every built file beside its source.
    return [core, antares, *mypycify(MODULES, opt_level="3", separate=True)], [*MODULES, *CORE, *ANTARES]


built_extensions, compiled = extensions()
# Hashed before the build reads them; recorded only once a build has succeeded.
hashes = "".join(f"{path} {hashlib.sha256((ROOT / path).read_bytes()).hexdigest()}\n" for path in compiled)
HASHES.unlink(missing_ok=True)
setup(
    ext_modules=built_extensions,
    cmdclass={"build_ext": OptionalBuildExt},
    # Under PEP 517 (pip, build, uv), setuptools turns these into build requirements: mypy
    # is installed into the build environment only when mypyc is asked for.
    setup_requires=[MYPY] if MYPYC and importlib.util.find_spec("mypyc") is None else [],
)
if OptionalBuildExt.built:
    HASHES.write_text(hashes, encoding="utf-8")
