"""Quick race: choose a game, wait in the server's line until it pairs you with other
players, then the room opens with its countdown already running.

The server drops a disconnected player from the line, so after a reconnection the
screen queues again by itself. Esc while waiting leaves the line (``leave_queue``).
"""

from __future__ import annotations

import asyncio
import time
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from client.lib.connection import QueueTicket, ServerError
from client.render.describe import duration
from client.render.standings import GAMES
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged, explain
from protocol.messages import Joined, Variant


class QuickScreen(ClientScreen):
    """Pick a game, then wait for a race to form."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel / back", priority=True)]

    DEFAULT_CSS = """
    QuickScreen OptionList { height: auto; margin: 1 2; }
    #quick-status { padding: 1 2; text-style: bold; }
    """

    def __init__(self) -> None:
        super().__init__()
        #: The game being waited for (None: choosing); kept across a dropped connection.
        self.waiting: Variant | None = None
        self.ticket: QueueTicket | None = None
        self.since = 0.0

    def body(self) -> ComposeResult:
        yield Label("Quick race", classes="title")
        yield Static("Race the next players who are waiting. Which game?", id="quick-guide", classes="hint")
        yield OptionList(*(Option(variant.capitalize(), id=variant) for variant in GAMES), id="games")
        yield Static(id="quick-status")
        yield Static(id="quick-message", classes="message")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#quick-status", Static).display = False
        self.query_one("#games", OptionList).focus()
        self.set_interval(1.0, self._show_waiting)

    def show_error(self, text: str) -> None:
        message = self.query_one("#quick-message", Static)
        message.update(text)
        message.set_class(bool(text), "error")

    @on(OptionList.OptionSelected, "#games")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        self.wait_for("antares" if event.option.id == "antares" else "scorpion")

    def wait_for(self, variant: Variant) -> None:
        """Join the line of ``variant`` and go to the room once a race forms."""
        self.waiting, self.since = variant, time.monotonic()
        self.show_error("")
        self.query_one("#games", OptionList).display = False
        self.query_one("#quick-guide", Static).display = False
        self.query_one("#quick-status", Static).display = True
        self._show_waiting()
        self.run_worker(self._queue(variant), group="queue", exclusive=True, exit_on_error=False)

    async def _queue(self, variant: Variant) -> None:
        client = self.client
        if client is None:
            self.show_error("not connected to the server yet: waiting will start once it is")
            return
        try:
            ticket = await client.quick_match(variant)
        except (ServerError, ConnectionError, TimeoutError) as error:
            self.show_error(explain(error))
            self._choose_again()
            return
        if self.waiting != variant:  # cancelled while the server was putting us in the line
            self._leave(ticket)
            return
        self.ticket = ticket
        try:
            # Shielded: this worker stopping must not look like a race that formed, to leave_queue.
            joined = await asyncio.shield(ticket.joined)
        except ConnectionError:
            # The server dropped us from the line; on_connection_changed queues us again.
            self.ticket = None
            self.show_error("The connection dropped, and with it your place in the line: waiting again once back…")
            return
        self.ticket = None
        if self.waiting is None:
            self.app.notify("A race formed just before you cancelled: here is its room (q leaves it).")
        self._enter(joined)

    def _enter(self, joined: Joined) -> None:
        self.waiting = None
        self.navigate(to.Game(joined.room, seat=joined.seat), replace=True)

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up and self.waiting is not None and self.ticket is None:
            self.wait_for(self.waiting)

    def _show_waiting(self) -> None:
        if self.waiting is None:
            return
        waited = duration((time.monotonic() - self.since) * 1000).split(".")[0]
        self.query_one("#quick-status", Static).update(
            f"{self.waiting.capitalize()}: waiting for players… (Esc to cancel)\n\n[dim]in the line for {waited}[/dim]"
        )

    def _choose_again(self) -> None:
        self.waiting = None
        self.query_one("#quick-status", Static).display = False
        self.query_one("#quick-guide", Static).display = True
        games = self.query_one("#games", OptionList)
        games.display = True
        games.focus()

    def action_cancel(self) -> None:
        """While waiting: leave the line. Otherwise: back to the home menu."""
        if self.waiting is None:
            self.app.pop_screen()
            return
        ticket, self.ticket = self.ticket, None
        self._choose_again()
        if ticket is not None:  # otherwise _queue leaves the line once it is in it
            self._leave(ticket)

    def _leave(self, ticket: QueueTicket) -> None:
        """Tell the server we leave the line (if a race formed first, _queue opens its room)."""

        async def leave() -> None:
            client = self.client
            if client is None:
                return
            try:
                if await client.leave_queue(ticket):
                    self.query_one("#quick-message", Static).update("You left the line.")
            except (ServerError, ConnectionError, TimeoutError) as error:
                self.show_error(f"leaving the line: {explain(error)}")

        self.run_worker(leave(), exit_on_error=False)
