"""Fixtures for the web client's tests: a real server on a thread of its own, a real Chromium.

``web_server`` (function scope)
    A factory: ``with web_server(deal="24", grace=1.0) as srv:`` runs the tests' in-process
    server (:func:`tests.in_process_server.running_server`: the session Redis, a key prefix of
    its own, a free port, no solver or hint workers and a countdown of
    :data:`tests.polling.COUNTDOWN` unless the settings say otherwise) on an event loop in a
    background thread: the tests themselves are synchronous (Playwright's sync API and
    urllib block), so the server cannot share their thread. ``srv.base`` is its ``http://``
    address, ``srv.call(coro)`` runs a coroutine on the server's loop and waits for it (bots
    and protocol clients live there), ``srv.spawn(coro)`` starts one without waiting.

``web_service`` (function scope)
    A factory of several nodes of one service: ``with web_service(2, quick_match_wait=...) as
    (a, b):`` runs that many :class:`ThreadedServer` s (each on a loop and a port of its own)
    sharing one key prefix of the session Redis, with :data:`NODE_TTL`, as
    tests/cluster/test_service_wide.py runs two nodes in one process. A page opened on
    ``a.base`` talks to node A only (the web client connects to the host that served it).

``browser`` (module scope, over one browser a worker)
    Headless Chromium from the system packages driven by Playwright: its headless shell
    (:data:`CHROMIUMS`), or else the full browser; the tests skip when neither is installed.
    One browser (and one Playwright driver) serves every web module a worker runs, started
    with the first. Playwright's sync API marks its event loop as running in the main thread
    while it is open, which the asyncio tests a worker runs between web modules could not
    share: each module's ``browser`` marks it running for the module and clears the mark
    after it (:class:`ParkedBrowser`).
    ``page`` gives each test a fresh context and page that fail the test on any JavaScript
    error or CSP violation reported before its servers stop (``servers_stopping``), and ask
    for reduced motion; ``moving_page``, the same with cards that slide; ``bob``, a second
    player's, the same in a context of its own whose guest is named Bob.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import threading
from collections.abc import Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.in_process_server import fresh_prefix, running_server

T = TypeVar("T")

#: The browsers the tests run, the first one installed: Chromium's headless shell (Debian's
#: chromium-headless-shell), which Playwright itself runs for headless tests, renders pages as
#: the browser does without its windowing, so at a fraction of the CPU (the web tests are the
#: suite's largest cost); else the full browser. Its software compositing runs in the browser
#: process (``--in-process-gpu``) rather than in a GPU process of its own.
CHROMIUMS = ("/usr/bin/chromium-headless-shell", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--in-process-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Where screenshots go (looked at by people; the tests check them too).
SHOTS = Path(__file__).resolve().parent.parent.parent / "build" / "screenshots"


class ThreadedServer:
    """A race server of :func:`tests.in_process_server.running_server` on an event loop in a
    background thread (``settings`` as that function takes them)."""

    def __init__(self, redis_url: str, **settings: Any) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, name="web-test-server", daemon=True)
        self.thread.start()
        self._started = running_server(redis_url, **settings)
        self.running = self.call(self._started.__aenter__())
        self.server = self.running.server
        self.port = self.server.port
        self.base = f"http://127.0.0.1:{self.port}"
        self.ws = f"ws://127.0.0.1:{self.port}"

    def call(self, coroutine: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def spawn(self, coroutine: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop)

    def close(self) -> None:
        try:
            self.call(self._started.__aexit__(None, None, None))
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


class ServersStopping:
    """When the test's servers begin to stop: what its pages report after that (a
    reconnection refused, say) is the test ending, not a fault of the page."""

    def __init__(self) -> None:
        self.pages: list[Any] = []
        self.begun = False

    def begin(self) -> None:
        """Take what the pages reported before now, then ignore what they report."""
        from playwright.sync_api import Error

        for page in self.pages:
            # Playwright's sync API hands a page's events over only during a call.
            with contextlib.suppress(Error):
                page.evaluate("0")
        self.begun = True


@pytest.fixture
def servers_stopping() -> ServersStopping:
    return ServersStopping()


@pytest.fixture
def web_server(redis_url: str, servers_stopping: ServersStopping) -> Any:
    @contextlib.contextmanager
    def start(**settings: Any) -> Iterator[ThreadedServer]:
        server = ThreadedServer(redis_url, **settings)
        try:
            yield server
        finally:
            servers_stopping.begin()
            server.close()

    return start


#: Seconds of a node's heartbeat and leases in a multi-node service (as tests/cluster's).
NODE_TTL = 2.0


@pytest.fixture
def web_service(redis_url: str, servers_stopping: ServersStopping) -> Any:
    @contextlib.contextmanager
    def start(count: int = 2, **settings: Any) -> Iterator[list[ThreadedServer]]:
        settings = {"node_ttl": NODE_TTL, "prefix": fresh_prefix(), **settings}
        with contextlib.ExitStack() as stack:
            nodes = []
            for _ in range(count):
                node = ThreadedServer(redis_url, **settings)
                stack.callback(node.close)
                nodes.append(node)
            stack.callback(servers_stopping.begin)
            yield nodes

    return start


class ParkedBrowser:
    """A Playwright browser kept for the whole session, with its driver's event loop marked
    running only while a web module uses it (see the module's docstring)."""

    def __init__(self, executable: str) -> None:
        from playwright.sync_api import sync_playwright

        self._driver = sync_playwright().start()
        self.chromium = self._driver.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        self._loop = asyncio.get_running_loop()  # the driver's: marked running between its calls

    def unpark(self) -> Any:
        """The browser, for a module: its loop marked running again, as Playwright expects."""
        asyncio._set_running_loop(self._loop)
        return self.chromium

    def park(self) -> None:
        """No loop running in this thread: asyncio tests may start theirs."""
        asyncio._set_running_loop(None)

    def close(self) -> None:
        self.unpark()
        self.chromium.close()
        self._driver.stop()


@pytest.fixture(scope="session")
def parked_browser() -> Iterator[ParkedBrowser]:
    executable = next((path for path in CHROMIUMS if Path(path).exists()), None)
    if executable is None:
        pytest.skip("Chromium is not installed (apt-get install chromium-headless-shell)")
    held = ParkedBrowser(executable)
    held.park()
    try:
        yield held
    finally:
        held.close()


@pytest.fixture(scope="module")
def browser(parked_browser: ParkedBrowser) -> Iterator[Any]:
    try:
        yield parked_browser.unpark()
    finally:
        parked_browser.park()


def new_context(browser: Any, motion: bool = False) -> Any:
    """A fresh browser context (its own storage), desktop-sized. Its pages ask for reduced
    motion unless ``motion``: the board then redraws without sliding cards, which is what a
    test of anything but the slides needs, and spares the browser drawing the slides' frames
    in a test that plays a line."""
    return browser.new_context(
        viewport={"width": 1100, "height": 900}, reduced_motion="no-preference" if motion else "reduce"
    )


@contextlib.contextmanager
def watched_page(browser: Any, servers_stopping: ServersStopping, motion: bool = False) -> Iterator[Any]:
    """A page in a fresh context (:func:`new_context`), failing the test on any JavaScript
    error or CSP violation reported before the test's servers begin to stop."""
    context = new_context(browser, motion)
    page = context.new_page()
    problems: list[str] = []
    servers_stopping.pages.append(page)

    def problem(text: str) -> None:
        if not servers_stopping.begun:
            problems.append(text)

    page.on("pageerror", lambda error: problem(f"page error: {error}"))
    page.on(
        "console",
        lambda message: problem(f"console {message.type}: {message.text}") if message.type == "error" else None,
    )
    page.problems = problems
    try:
        yield page
    finally:
        context.close()
    assert not problems, problems


@pytest.fixture
def page(browser: Any, servers_stopping: ServersStopping) -> Iterator[Any]:
    with watched_page(browser, servers_stopping) as page:
        yield page


@pytest.fixture
def moving_page(browser: Any, servers_stopping: ServersStopping) -> Iterator[Any]:
    """A :func:`page` whose player asks for no reduced motion: cards slide."""
    with watched_page(browser, servers_stopping, motion=True) as page:
        yield page


@pytest.fixture
def bob(browser: Any, servers_stopping: ServersStopping) -> Iterator[Any]:
    with watched_page(browser, servers_stopping) as other:
        named(other.context, "Bob")
        yield other


def named(context: Any, name: str) -> None:
    """The context's guest plays as ``name`` (the name the page keeps, set before it loads)."""
    context.add_init_script(f"localStorage.setItem('solitaire-race.name', {name!r})")


def shot(page: Any, name: str) -> Path:
    """Save a full-page screenshot as ``build/screenshots/<name>.png``; return its path."""
    SHOTS.mkdir(parents=True, exist_ok=True)
    path = SHOTS / f"{name}.png"
    page.evaluate("() => document.getAnimations().forEach(animation => animation.finish())")
    page.screenshot(path=str(path), full_page=True)
    return path


def register_in_page(page: Any, base: str, name: str, password: str) -> None:
    """Register the page's player as the account ``name`` with the page's own form, and wait
    until the header names the account."""
    page.goto(f"{base}/#/account")
    page.wait_for_selector("#register-form", timeout=15_000)
    page.fill("#register-name", name)
    page.fill("#register-password", password)
    page.fill("#register-confirm", password)
    page.click("#register-form button[type=submit]")
    page.wait_for_selector("#who-name[data-account=true]", timeout=15_000)
