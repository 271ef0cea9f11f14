"""The README tells the truth about the tree and the settings."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

from server.config import Config

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()
SETUP = README.split("\n## Setup\n", 1)[1].split("\n## ", 1)[0]


def test_every_setting_is_in_the_readme_table() -> None:
    for item in dataclasses.fields(Config):
        assert f"| `--{item.name.replace('_', '-')}` | `{item.name.upper()}` |" in README, item.name


def test_the_layout_table_matches_the_tree() -> None:
    layout = README.split("\n## Layout\n", 1)[1].split("\n## ", 1)[0]
    listed = set(re.findall(r"^\| `([a-z/_]+)/` \|", layout, re.M))
    for path in listed:
        assert (ROOT / path).is_dir(), path
    packages = {
        str(folder.relative_to(ROOT))
        for top in ("server", "client")
        for folder in (ROOT / top).iterdir()
        if folder.is_dir() and not folder.name.startswith((".", "__")) and any(folder.iterdir())
    }
    assert packages <= listed, packages - listed


#: How the Setup names the system packages whose Debian names it does not use.
NAMED_IN_THE_SETUP = {"chromium-headless-shell": "Chromium's headless shell", "haproxy": "HAProxy", "gcc": "C compiler"}


def test_the_readme_gives_a_newcomer_two_setup_commands_and_ci_runs_the_second() -> None:
    run, test = re.findall(r"```sh\n(.*?)\n```", SETUP, re.S)
    assert run.endswith("-m server")  # installs and starts the server, its Redis included
    ci = (ROOT / ".ci" / "run").read_text().rstrip("\n").splitlines()
    assert ci[-1] == test  # byte for byte: CI runs what a newcomer runs
    # Before it, CI installs system packages when they are missing, each named in the Setup.
    installed = re.findall(r"^provide \S+ (\S+) ", "\n".join(ci[:-1]), re.M)
    assert installed
    for package in installed:
        name = NAMED_IN_THE_SETUP.get(package, package)
        assert name in SETUP, package


def test_the_readmes_commands_run_the_virtualenvs_python() -> None:
    """Every command the README gives runs in the environment its setup makes (``python``
    alone may be another Python, or none): only the setup's ``python3 -m venv`` is bare."""
    spans = re.findall(r"```sh\n(.*?)\n```|`([^`]+)`", README, re.S)
    commands = [" ".join((block or inline).split()) for block, inline in spans]
    assert any(text.startswith(".venv/bin/python -m client") for text in commands)
    for text in commands:
        bare = re.sub(r"\bpython3 -m venv\b", "", text)
        assert not re.search(r"(?<![\w/.-])python3? ", bare), text
