"""The workers' shares of the suite's bytecode are what pytest and the interpreter load (this
fails when the pytest functions tests/bytecode.py borrows change)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from _pytest.assertion import rewrite

from tests.bytecode import FOLDERS, compile_rewritten, compile_share, is_rewritten, rewritten_names, sources

TEST_MODULE = "def test_sum():\n    total = 1 + 1\n    assert total == 3\n"
HELPER = "def double(n):\n    return 2 * n\n"


def a_checkout(root: Path) -> list[Path]:
    """A test module, a conftest and a helper in each folder of a checkout at ``root``."""
    made = []
    for folder in FOLDERS:
        for name, text in (("test_one.py", TEST_MODULE), ("conftest.py", HELPER), ("helper.py", HELPER)):
            path = root / folder / "inner" / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            made.append(path)
    return made


def test_three_shares_leave_every_module_compiled_as_its_importer_loads_it(
    tmp_path: Path, pytestconfig: pytest.Config
) -> None:
    made = a_checkout(tmp_path)
    assert sorted(sources(tmp_path)) == sorted(made)
    for index in range(3):
        compile_share(pytestconfig, tmp_path, index, 3)
    for path in made:
        if is_rewritten(path, rewritten_names(pytestconfig)):
            pyc = rewrite.get_cache_dir(path) / (path.name[:-3] + rewrite.PYC_TAIL)
            code = rewrite._read_pyc(path, pyc)
            assert code is not None, path
            # The asserts are rewritten: the module reaches pytest's helpers for its messages.
            assert path.name == "conftest.py" or "@pytest_ar" in code.co_names
        else:
            assert Path(importlib.util.cache_from_source(str(path))).exists(), path


def test_a_current_module_is_not_compiled_again(tmp_path: Path, pytestconfig: pytest.Config) -> None:
    path = tmp_path / "test_once.py"
    path.write_text(TEST_MODULE)
    assert compile_rewritten(path, pytestconfig)
    assert not compile_rewritten(path, pytestconfig)
    path.write_text(TEST_MODULE.replace("3", "2"))
    assert compile_rewritten(path, pytestconfig)
