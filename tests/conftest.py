"""Shared fixtures for tests that need Redis: a real server process, never a mock.

``redis_url`` (session scope, plain fixture)
    The URL (``unix://...``) of ONE :class:`server.storage.embedded.EmbeddedRedis` started in a
    temporary directory for the whole test session and stopped at its end. It runs on an
    event loop of its own in a background thread, so it serves sync tests, async tests on any
    loop scope and subprocesses (pass it as REDIS_URL) alike, and its supervisor keeps
    working between tests. Tests share this server: give every key a prefix of your own (the
    ``store`` fixture does), and do not stop the server or FLUSHALL it; a test that needs to
    kill or restart Redis starts a private :class:`EmbeddedRedis` in its ``tmp_path``.

``cluster_url`` (session scope, plain fixture)
    The ``redis+cluster://`` URL of ONE local Redis Cluster (three primaries) of this worker,
    started when a test first asks for it and stopped at the session's end: what
    ``redis_url`` is to one Redis, under the same rules (a key prefix of your own). A test
    that changes the Cluster itself (moves a slot, stops a node) or runs server processes
    that share key names starts one of its own with
    :func:`tests.nodes.conftest.redis_cluster`.

``redis_or_cluster`` (function scope, parametrized: ``redis``, ``cluster``)
    ``redis_url`` or ``cluster_url``: a test that asks for it runs on each.

``store`` (function scope, async)
    A :class:`server.storage.connection.Storage` connected to ``redis_url`` with a key prefix unique to the
    test (``test:<12 hex digits>:``, see ``store.prefix``), so tests never see each other's
    keys; closed after the test. A redis.asyncio client belongs to the event loop that made
    it, and this fixture runs on the function-scoped loop: use it from tests on that loop
    (``@pytest.mark.asyncio`` without ``loop_scope``). Tests on a wider loop connect a Storage
    of their own with ``await Storage.connect(redis_url, prefix=...)``.

``start_server`` (function scope, async)
    The one way tests start a race server in this process: a factory,
    ``async with start_server(deal="24", grace=1.0) as srv:``, of
    :func:`tests.in_process_server.running_server` on ``redis_url`` (a free port, a key prefix
    of its own or ``prefix=``, no solver or hint workers and a countdown of
    :data:`tests.polling.COUNTDOWN` unless the settings say otherwise). ``srv`` is a
    :class:`~tests.in_process_server.RunningServer`: ``srv.url``, ``srv.connect(name)`` (a
    :class:`RaceClient`), ``srv.raw(name)`` (a :class:`~tests.in_process_server.RawClient`),
    ``srv.hub``. Clients are closed when their server stops (at the test's end with
    ``close_clients=False``), and every task the test left behind is stopped after it.

``server`` / ``slow_countdown_server`` (function scope, async)
    One such server with the default settings / counting down
    :data:`tests.polling.LONG_COUNTDOWN`, for tests that look at a room while it counts down.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from argon2 import PasswordHasher, profiles

from server.app import stop_leftovers
from server.features.accounts import use_password_hasher
from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis
from tests.bytecode import compile_share
from tests.cluster.netns import open_session_namespace
from tests.in_process_server import RunningServer, ServerFactory, fresh_prefix, running_server
from tests.nodes.conftest import redis_cluster
from tests.polling import LONG_COUNTDOWN
from tests.thorough import sampled_cases

_SETUP_TIMEOUT = 60.0

#: xdist workers a core with ``-n auto``: most of a test's time is spent waiting on the
#: servers, Redis processes and browsers it starts, so one worker a core leaves the cores idle.
WORKERS_PER_CORE = 2


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    return WORKERS_PER_CORE * (os.cpu_count() or 1)


#: The files that hold a worker longest (a quarter of a minute or more on 2 cores: waiting on
#: the processes they start as much as working), longest first. They are handed out first
#: (pyproject.toml turns off xdist's own reordering, which puts the files with the most tests
#: first), so that none starts late and runs alone at the end; the rest keep their random
#: order (pytest-randomly shuffles before this hook, and the sort is stable).
LONGEST_FIRST = (
    "tests/bench/test_benches.py",
    "tests/cluster/test_membership.py",
    "tests/nodes/test_service.py",
    "tests/test_static_checks.py",  # mypy, without its cache on a fresh checkout
    "tests/faults/test_storage_faults.py",
    "tests/web/test_room_page.py",
    "tests/web/test_browser.py",
    "tests/nodes/test_deployment.py",
    "tests/nodes/test_metrics.py",
    "tests/client/tui/test_challenges.py",
    "tests/cluster/test_fault_run.py",
    "tests/games/test_game.py",
    "tests/test_packaging.py",
    "tests/solver/test_scorpion_core.py",
    "tests/solver/test_hint_line.py",
    "tests/solver/test_cli.py",
    "tests/client/tui/test_two_nodes.py",
    "tests/client/tui/test_tui.py",
    "tests/web/test_play_hub.py",
    "tests/web/test_lobby_page.py",
    "tests/end_to_end/test_login_limits.py",
)


#: The fault run's network namespace, made by the session's first process (see tests/cluster/netns.py).
_SESSION_NAMESPACE = contextlib.ExitStack()
#: The checkout.
ROOT = Path(__file__).resolve().parent.parent
_FAULT_RUN = ROOT / "tests" / "cluster" / "test_fault_run.py"


def pytest_configure(config: pytest.Config) -> None:
    # The servers this process runs hash passwords at argon2's cheapest (its profile for
    # tests): hundreds of registrations and logins would otherwise spend a minute of CPU on
    # the hash alone. Server processes the tests start keep the real cost, and
    # tests/features/test_accounts.py checks it.
    use_password_hasher(PasswordHasher.from_parameters(profiles.CHEAPEST))
    if hasattr(config, "workerinput"):
        # Before collecting: each worker compiles its share of the suite's modules, where a
        # fresh checkout would have every worker compile all of them.
        worker = config.workerinput
        compile_share(config, ROOT, int(worker["workerid"].removeprefix("gw")), int(worker["workercount"]))
        return
    # Before the workers start, which inherit both. The suite starts hundreds of Python
    # processes (workers, servers, solver workers, the commands under test): where the
    # environment forbids bytecode caches, each would compile the code it imports again.
    # (With ``-n 0`` the in-process servers' solver workers still do: "spawn" passes them the
    # -B this process started with.)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    sys.dont_write_bytecode = False
    # The terminal client's tests read its widgets, not its frames: at most 3 frames a
    # second instead of Textual's 60 draws fewer frames that nobody looks at (a test that
    # reads the screen waits for the next one).
    os.environ.setdefault("TEXTUAL_FPS", "3")
    # Before any test, so before any browser: the workers inherit the note of where it is.
    if _selects(config, _FAULT_RUN):
        open_session_namespace(_SESSION_NAMESPACE)


def pytest_collection_finish(session: pytest.Session) -> None:
    # What collection leaves alive (the modules and all they import, the test items) lives to
    # the end of the session: frozen out of the garbage collector's sight, it is not walked
    # again by every full collection the tests' own garbage causes. Those would then come more
    # often (CPython holds a full collection back until the objects that survived the younger
    # ones are a quarter of those it keeps, and a frozen heap keeps few), so at most one every
    # 100 middle-aged collections instead of 10.
    gc.collect()
    gc.freeze()
    young, middle, _ = gc.get_threshold()
    gc.set_threshold(young, middle, 100)


def pytest_unconfigure(config: pytest.Config) -> None:
    _SESSION_NAMESPACE.close()


def _selects(config: pytest.Config, path: Path) -> bool:
    """Whether the paths the session runs (the command line's, or else the test paths) hold ``path``."""
    base = config.invocation_params.dir
    named = [(base / arg.partition("::")[0]).resolve() for arg in config.args]
    return any(path == arg or arg in path.parents for arg in named)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    seed = getattr(config.option, "randomly_seed", 0)  # pytest-randomly's, once it has chosen
    kept, left_out = sampled_cases(items, seed if isinstance(seed, int) else 0)
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        items[:] = kept
    rank = {path: k for k, path in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.partition("::")[0], len(rank)))


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    redis = EmbeddedRedis(tmp_path_factory.mktemp("redis"))
    loop = asyncio.new_event_loop()
    # The loop's thread starts the Redis child, so it lives until after stop(): the child's
    # parent-death signal fires when the thread that started it ends.
    thread = threading.Thread(target=loop.run_forever, name="embedded-redis", daemon=True)
    thread.start()
    try:
        yield asyncio.run_coroutine_threadsafe(redis.start(), loop).result(_SETUP_TIMEOUT)
    finally:
        asyncio.run_coroutine_threadsafe(redis.stop(), loop).result(_SETUP_TIMEOUT)
        loop.call_soon_threadsafe(loop.stop)
        thread.join()
        loop.close()


@pytest.fixture(scope="session")
def cluster_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with redis_cluster(tmp_path_factory.mktemp("cluster")) as url:
        yield url


@pytest.fixture(params=["redis", "cluster"])
def redis_or_cluster(request: pytest.FixtureRequest, redis_url: str) -> str:
    return redis_url if request.param == "redis" else str(request.getfixturevalue("cluster_url"))


@pytest_asyncio.fixture(loop_scope="function")
async def store(redis_url: str) -> AsyncIterator[Storage]:
    connected = await Storage.connect(redis_url, prefix=fresh_prefix())
    try:
        yield connected
    finally:
        await connected.close()


@pytest_asyncio.fixture
async def start_server(redis_url: str) -> AsyncIterator[ServerFactory]:
    started: list[RunningServer] = []

    @contextlib.asynccontextmanager
    async def start(**settings: Any) -> AsyncIterator[RunningServer]:
        async with running_server(redis_url, **settings) as running:
            started.append(running)
            yield running

    yield start
    for running in started:
        await running.close_clients()
    # As `python -m server` does at exit: pytest-asyncio cancels what is left only once, and
    # a task that swallowed it would hold the teardown for the whole test timeout.
    await stop_leftovers()


@pytest_asyncio.fixture
async def server(start_server: ServerFactory) -> AsyncIterator[RunningServer]:
    async with start_server() as running:
        yield running


@pytest_asyncio.fixture
async def slow_countdown_server(start_server: ServerFactory) -> AsyncIterator[RunningServer]:
    async with start_server(countdown=LONG_COUNTDOWN) as running:
        yield running
