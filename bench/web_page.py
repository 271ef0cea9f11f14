"""The web client's weight and first render, in headless Chromium.

Run::

    python -m bench.web_page --loads 5

Starts a server (its own embedded Redis in a temporary folder, no solver), opens a room
with a bot racing in it, then loads two pages ``--loads`` times each in a fresh browser
context (empty cache): the lobby (``/``) and the watch page of that room. For each load it
prints the bytes transferred (the page and every resource, headers included, from the
Resource Timing API), the first contentful paint, and when the page's own content was first
drawn (the lobby's table filled, or the first card of the watched board), from the start of
the navigation. Then the medians. Needs Chromium, the full browser people use
(``/usr/bin/chromium``; ``--chromium`` names another build).
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import threading
from pathlib import Path
from typing import Any

from playwright.sync_api import sync_playwright

from client.lib.bot import Bot
from client.lib.connection import RaceClient
from protocol.messages import CreateRoom, Joined, RoomOptions
from server.app import RaceServer
from server.config import Config

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]

#: Sums what the navigation and every resource transferred, and reads the paint timings.
MEASURE = """() => {
  const nav = performance.getEntriesByType('navigation')[0];
  const resources = performance.getEntriesByType('resource');
  const paint = performance.getEntriesByName('first-contentful-paint')[0];
  return {
    bytes: nav.transferSize + resources.reduce((sum, r) => sum + r.transferSize, 0),
    body: nav.encodedBodySize + resources.reduce((sum, r) => sum + r.encodedBodySize, 0),
    files: 1 + resources.length,
    fcp: paint ? paint.startTime : null,
    content: window.__drawnAt,
  };
}"""

#: Notes (in the page) when the selector first matches, in ms since the navigation started.
WATCH_FOR = """selector => new Promise(resolve => {
  const seen = () => document.querySelector(selector);
  if (seen()) { window.__drawnAt = performance.now(); resolve(); return; }
  new MutationObserver((_, observer) => {
    if (seen()) { window.__drawnAt = performance.now(); observer.disconnect(); resolve(); }
  }).observe(document, {childList: true, subtree: true});
})"""


def load(browser: Any, url: str, selector: str) -> dict[str, Any]:
    context = browser.new_context(viewport={"width": 1100, "height": 900})
    try:
        page = context.new_page()
        # Installed before any page script runs, so the first matching drawing is caught.
        page.add_init_script(f"window.__watch = ({WATCH_FOR})({selector!r});")
        page.goto(url)
        page.wait_for_function("() => window.__drawnAt !== undefined", timeout=20_000)
        return dict(page.evaluate(MEASURE))
    finally:
        context.close()


def report(name: str, runs: list[dict[str, Any]]) -> None:
    for run in runs:
        timing = f"FCP {run['fcp']:.0f} ms; drawn {run['content']:.0f} ms"
        print(f"  {name}: {run['bytes']:,} bytes in {run['files']} files; {timing}")
    print(
        f"{name}: median {statistics.median(r['bytes'] for r in runs):,.0f} bytes transferred "
        f"({statistics.median(r['body'] for r in runs):,.0f} of bodies), "
        f"first contentful paint {statistics.median(r['fcp'] for r in runs):.0f} ms, "
        f"content drawn {statistics.median(r['content'] for r in runs):.0f} ms"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--loads", type=int, default=5, help="loads of each page")
    parser.add_argument("--chromium", default="/usr/bin/chromium", help="the browser's executable")
    args = parser.parse_args()
    loop = asyncio.new_event_loop()
    with tempfile.TemporaryDirectory() as data:
        server = RaceServer(Config(port=0, data_dir=Path(data), solver_workers=0))
        loop.run_until_complete(server.start())
        thread = threading.Thread(target=loop.run_forever, daemon=True)
        thread.start()
        try:
            base = f"http://127.0.0.1:{server.port}"

            playing: list[asyncio.Future[Any]] = []

            async def racing_room() -> str:
                client = await RaceClient.connect(f"ws://127.0.0.1:{server.port}", "Bench", reconnect=False)
                options = RoomOptions(max_racers=1, deal="24", spectator_delay=0, public=True)
                joined = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
                assert isinstance(joined, Joined)
                bot = Bot(client, joined.room, delay=1.0, max_moves=400)
                await bot.ready()
                playing.append(asyncio.ensure_future(bot.play()))
                await client.wait_room(joined.room, lambda m: m.board(0) is not None)
                return joined.room

            code = asyncio.run_coroutine_threadsafe(racing_room(), loop).result(30)
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=args.chromium, args=CHROMIUM_ARGS)
                load(browser, base + "/", "#lobby-rooms tr")  # warm the server's file reads
                report("lobby", [load(browser, base + "/", "#lobby-rooms tr[data-code]") for _ in range(args.loads)])
                watch = f"{base}/#/watch/{code}"
                report("watch", [load(browser, watch, ".racer-panel .card.up") for _ in range(args.loads)])
                browser.close()
        finally:
            for task in playing:
                loop.call_soon_threadsafe(task.cancel)
            asyncio.run_coroutine_threadsafe(server.stop(), loop).result(30)
            loop.call_soon_threadsafe(loop.stop)
            thread.join(10)


if __name__ == "__main__":
    main()
