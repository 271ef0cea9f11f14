"""Shared fixtures for tests that need Redis: a real server process, never a mock.

``redis_url`` (session scope, plain fixture)
    The URL (``unix://...``) of ONE :class:`server.storage.embedded.EmbeddedRedis` started in a
    temporary directory for the whole test session and stopped at its end. It runs on an
    event loop of its own in a background thread, so it serves sync tests, async tests on any
    loop scope and subprocesses (pass it as REDIS_URL) alike, and its supervisor keeps
    working between tests. Tests share this server: give every key a prefix of your own (the
    ``store`` fixture does), and do not stop the server or FLUSHALL it; a test that needs to
    kill or restart Redis starts a private :class:`EmbeddedRedis` in its ``tmp_path``.

``store`` (function scope, async)
    A :class:`server.storage.connection.Storage` connected to ``redis_url`` with a key prefix unique to the
    test (``test:<12 hex digits>:``, see ``store.prefix``), so tests never see each other's
    keys; closed after the test. A redis.asyncio client belongs to the event loop that made
    it, and this fixture runs on the function-scoped loop: use it from tests on that loop
    (``@pytest.mark.asyncio`` without ``loop_scope``). Tests on a wider loop connect a Storage
    of their own with ``await Storage.connect(redis_url, prefix=...)``.
"""

from __future__ import annotations

import asyncio
import threading
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest
import pytest_asyncio

from server.storage.connection import Storage
from server.storage.embedded import EmbeddedRedis

_SETUP_TIMEOUT = 60.0


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


@pytest_asyncio.fixture(loop_scope="function")
async def store(redis_url: str) -> AsyncIterator[Storage]:
    connected = await Storage.connect(redis_url, prefix=f"test:{uuid.uuid4().hex[:12]}:")
    try:
        yield connected
    finally:
        await connected.close()
