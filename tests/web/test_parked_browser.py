"""The worker's one browser is parked between web modules: asyncio runs in between, and the
browser serves the next module (this fails when Playwright or asyncio change how the running
loop is marked, which :class:`tests.web.conftest.ParkedBrowser` relies on)."""

from __future__ import annotations

import asyncio

from tests.web.conftest import ParkedBrowser


def test_asyncio_runs_while_the_browser_is_parked_and_the_browser_serves_after(parked_browser: ParkedBrowser) -> None:
    assert asyncio.run(asyncio.sleep(0, result="ran")) == "ran"
    chromium = parked_browser.unpark()
    try:
        context = chromium.new_context()
        page = context.new_page()
        page.set_content("<p>dealt</p>")
        assert page.text_content("p") == "dealt"
        context.close()
    finally:
        parked_browser.park()
    assert asyncio.run(asyncio.sleep(0, result="again")) == "again"
