"""Bracket tournaments (PROTOCOL.md, "Bracket tournaments"; ``brackets``, ``join_bracket``,
``leave_bracket``, ``play_bracket``, ``bracket``): the list of brackets, and a bracket's page.

On a bracket's page ``j`` registers and ``l`` unregisters before the start; once a round you
are in opens, ``p`` plays your run of it (a one-racer room on the round's deal, its countdown
started at once). The page shows each round's players and, once it closed, its places with
who went on, then the final standings. It asks the server again every few seconds while it
shows, and when the player comes back to it from their run.
"""

from __future__ import annotations

import time
from typing import ClassVar, Final

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Label, Static

from client.render.brackets import (
    BRACKET_GUIDE,
    heading,
    listed,
    open_round,
    round_lines,
    standings_lines,
    state_text,
    you_text,
)
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged
from protocol.messages import (
    Ack,
    AskBracket,
    BracketInfo,
    Brackets,
    BracketView,
    JoinBracket,
    Joined,
    LeaveBracket,
    ListBrackets,
    PlayBracket,
    ServerMessage,
)

#: Seconds between two looks at a bracket while its page shows, and at the list.
REFRESH_SECONDS: Final = 3.0
LIST_REFRESH_SECONDS: Final = 10.0


def now_ms() -> float:
    return time.time() * 1000


class BracketsScreen(ClientScreen):
    """The brackets being played, open to registration, and over in the last day; Enter opens one."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Refresh"),
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    BracketsScreen DataTable { height: auto; max-height: 12; margin: 0 1; }
    #brackets-guide { padding: 0 1; height: auto; color: $text-muted; margin: 0 0 1 0; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.brackets: list[BracketInfo] = []

    def body(self) -> ComposeResult:
        yield Label("Bracket tournaments", classes="title")
        yield Static(BRACKET_GUIDE, id="brackets-guide")
        yield DataTable(id="brackets", cursor_type="row")
        yield Static(id="brackets-message", classes="message")
        yield Static("Enter: the bracket's page, to register and play your rounds · r: refresh", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#brackets", DataTable).focus()
        self.action_refresh()
        self.set_interval(1.0, self.draw)  # the time to the start moves
        self.set_interval(LIST_REFRESH_SECONDS, self._refresh_if_shown)

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.action_refresh()

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up:
            self.action_refresh()

    def show_error(self, text: str) -> None:
        message = self.query_one("#brackets-message", Static)
        message.update(escape(text))
        message.set_class(bool(text), "error")

    def _refresh_if_shown(self) -> None:
        if self.app.screen is self:
            self.action_refresh()

    def action_refresh(self) -> None:
        def shown(reply: ServerMessage) -> None:
            if isinstance(reply, Brackets):
                self.brackets = listed(reply.brackets)
                self.draw()

        self.request(lambda i: ListBrackets(id=i), shown, "brackets")

    def draw(self) -> None:
        if not self.is_mounted:
            return
        table = self.query_one("#brackets", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        table.add_columns("Bracket", "Game", "Where it stands", "Players", "You")
        now = now_ms()
        for info in self.brackets:
            players = f"{info.players}/{info.size}"
            you = "registered" if info.registered else ""
            table.add_row(info.name, info.variant.capitalize(), state_text(info, now), players, you, key=info.id)
        if self.brackets:
            table.move_cursor(row=max(0, min(row, len(self.brackets) - 1)))
        message = self.query_one("#brackets-message", Static)
        if not message.has_class("error"):
            message.update("" if self.brackets else "No bracket is scheduled: an operator schedules them.")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.navigate(to.Bracket(event.row_key.value))


class BracketScreen(ClientScreen):
    """Bracket ``bracket``'s page: register or unregister, play your round, its rounds and standings."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "register", "Register"),
        Binding("l", "unregister", "Unregister"),
        Binding("p", "play", "Play your round"),
        Binding("r", "refresh", "Refresh", show=False),  # in the hint: the footer keeps to 80 columns
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    #bracket-when { padding: 0 1; height: auto; }
    #bracket-status { padding: 0 1; height: auto; text-style: bold; margin: 0 0 1 0; }
    #bracket-scroll { height: 1fr; padding: 0 1; }
    #bracket-standings { margin: 1 0 0 0; }
    """

    def __init__(self, bracket: str) -> None:
        super().__init__()
        self.bracket = bracket
        self.reply: BracketView | None = None

    def body(self) -> ComposeResult:
        yield Label(f"Bracket {self.bracket}", id="bracket-title", classes="title")
        yield Static(id="bracket-when")
        yield Static(id="bracket-status")
        with VerticalScroll(id="bracket-scroll"):
            yield Static(id="bracket-rounds")
            yield Static(id="bracket-standings")
        yield Static(id="bracket-message", classes="message")
        yield Static("j: register · l: unregister · p: play your round · r: refresh · q: back", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.action_refresh()
        self.set_interval(REFRESH_SECONDS, self._refresh_if_shown)
        self.set_interval(1.0, self.show_status)  # the time left to start a run moves

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.action_refresh()  # back from a run: it may be in, and the round closed

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up:
            self.action_refresh()

    def _refresh_if_shown(self) -> None:
        if self.app.screen is self:
            self.action_refresh()

    def action_refresh(self) -> None:
        code = self.bracket

        def shown(reply: ServerMessage) -> None:
            if isinstance(reply, BracketView):
                self.show(reply)

        self.request(lambda i: AskBracket(id=i, bracket=code), shown, "bracket")

    def show(self, reply: BracketView) -> None:
        previous, self.reply = self.reply, reply
        if previous is not None and previous.bracket.state != reply.bracket.state:
            self.say("")  # what was said of the registration no longer holds
        client = self.client
        me = None if client is None else client.name
        now = now_ms()
        info = reply.bracket
        self.query_one("#bracket-title", Label).update(escape(f"Bracket: {info.name}"))
        self.query_one("#bracket-when", Static).update(escape(f"{heading(info)} · {state_text(info, now)}"))
        rounds = [line for n in range(len(reply.rounds)) for line in [*round_lines(reply, n, me, now), ""]]
        if not rounds:
            rounds = ["No round yet: round 1 opens at the start."] if info.state == "registering" else []
        self.query_one("#bracket-rounds", Static).update(escape("\n".join(rounds).rstrip()))
        standings = standings_lines(reply, me)
        text = "\n".join(["[b]Final standings[/b]", *(escape(line) for line in standings)]) if standings else ""
        self.query_one("#bracket-standings", Static).update(text)
        self.show_status()
        self.refresh_bindings()

    def show_status(self) -> None:
        """What the player can do here now, with its key."""
        reply = self.reply
        if reply is None:
            return
        text = you_text(reply, now_ms())
        info = reply.bracket
        if info.state == "registering":
            text += " l: unregister." if info.registered else (" j: register." if info.players < info.size else "")
        round_ = open_round(reply)
        if round_ is not None and round_.you == "to-play":
            text += " p: play it."
        self.query_one("#bracket-status", Static).update(escape(text))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        reply = self.reply
        if action not in ("register", "unregister", "play"):
            return True
        if reply is None:
            return False  # nothing to act on before the bracket is shown
        info = reply.bracket
        if action == "register":
            return info.state == "registering" and not info.registered
        if action == "unregister":
            return info.state == "registering" and info.registered
        round_ = open_round(reply)
        return round_ is not None and round_.you == "to-play"

    def say(self, text: str, error: bool = False) -> None:
        message = self.query_one("#bracket-message", Static)
        message.update(escape(text))
        message.set_class(error, "error")

    def show_error(self, text: str) -> None:
        self.say(text, error=True)

    def action_register(self) -> None:
        code = self.bracket

        def done(reply: ServerMessage) -> None:
            if isinstance(reply, Ack):
                self.say("You are registered.")
                self.action_refresh()

        self.request(lambda i: JoinBracket(id=i, bracket=code), done, "register")

    def action_unregister(self) -> None:
        code = self.bracket

        def done(reply: ServerMessage) -> None:
            if isinstance(reply, Ack):
                self.say("You are no longer registered.")
                self.action_refresh()

        self.request(lambda i: LeaveBracket(id=i, bracket=code), done, "unregister")

    def action_play(self) -> None:
        code = self.bracket

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.say("")
                self.navigate(to.Game(reply.room, seat=reply.seat))

        self.say("Opening your run…")
        self.request(lambda i: PlayBracket(id=i, bracket=code), opened, "play your round")
