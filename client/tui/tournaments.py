"""What the tournament screens (client/tui/arenas.py, client/tui/brackets.py) share: a screen
asked for again every few seconds while it shows, when the player comes back to it and when the
connection is back, whose clock moves each second, with one message line; and the list of a
kind of tournament, one row each, Enter opening its page.

Textual calls a handler of every class on a screen's MRO (this one's ``on_mount`` as well as a
subclass's), so the screens here do not define those handlers again: they fill in the hooks.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import ClassVar, Final, Generic, Protocol, TypeVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Label, Static

from client.tui.base import ClientScreen, ConnectionChanged
from client.tui.navigation import Route
from protocol.messages import ClientMessage, ServerMessage

#: The keys a tournament's screens end on: back to the screen under it.
BACK: Final[list[BindingType]] = [
    Binding("q", "app.pop_screen", "Back"),
    Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
]

#: The keys a tournament's page ends on: r, in its hint (the footer keeps to 80 columns), and back.
PAGE_KEYS: Final[list[BindingType]] = [Binding("r", "refresh", "Refresh", show=False), *BACK]


def now_ms() -> float:
    return time.time() * 1000


class TournamentScreen(ClientScreen):
    """A screen that shows the server's word on a tournament: asked for (``action_refresh``)
    on mounting, every ``REFRESH_SECONDS`` while no screen covers it, when the player comes back
    to it and when the connection is back; ``tick`` runs each second (the times shown move);
    what the player is told goes to the Static ``#MESSAGE``; ``FOCUS`` (a selector) takes the
    focus on mounting."""

    REFRESH_SECONDS: ClassVar[float]
    MESSAGE: ClassVar[str]
    FOCUS: ClassVar[str | None] = None

    def on_mount(self) -> None:
        super().on_mount()
        if self.FOCUS is not None:
            self.query_one(self.FOCUS).focus()
        self.action_refresh()
        self.set_interval(self.REFRESH_SECONDS, self._refresh_if_shown)
        self.set_interval(1.0, self.tick)

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.action_refresh()
        self.resumed()

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        self.connection_changed(event.up)

    def _refresh_if_shown(self) -> None:
        if self.app.screen is self:
            self.action_refresh()

    def action_refresh(self) -> None:
        """Ask the server again (in a worker) and show its answer."""
        raise NotImplementedError

    def tick(self) -> None:
        """Show what moves with the clock."""

    def resumed(self) -> None:
        """The player came back to this screen (it is asked for again besides)."""

    def connection_changed(self, up: bool) -> None:
        """The connection dropped (``up`` False) or is back: then the screen is asked for again."""
        if up:
            self.action_refresh()

    def say(self, text: str, error: bool = False) -> None:
        message = self.query_one(f"#{self.MESSAGE}", Static)
        message.update(escape(text))
        message.set_class(error, "error")

    def show_error(self, text: str) -> None:
        self.say(text, error=True)


class Listed(Protocol):
    """A tournament as a list has it: its id names its page."""

    @property
    def id(self) -> str: ...


T = TypeVar("T", bound=Listed)


class TournamentList(TournamentScreen, Generic[T]):
    """The tournaments of one kind in the list's order, one row each (``cells``), or ``EMPTY``
    when there is none; Enter opens the highlighted one's page. Its widgets are named after
    ``KIND``: the table ``#KIND`` and the guide ``#KIND-guide``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("r", "refresh", "Refresh"), *BACK]

    DEFAULT_CSS = """
    TournamentList DataTable { height: auto; max-height: 12; margin: 0 1; }
    TournamentList .guide { padding: 0 1; height: auto; color: $text-muted; margin: 0 0 1 0; }
    """

    KIND: ClassVar[str]
    HEADING: ClassVar[str]
    GUIDE: ClassVar[str]
    HINT: ClassVar[str]
    EMPTY: ClassVar[str]
    COLUMNS: ClassVar[tuple[str, ...]]

    def __init__(self) -> None:
        super().__init__()
        self.listed: list[T] = []

    def body(self) -> ComposeResult:
        yield Label(self.HEADING, classes="title")
        yield Static(self.GUIDE, id=f"{self.KIND}-guide", classes="guide")
        yield DataTable(id=self.KIND, cursor_type="row")
        yield Static(id=self.MESSAGE, classes="message")
        yield Static(self.HINT, classes="hint")
        yield Footer()

    def ask(self, request_id: int) -> ClientMessage:
        """The request for the list."""
        raise NotImplementedError

    def read(self, reply: ServerMessage) -> Sequence[T] | None:
        """The tournaments of the reply to :meth:`ask` in the list's order (None: another reply)."""
        raise NotImplementedError

    def cells(self, info: T, now: float) -> tuple[str, ...]:
        """``info``'s row, one cell per column."""
        raise NotImplementedError

    def page(self, tournament: str) -> Route:
        """The route to tournament ``tournament``'s page."""
        raise NotImplementedError

    def action_refresh(self) -> None:
        def shown(reply: ServerMessage) -> None:
            listed = self.read(reply)
            if listed is not None:
                self.listed = list(listed)
                self.draw()

        self.request(self.ask, shown, self.KIND)

    def tick(self) -> None:
        self.draw()  # the time each row shows moves

    def draw(self) -> None:
        if not self.is_mounted:
            return
        table = self.query_one(f"#{self.KIND}", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        table.add_columns(*self.COLUMNS)
        now = now_ms()
        for info in self.listed:
            table.add_row(*self.cells(info, now), key=info.id)
        if self.listed:
            table.move_cursor(row=max(0, min(row, len(self.listed) - 1)))
        message = self.query_one(f"#{self.MESSAGE}", Static)
        if not message.has_class("error"):
            message.update("" if self.listed else self.EMPTY)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        if event.row_key.value is not None:
            self.navigate(self.page(event.row_key.value))
