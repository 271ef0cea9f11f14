"""The lobby: live public rooms, to spectate (or join one still waiting for racers), a page
at a time as the server pages them, of both games or one."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Label, Static

from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged
from protocol.messages import Joined, JoinRoom, ListRooms, Lobby, ServerMessage, Variant

REFRESH_SECONDS = 3.0
#: What ``g`` steps through: both games, then each.
GAMES: tuple[Variant | None, ...] = (None, "scorpion", "antares")


class LobbyScreen(ClientScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "spectate", "Watch"),
        Binding("j", "join", "Join"),
        # Short labels, and no "r Refresh" (every 3 s by itself): the footer keeps to 80 columns.
        Binding("r", "refresh", "Refresh", show=False),
        Binding("n", "next_page", "Next"),
        Binding("p", "previous_page", "Previous"),
        Binding("g", "other_game", "Game"),
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

    def __init__(self) -> None:
        super().__init__()
        self.game: Variant | None = None
        #: The cursors of the pages shown so far (None: the first page); the last is this one's.
        self.pages: list[str | None] = [None]
        #: The cursor of the page after this one, as the server last said (None: no more).
        self.next_page: str | None = None

    def body(self) -> ComposeResult:
        yield Label("Live public rooms", classes="title")
        yield DataTable(id="rooms", cursor_type="row", zebra_stripes=True)
        yield Static(id="lobby-message", classes="message")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        table = self.query_one("#rooms", DataTable)
        table.add_columns("Room", "Game", "State", "Racers", "Watching", "Names")
        table.focus()
        self.action_refresh()
        self.set_interval(REFRESH_SECONDS, self.action_refresh)

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up:
            self.action_refresh()

    def show_error(self, text: str) -> None:
        message = self.query_one("#lobby-message", Static)
        message.update(text)
        message.add_class("error")

    def action_refresh(self) -> None:
        # Only while this screen is showing (not under a room being watched from it).
        if self.is_current and self.client is not None and self.client.connected.is_set():
            after, game = self.pages[-1], self.game
            self.request(
                lambda i: ListRooms(id=i, after=after, variant=game), lambda reply: self._show(reply, after, game)
            )

    def action_next_page(self) -> None:
        if self.next_page is not None:
            self.pages.append(self.next_page)
            self.next_page = None
            self.action_refresh()

    def action_previous_page(self) -> None:
        if len(self.pages) > 1:
            self.pages.pop()
            self.action_refresh()

    def action_other_game(self) -> None:
        self.game = GAMES[(GAMES.index(self.game) + 1) % len(GAMES)]
        self.pages, self.next_page = [None], None
        self.action_refresh()

    def _show(self, reply: ServerMessage, after: str | None, game: Variant | None) -> None:
        if not isinstance(reply, Lobby) or (after, game) != (self.pages[-1], self.game):
            return  # an answer for a page no longer asked for
        self.next_page = reply.next
        table = self.query_one("#rooms", DataTable)
        selected = self._selected()
        table.clear()
        for room in reply.rooms:
            racers = f"{len(room.racers)}/{room.max_racers}"
            table.add_row(
                room.code, room.variant, room.state, racers, str(room.spectators), ", ".join(room.racers), key=room.code
            )
        if selected is not None and selected in {room.code for room in reply.rooms}:
            table.move_cursor(row=table.get_row_index(selected))
        message = self.query_one("#lobby-message", Static)
        message.remove_class("error")
        games = "both games" if self.game is None else f"{self.game.capitalize()} only"
        where = f"Page {len(self.pages)} · {games} · g: game"
        if len(self.pages) > 1:
            where += " · p: previous page"
        if reply.next is not None:
            where += " · n: next page"
        message.update(
            f"No public room here right now: create one, or start bots with `python -m client bot`.\n{where}"
            if not reply.rooms
            else f"Enter: watch the room · j: join it (while it waits for racers)\n{where}"
        )

    def _selected(self) -> str | None:
        table = self.query_one("#rooms", DataTable)
        if table.row_count == 0:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key.value
        return None if key is None else str(key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_spectate()

    def action_spectate(self) -> None:
        code = self._selected()
        if code is not None:
            self.navigate(to.Spectate(code))

    def action_join(self) -> None:
        code = self._selected()
        if code is None:
            return

        def joined(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.navigate(to.Game(reply.room), replace=True)

        self.request(lambda i: JoinRoom(id=i, room=code), joined, what=f"cannot join {code}")
