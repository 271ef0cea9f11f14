"""Keys for the terminal UI's tests, without the pilot's pause after each one.

Textual's ``Pilot.press`` waits after every key until the process looks idle, which it
samples with sleeps of its own, so a test that types a password or walks a menu key by key
mostly sleeps. The helpers here queue the same key events (the ones the pilot makes) and then
wait for what the keys do: the text in the box, the highlight moved, the focus moved on. A
test still proves that the keys reach the widget and do what they say.

Keys queued together go to the widget focused when the app reads each one: a key that moves
the focus or opens a screen is sent alone, and the test waits for its effect before the next.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.app import App
from textual.keys import _character_to_key, key_to_character
from textual.pilot import Pilot
from textual.widgets import Input, OptionList

from tests.polling import eventually


def key_event(key: str) -> events.Key:
    """The event the pilot sends for ``key``: one character, or a key's name ("down", "enter")."""
    if len(key) == 1:
        return events.Key(_character_to_key(key), key)
    return events.Key(key, key_to_character(key))


def send_keys(app: App[Any], *keys: str) -> None:
    """Queue ``keys`` for ``app`` as a terminal would: each goes to the widget that has the
    focus when the app reads it, so keys that move the focus must not share one call."""
    for key in keys:
        app.post_message(key_event(key))


async def focus(app: App[Any], box: Input) -> None:
    """Give ``box`` the focus (as a click or Tab would) and wait until it has it."""
    box.focus()
    await eventually(lambda: app.focused is box, what=f"the focus on #{box.id}")


async def type_text(app: App[Any], text: str) -> Input:
    """Type ``text`` at the end of the focused box and wait until the box shows it; return the box."""
    # A box focused by a key or on mount takes the focus a message later.
    box = await eventually(lambda: app.focused if isinstance(app.focused, Input) else None, what="the focus on a box")
    assert box.cursor_position == len(box.value)  # typed at the end, as a user who just arrived there
    shown = box.value + text
    send_keys(app, *text)
    await eventually(lambda: box.value == shown, what=f"{text!r} typed into #{box.id}")
    return box


async def step_highlight(app: App[Any], menu: OptionList, key: str) -> None:
    """Press ``key`` (``up`` or ``down``) for ``menu`` and wait until its highlight moves."""
    before = menu.highlighted
    send_keys(app, key)
    await eventually(lambda: menu.highlighted != before, what=f"the highlight moved by {key}")


async def tab(app: App[Any]) -> None:
    """Press Tab and wait until the focus moves on."""
    before = app.focused
    send_keys(app, "tab")
    await eventually(lambda: app.focused is not before, what="the focus moved by Tab")


async def enter_move(app: App[Any], pilot: Pilot[Any], text: str) -> None:
    """On the race screen: ``:`` to the notation box, ``text`` typed, Enter; the caller waits
    for the server's answer."""
    await pilot.press("colon")
    await eventually(lambda: isinstance(app.focused, Input) and app.focused.id == "notation", what="the notation box")
    await type_text(app, text)
    send_keys(app, "enter")
