"""Race a bot now: choose the game and the bot's level; the client opens a private room
for two, starts a bot in this process that joins it (and stays for rematches), and
readies the player, so the countdown starts at once."""

from __future__ import annotations

from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from client.lib.bot import LEVELS, Level, level_text
from client.render.standings import GAMES
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged
from protocol.messages import CreateRoom, Joined, Ready, RoomOptions, ServerMessage, Variant


class BotRaceScreen(ClientScreen):
    """Choose a game and a level (both given: start as soon as the client is connected)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back", priority=True)]

    DEFAULT_CSS = """
    BotRaceScreen OptionList { height: auto; margin: 1 2; }
    """

    def __init__(self, variant: Variant | None = None, level: Level | None = None) -> None:
        super().__init__()
        self.choice = None if variant is None or level is None else (variant, level)
        self.started = False

    def body(self) -> ComposeResult:
        yield Label("Race a bot", classes="title")
        yield Static("Which game, and how strong a bot? (Enter to start; rules: ? then s or a)", classes="hint")
        yield OptionList(
            *(
                Option(f"{variant.capitalize():<9} {level_text(level)}", id=f"{variant}:{level}")
                for variant in GAMES
                for level in LEVELS
            ),
            id="bot-choices",
        )
        yield Static(id="bot-message", classes="message")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        choices = self.query_one("#bot-choices", OptionList)
        # The first line (Scorpion, easy) to start with: Down goes to the next level up.
        choices.highlighted = 0
        choices.focus()
        if self.choice is not None:
            self.start(*self.choice)

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up and self.choice is not None and not self.started:
            self.start(*self.choice)

    def show_error(self, text: str) -> None:
        message = self.query_one("#bot-message", Static)
        message.update(text)
        message.add_class("error")

    @on(OptionList.OptionSelected, "#bot-choices")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        variant, _, level = (event.option.id or "scorpion:medium").partition(":")
        self.start("antares" if variant == "antares" else "scorpion", next(x for x in LEVELS if x == level))

    def start(self, variant: Variant, level: Level) -> None:
        """Open the room, call the bot in, ready the player and show the race."""
        self.choice = (variant, level)
        if self.client is None:
            self.query_one("#bot-message", Static).update("Connecting to the server…")
            return
        self.started = True
        self.query_one("#bot-message", Static).update(f"Opening a room for you and a {level} bot…")
        app = self.race_app

        def opened(reply: ServerMessage) -> None:
            if not isinstance(reply, Joined):
                return
            code = reply.room
            app.start_bot(code, level)
            self.navigate(to.Game(code, seat=reply.seat), replace=True)
            client = app.client
            if client is not None:
                self.app.run_worker(client.request(lambda i: Ready(id=i, room=code)), exit_on_error=False)

        options = RoomOptions(max_racers=2, public=False)
        self.request(lambda i: CreateRoom(id=i, variant=variant, options=options), opened, "open a room")
