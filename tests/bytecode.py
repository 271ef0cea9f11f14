"""Bytecode for the suite's modules, made once and shared out among the test workers.

On a fresh checkout no module has its bytecode yet, and every xdist worker collects every
test module: each worker would compile every module (and rewrite the asserts of every test
module) at the same moment as the others, the same work once per worker. Instead, before it
collects, each worker compiles its share of the files (every Nth one), so that the others
find it done; a file whose bytecode is current is skipped after a read of its header.

Test modules get what pytest's assert rewriting would write for them, through pytest's own
functions (``_pytest.assertion.rewrite``, private: ``tests/test_bytecode.py`` fails when they
change); the rest get the interpreter's bytecode (:mod:`py_compile`, through
:mod:`compileall`).
"""

from __future__ import annotations

import compileall
import fnmatch
from collections.abc import Iterator
from pathlib import Path

import pytest
from _pytest.assertion import rewrite

#: The folders of Python the suite imports.
FOLDERS = ("server", "protocol", "client", "bench", "tests")


def sources(root: Path) -> Iterator[Path]:
    """Every ``.py`` file under :data:`FOLDERS` of ``root``, in a fixed order."""
    for folder in FOLDERS:
        yield from sorted((root / folder).rglob("*.py"))


def rewritten_names(config: pytest.Config) -> list[str]:
    """The file names whose asserts pytest rewrites when it imports them: conftest files, and
    those its ``python_files`` patterns name test modules."""
    return ["conftest.py", *config.getini("python_files")]


def is_rewritten(path: Path, patterns: list[str]) -> bool:
    """Whether ``path``'s name matches one of ``patterns`` (:func:`rewritten_names`)."""
    return any(fnmatch.fnmatch(path.name, pattern) for pattern in patterns)


def compile_rewritten(path: Path, config: pytest.Config) -> bool:
    """Write the bytecode pytest loads for the test module ``path``, unless it is current.
    Whether it wrote any."""
    cache = rewrite.get_cache_dir(path)
    pyc = cache / (path.name[:-3] + rewrite.PYC_TAIL)
    if rewrite._read_pyc(path, pyc) is not None or not rewrite.try_makedirs(cache):
        return False
    source_hash, code = rewrite._rewrite_test(path, config)
    return rewrite._write_pyc(config.stash[rewrite.assertstate_key], code, source_hash, pyc)


def compile_share(config: pytest.Config, root: Path, index: int, count: int) -> None:
    """Compile file ``index``, ``index + count``, ... of :func:`sources` (those not current)."""
    patterns = rewritten_names(config)
    for number, path in enumerate(sources(root)):
        if number % count != index:
            continue
        if is_rewritten(path, patterns):
            compile_rewritten(path, config)
        else:
            compileall.compile_file(path, quiet=2)
