"""The lobby: live public rooms, to spectate (or join one still waiting for racers)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Label, Static

from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged
from protocol.messages import Joined, JoinRoom, ListRooms, Lobby, ServerMessage

REFRESH_SECONDS = 3.0


class LobbyScreen(ClientScreen):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "spectate", "Watch"),
        Binding("j", "join", "Join"),
        Binding("r", "refresh", "Refresh"),
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

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
            self.request(lambda i: ListRooms(id=i), self._show)

    def _show(self, reply: ServerMessage) -> None:
        if not isinstance(reply, Lobby):
            return
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
        message.update(
            "No public room right now: create one, or start bots with `python -m client bot`."
            if not reply.rooms
            else "Enter: watch the room · j: join it (while it waits for racers)"
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
