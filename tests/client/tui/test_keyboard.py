"""The tests' keyboard (tests/client/tui/keyboard.py) sends the very events Textual's pilot
sends: it borrows Textual's private ``_character_to_key``, so this fails when that changes."""

from __future__ import annotations

import pytest
from textual import events
from textual.app import App

from tests.client.tui.keyboard import key_event
from tests.polling import eventually

pytestmark = pytest.mark.asyncio

KEYS = [*"aZ9 >:.-", "enter", "down", "tab", "escape"]


class Recorder(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.keys: list[tuple[str, str | None]] = []

    def on_key(self, event: events.Key) -> None:
        self.keys.append((event.key, event.character))


async def test_each_key_is_the_event_the_pilot_sends() -> None:
    app = Recorder()
    async with app.run_test() as pilot:
        await pilot.press(*KEYS)
        pressed, app.keys = app.keys, []
        for key in KEYS:
            app.post_message(key_event(key))
        await eventually(lambda: len(app.keys) == len(KEYS), what="the keys read")
    assert app.keys == pressed
    assert len(pressed) == len(KEYS)
