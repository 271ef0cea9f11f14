"""The help screen (every key, screen by screen) and the rules screen of each game."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Label, Static

from client.render.keys import help_text
from client.render.rules import RACE_NOTE, RULES
from client.render.standings import GAMES
from client.tui import navigation as to
from client.tui.base import ClientScreen
from protocol.messages import Variant


class HelpScreen(ClientScreen):
    """Every key of the client. ``s``/``a`` open the rules of Scorpion/Antares."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "rules('scorpion')", "Scorpion rules"),
        Binding("a", "rules('antares')", "Antares rules"),
        Binding("q", "app.pop_screen", "Close"),
        Binding("escape", "app.pop_screen", "Close", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    HelpScreen VerticalScroll { padding: 0 1; }
    """

    def body(self) -> ComposeResult:
        yield Label("Keys", classes="title")
        with VerticalScroll(id="help-scroll"):
            yield Static(help_text(), id="help-text")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#help-scroll", VerticalScroll).focus()

    def action_help(self) -> None:
        """Already here."""

    def action_rules(self, variant: str) -> None:
        self.navigate(to.Rules("antares" if variant == "antares" else "scorpion"), replace=True)


class RulesScreen(ClientScreen):
    """How to play ``variant``, with a worked example; ``g`` shows the other game."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "other_game", "Other game"),
        Binding("q", "app.pop_screen", "Close"),
        Binding("escape", "app.pop_screen", "Close", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    RulesScreen VerticalScroll { padding: 0 1; }
    """

    def __init__(self, variant: Variant) -> None:
        super().__init__()
        self.variant: Variant = variant

    def body(self) -> ComposeResult:
        yield Label(id="rules-title", classes="title")
        with VerticalScroll(id="rules-scroll"):
            yield Static(id="rules-text")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.show_rules()
        self.query_one("#rules-scroll", VerticalScroll).focus()

    def show_rules(self) -> None:
        self.query_one("#rules-title", Label).update(f"How to play {self.variant.capitalize()}")
        self.query_one("#rules-text", Static).update(f"{RULES[self.variant]}\n{RACE_NOTE}")
        self.query_one("#rules-scroll", VerticalScroll).scroll_home(animate=False)

    def action_other_game(self) -> None:
        self.variant = GAMES[(GAMES.index(self.variant) + 1) % len(GAMES)]
        self.show_rules()
