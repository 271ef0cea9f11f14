"""The help screen lists every key the UI binds."""

from __future__ import annotations

from textual.binding import Binding
from textual.dom import DOMNode

from client.render.keys import KEYS
from client.tui.app import RaceApp
from client.tui.base import ClientScreen
from client.tui.widgets import BoardView

#: How the help screen writes Textual's key names.
SHOWN = {
    "question_mark": "?",
    "f1": "F1",
    "f2": "F2",
    "escape": "Esc",
    "ctrl+q": "Ctrl+Q",
    "left": "←",
    "right": "→",
    "up": "↑",
    "down": "↓",
    "enter": "Enter",
    "space": "Space",
    "colon": ":",
    "slash": "/",
    "tab": "Tab",
    "shift+tab": "Shift+Tab",
    "home": "Home",
    "end": "End",
    **{str(n): "1" for n in range(1, 10)},  # listed as "1 … 9"
}


def all_screens() -> list[type[DOMNode]]:
    found: list[type[DOMNode]] = []
    todo: list[type[ClientScreen]] = [ClientScreen]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo.extend(cls.__subclasses__())
    return [*found, BoardView, RaceApp]


def test_the_help_lists_every_key_bound_on_every_screen() -> None:
    listed = {token for _, keys in KEYS for key, _ in keys for token in key.split()}
    missing = []
    for cls in all_screens():
        for binding in cls.BINDINGS:
            assert isinstance(binding, Binding)
            for key in binding.key.split(","):
                if SHOWN.get(key, key) not in listed:
                    missing.append(f"{cls.__name__}: {key}")
    assert missing == []
