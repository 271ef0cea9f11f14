"""The package as people install it (pyproject.toml, setup.py, requirements.lock).

- Every dependency's lower bound is true: the slow test installs exactly the floors
  pyproject.toml declares into a fresh virtualenv, one way of installing after the other (the
  client library alone; the server as the Docker image has it; everything that runs), and runs
  the code after each.
- The extras keep their promises: the client library needs neither the server's packages nor
  the terminal UI's, and the server needs no terminal UI.
- The packages ship ``py.typed``.
- requirements.lock pins every declared dependency at a version its bound allows, and CI, the
  image and the README's commands install from it; ruff and mypy are pinned.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]
NAME = canonicalize_name(PROJECT["name"])
LOCK = ROOT / "requirements.lock"
DEV: list[str] = PROJECT["optional-dependencies"]["dev"]
#: What each kind of install brings (the extras), and the modules it must be able to import.
CLIENT_LIBRARY: tuple[str, ...] = ()
DOCKER_IMAGE = ("server", "embedded")
EVERYTHING = ("server", "embedded", "tui", "uvloop", "plots")
#: Packages only the server or the terminal UI need: the client library loads none of them.
NOT_FOR_THE_CLIENT_LIBRARY = ("redis", "hiredis", "prometheus_client", "pythonjsonlogger", "argon2", "textual", "rich")


def requirements(extras: tuple[str, ...]) -> list[Requirement]:
    """The requirements of the package with ``extras``, the package's own extras expanded."""
    found = [Requirement(line) for line in PROJECT["dependencies"]]
    wanted, seen = list(extras), set()
    while wanted:
        extra = wanted.pop()
        if extra in seen:
            continue
        seen.add(extra)
        for line in PROJECT["optional-dependencies"][extra]:
            requirement = Requirement(line)
            if canonicalize_name(requirement.name) == NAME:
                wanted += requirement.extras
            else:
                found.append(requirement)
    return found


def floors(extras: tuple[str, ...]) -> dict[str, str]:
    """The lowest version each requirement of ``extras`` allows on this machine (the highest of
    its bounds where several lines name it), by package name."""
    lowest: dict[str, str] = {}
    for requirement in requirements(extras):
        if requirement.marker is not None and not requirement.marker.evaluate():
            continue
        bounds = [spec.version for spec in requirement.specifier if spec.operator in (">=", "==", "~=")]
        assert bounds, f"{requirement} has no lower bound"
        name = canonicalize_name(requirement.name)
        lowest[name] = max([*bounds, *([lowest[name]] if name in lowest else [])], key=Version)
    return lowest


def locked() -> dict[str, list[tuple[str, str]]]:
    """requirements.lock's pins: each package's versions, with the marker each holds under."""
    pins: dict[str, list[tuple[str, str]]] = {}
    for line in LOCK.read_text().splitlines():
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==(\S+)(?:\s*;\s*(.+))?", line.strip())
        if match:
            pins.setdefault(canonicalize_name(match[1]), []).append((match[2], match[3] or ""))
    return pins


def test_the_lock_pins_every_dependency_within_its_bounds() -> None:
    """A dependency added to pyproject.toml without regenerating the lock (the command at its
    top) would be installed at whatever version is newest: CI would no longer be reproducible."""
    pins = locked()
    assert "--extra dev" in LOCK.read_text().split("\n\n", 1)[0]  # the lock covers every extra
    for requirement in requirements(tuple(PROJECT["optional-dependencies"])):
        name = canonicalize_name(requirement.name)
        assert name in pins, f"{requirement.name} is not in requirements.lock: regenerate it"
        versions = [version for version, _ in pins[name]]
        assert any(requirement.specifier.contains(version, prereleases=True) for version in versions), (
            f"requirements.lock pins {name} at {versions}, outside {requirement}: regenerate it"
        )


def test_ruff_and_mypy_are_pinned_and_mypyc_builds_with_the_same_mypy() -> None:
    dev: dict[str, Requirement] = {canonicalize_name(Requirement(line).name): Requirement(line) for line in DEV}
    for tool in ("ruff", "mypy"):
        assert str(dev[tool].specifier).startswith("=="), f"{tool} is not pinned in the dev extra"
    setup_pin = re.search(r'^MYPY = "(.+)"$', (ROOT / "setup.py").read_text(), re.M)
    assert setup_pin is not None
    assert str(Requirement(setup_pin[1])) == str(dev["mypy"])
    # The build needs no mypy unless SOLITAIRE_MYPYC=1 asks for mypyc (setup.py adds it then).
    assert not any(line.startswith("mypy") for line in PYPROJECT["build-system"]["requires"])


def test_ci_the_image_and_the_readme_install_from_the_lock() -> None:
    ci = (ROOT / ".ci" / "run").read_text().rstrip("\n").splitlines()[-1]
    assert "-c requirements.lock" in ci
    readme = (ROOT / "README.md").read_text()
    setup = readme.split("\n## Setup\n", 1)[1].split("\n## ", 1)[0]
    commands = re.findall(r"```sh\n(.*?)\n```", setup, re.S)
    assert commands
    assert all("-c requirements.lock" in command for command in commands)
    dockerfile = (ROOT / "Dockerfile").read_text()
    build, image = dockerfile.split("\nFROM ")[1:]
    assert "--constraint requirements.lock '.[server,embedded]'" in build
    assert "--no-index" in image  # the slim stage installs the wheels the locked build made


def _run(args: list[str | Path], timeout: float = 600, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("SOLITAIRE_", "PYTHON"))}
    environ |= {"PIP_DISABLE_PIP_VERSION_CHECK": "1", "PIP_NO_INPUT": "1"}
    return subprocess.run(
        [str(arg) for arg in args], capture_output=True, text=True, env=environ | kwargs.pop("env", {}),
        timeout=timeout, **kwargs,
    )  # fmt: skip


def _wheel(tmp_path: Path) -> Path:
    """The package as a wheel, built from a copy of its files (the tree is left alone). Pure
    Python (SOLITAIRE_PURE_PYTHON=1): the C core's build is tests/nodes/test_compose.py's."""
    source = tmp_path / "source"
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "*.pyc", "compiled_sources.txt")
    for name in ("server", "client", "protocol"):
        shutil.copytree(ROOT / name, source / name, ignore=ignore)
    for name in ("pyproject.toml", "setup.py", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    built = _run([sys.executable, "-m", "uv", "build", "--wheel", "--out-dir", tmp_path / "wheel", source],
                 env={"SOLITAIRE_PURE_PYTHON": "1"})  # fmt: skip
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    (wheel,) = (tmp_path / "wheel").glob("solitaire_race-*.whl")
    return wheel


def _new_venv(tmp_path: Path) -> Path:
    """A fresh virtualenv without pip of its own (this pip installs into it); its python."""
    venv = tmp_path / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", venv])
    assert made.returncode == 0, made.stderr
    return venv / "bin" / "python"


def _install_floors(python: Path, wheel: Path, extras: tuple[str, ...]) -> None:
    """The package with ``extras``, and every requirement at its floor, into ``python``'s
    virtualenv (what an earlier install put there and these extras do not need stays, at its
    floor too); fails unless exactly the floors are installed afterwards."""
    pins = floors(extras)
    target = f"{wheel}[{','.join(extras)}]" if extras else str(wheel)
    pinned = [f"{name}=={version}" for name, version in pins.items()]
    # uv (not pip): the same install at a fraction of the CPU; it byte-compiles nothing, and the
    # imports below compile what they load.
    install: list[str | Path] = [sys.executable, "-m", "uv", "pip", "install", "--python", python, target, *pinned]
    installed = _run(install)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]
    # Exactly the floors, not newer versions another requirement pulled in.
    versions = "import importlib.metadata as m, sys; print(*(m.version(n) for n in sys.argv[1:]))"
    listed = _run([python, "-c", versions, *pins])
    assert listed.returncode == 0, listed.stderr
    got = dict(zip(pins, map(Version, listed.stdout.split()), strict=True))
    assert got == {name: Version(version) for name, version in pins.items()}


#: Run in the new virtualenv: imports every module of the packages named in argv (but their
#: ``__main__``), from the installed package (the working directory is elsewhere), and says
#: whether each package ships py.typed.
IMPORT_ALL = """
import importlib, importlib.resources, pkgutil, sys
for top in sys.argv[1:]:
    package = importlib.import_module(top)
    assert "site-packages" in list(package.__path__)[0], package.__path__
    root = top.split(".")[0]
    assert importlib.resources.files(root).joinpath("py.typed").is_file(), f"{root} has no py.typed"
    for module in pkgutil.walk_packages(package.__path__, top + "."):
        if module.name.rsplit(".", 1)[-1] != "__main__":
            importlib.import_module(module.name)
print(" ".join(sorted(name for name in sys.modules if "." not in name)))
"""


#: Run in the new virtualenv while its server runs on port argv[1]: readiness asked over
#: HTTP/1.0 (as HAProxy's health checks ask), then a client of the library creates a room.
LIVE = """
import asyncio, sys, time
from client.lib.connection import RaceClient
from protocol.messages import CreateRoom, Joined
port = int(sys.argv[1])

async def ready() -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /readyz HTTP/1.0\\r\\nHost: localhost\\r\\n\\r\\n")
    answer = await reader.read()
    writer.close()
    return answer

async def main() -> None:
    deadline, answer = time.monotonic() + 60, b""
    while not answer.startswith(b"HTTP/1.1 200"):
        assert time.monotonic() < deadline, answer
        try:
            answer = await ready()
        except OSError:
            pass
        await asyncio.sleep(0.2)
    async with await RaceClient.connect(f"ws://127.0.0.1:{port}", "Ann", reconnect=False) as client:
        reply = await client.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(reply, Joined), reply

asyncio.run(main())
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _lowest_runs(python: Path, cwd: Path, *packages: str) -> set[str]:
    """Imports every module of ``packages`` under ``python``; the top-level modules loaded."""
    result = _run([python, "-c", IMPORT_ALL, *packages], timeout=300, cwd=cwd)
    assert result.returncode == 0, result.stderr[-5000:]
    return set(result.stdout.split())


@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_the_lowest_allowed_versions_install_and_run(tmp_path: Path) -> None:
    """The floors, installed the three ways people install the package, one after the other in
    a fresh virtualenv, each checked before the next adds to it: the client library alone, the
    server as the Docker image has it, everything."""
    probe = _run([sys.executable, "-m", "pip", "download", "--no-deps", "--dest", tmp_path / "probe",
                  f"platformdirs=={floors(CLIENT_LIBRARY)['platformdirs']}"], timeout=180)  # fmt: skip
    if probe.returncode != 0:
        pytest.skip(f"the package index cannot be reached: {probe.stderr.strip()[-300:]}")
    wheel = _wheel(tmp_path)
    elsewhere = tmp_path / "elsewhere"  # not the checkout: the installed package is imported
    elsewhere.mkdir()

    # The client library alone: the protocol and client.lib, without the server's packages or
    # the terminal UI (client.tui, client.render and the command line need the tui extra).
    python = _new_venv(tmp_path)
    _install_floors(python, wheel, CLIENT_LIBRARY)
    loaded = _lowest_runs(python, elsewhere, "protocol", "client.lib")
    assert not loaded & set(NOT_FOR_THE_CLIENT_LIBRARY), loaded & set(NOT_FOR_THE_CLIENT_LIBRARY)
    # What the library reads only once connected (client/lib/connection.py).
    check = "from websockets.asyncio.client import ClientConnection as C; assert C.close_code and C.close_reason"
    result = _run([python, "-c", check], cwd=elsewhere)
    assert result.returncode == 0, result.stderr

    # The server and its embedded Redis, as the Docker image installs them: no terminal UI.
    _install_floors(python, wheel, DOCKER_IMAGE)
    _lowest_runs(python, elsewhere, "protocol", "server", "client.lib")
    # redis-py parses replies with hiredis only from hiredis 3.2; the image has no terminal UI.
    check = (
        "import importlib.util as u; from redis.asyncio.cluster import ClusterPubSub; from redis.utils import "
        "HIREDIS_AVAILABLE as h; print(h, u.find_spec('textual'))"
    )
    result = _run([python, "-c", check], cwd=elsewhere)
    assert result.stdout.split() == ["True", "None"], result.stdout + result.stderr
    help_text = _run([python, "-m", "server", "--help"], cwd=elsewhere)
    assert help_text.returncode == 0, help_text.stderr
    assert "--redis-url" in help_text.stdout

    # Everything that runs (all extras but dev's test tools).
    _install_floors(python, wheel, EVERYTHING)
    _lowest_runs(python, elsewhere, "protocol", "server", "client")
    for command in (["-m", "server", "--help"], ["-m", "client", "--help"]):
        result = _run([python, *command], cwd=elsewhere)
        assert result.returncode == 0, result.stderr
    smoke = (
        "import uvloop; uvloop.new_event_loop().close()\n"
        "from server.solver.histogram import plots_available; assert plots_available()\n"
        "from server.storage.embedded import EmbeddedRedis\n"
        "from protocol.codec import encode, decode_server\n"
    )
    result = _run([python, "-c", smoke], cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    # The server itself, its embedded Redis, and a client of the library.
    port = _free_port()
    options = ["--port", str(port), "--data-dir", tmp_path / "data", "--solver-workers", "0", "--hint-workers", "0"]
    server = subprocess.Popen(
        [python, "-m", "server", *map(str, options)], cwd=elsewhere, stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    try:
        result = _run([python, "-c", LIVE, str(port)], timeout=120, cwd=elsewhere)
    finally:
        server.terminate()
        log, _ = server.communicate(timeout=60)
    assert result.returncode == 0, result.stderr[-3000:] + log.decode(errors="replace")[-3000:]
