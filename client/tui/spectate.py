"""Watching a room: every racer's board live (as live as the room's spectator delay
allows), with names, progress and clocks; the focus moves between boards.

When the boards do not all fit side by side (three racers at 80 columns), or with ``z``,
the screen shows one board at a time, full size, with every racer's progress in a list
beside it (the board shown marked ``▶``); ←/→ switch boards, and the message line says
which board is shown. Boards fold their long columns to the screen's height."""

from __future__ import annotations

import time
from typing import ClassVar

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, ScrollableContainer, Vertical, VerticalScroll
from textual.widgets import Footer, Static

from client.render.board import board_width, layout_for
from client.render.describe import (
    bar,
    count,
    duration,
    elapsed_ms,
    options_text,
    racer_lines,
    racer_status,
    shown_name,
    variant_title,
)
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged, ServerEvent
from client.tui.widgets import BoardView
from protocol.messages import Joined, JoinRoom, Racer, RoomView, ServerMessage, Spectate


class RacerPanel(Vertical):
    """One racer: a title line (name, progress, clock) and their board."""

    DEFAULT_CSS = """
    RacerPanel { width: auto; height: 100%; border: round $panel; padding: 0 1; }
    RacerPanel.focused { border: double $accent; }
    RacerPanel .racer-title { width: 36; height: 2; }
    """

    #: Columns of the panel's border and padding.
    FRAME = 4
    #: Columns of the title line.
    TITLE = 36

    def __init__(self, seat: int) -> None:
        super().__init__()
        self.seat = seat

    def compose(self) -> ComposeResult:
        yield Static(classes="racer-title")
        yield BoardView(cell=4, fit=True)

    def show(self, view: RoomView, racer: Racer, now: float, zoom: bool) -> None:
        progress = racer.progress
        clock = duration(racer.finished_ms) if racer.finished_ms is not None else duration(elapsed_ms(view.clock, now))
        status = racer_status(racer) or clock
        title = self.query_one(".racer-title", Static)
        title.update(
            f"[b]{shown_name(racer)}[/b]  {progress.home}/52 home · {count(progress.moves, 'move')}\n"
            f"{bar(progress.home, width=12)} {status}"
        )
        board = self.query_one(BoardView)
        board.cell = 5 if zoom else 4
        # Set, not auto: an auto width would keep the width the panel had at the other size.
        self.styles.width = self.width_for(view, board.cell)
        board.show(view.piles, racer.board)

    @classmethod
    def width_for(cls, view: RoomView, cell: int) -> int:
        """The columns a panel takes with its board drawn ``cell`` columns a pile."""
        board = board_width(layout_for(view.piles), cell) + 2 if view.piles else 0  # + the board's padding
        return max(cls.TITLE, board) + cls.FRAME


class SpectateScreen(ClientScreen):
    """Room ``code`` as a spectator (the screen asks to spectate unless already doing so)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,tab", "focus_board(1)", "Next board"),
        Binding("left,shift+tab", "focus_board(-1)", "Previous", show=False),
        Binding("z", "zoom", "Zoom"),
        Binding("j", "join", "Join"),
        Binding("o", "results", "Results"),
        Binding("q", "leave", "Leave"),
        Binding("escape", "leave", "Leave", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    #spectate-top { height: 2; background: $primary-background; padding: 0 1; }
    #spectate-main { height: 1fr; }
    #boards { width: 1fr; height: 100%; layout: horizontal; overflow: auto auto; }
    #spectate-side { width: 32; height: 100%; border-left: solid $primary; padding: 0 1; display: none; }
    """

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code.strip().upper()
        self.focus_seat: int | None = None
        self.zoom = False
        #: Whether one board is shown at a time (``z``, or the boards do not fit side by side).
        self.one_at_a_time = False
        self.panels: dict[int, RacerPanel] = {}
        self._results_race: int | None = None

    def body(self) -> ComposeResult:
        yield Static(id="spectate-top")
        with Horizontal(id="spectate-main"):
            yield ScrollableContainer(id="boards", can_focus=False)
            with VerticalScroll(id="spectate-side", can_focus=False):
                yield Static(id="spectate-racers")
        yield Static(id="spectate-message", classes="message")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(0.2, self.refresh_view)
        client = self.client
        if client is not None and client.roles.get(self.code) == "spectator":
            self.refresh_view()
            return

        def joined(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.code = reply.room
                self.refresh_view()

        code = self.code
        self.request(lambda i: Spectate(id=i, room=code), joined, f"cannot watch room {code}")

    def show_error(self, text: str) -> None:
        message = self.query_one("#spectate-message", Static)
        message.update(text)
        message.add_class("error")

    def on_server_event(self, event: ServerEvent) -> None:
        if event.room == self.code:
            self.refresh_view()

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        self.refresh_view()

    def on_resize(self, event: events.Resize) -> None:
        super().on_resize(event)
        self.refresh_view()

    def fits(self, view: RoomView) -> bool:
        """Whether every racer's board fits side by side in the terminal's width."""
        return len(view.racers) * RacerPanel.width_for(view, 4) <= self.app.size.width

    def view(self) -> RoomView | None:
        client = self.client
        mirror = None if client is None else client.rooms.get(self.code)
        return None if mirror is None else mirror.view()

    def refresh_view(self) -> None:
        view = self.view()
        top = self.query_one("#spectate-top", Static)
        if view is None:
            top.update(f"Watching room {self.code} · connecting…")
            return
        delay = view.options.spectator_delay or 0.0
        lag = f" · {delay:g} s behind" if delay else ""
        top.update(
            f"[b]Watching {view.code}[/b] · {variant_title(view)} · race {view.race} · {view.state}{lag}"
            # At least this spectator: the server's count reaches spectators with the room's
            # spectator delay, so it can still read 0 while we watch.
            f"\n{options_text(view)} · {max(view.spectators, 1)} watching"
        )
        # Spectators see the room `delay` seconds late: their clock runs that late too.
        now = time.time() * 1000 - delay * 1000
        container = self.query_one("#boards", ScrollableContainer)
        seats = {racer.seat for racer in view.racers}
        for seat in list(self.panels):
            if seat not in seats:
                self.panels.pop(seat).remove()
        for racer in view.racers:
            if racer.seat not in self.panels:
                panel = RacerPanel(racer.seat)
                self.panels[racer.seat] = panel
                container.mount(panel)
        if self.focus_seat not in seats:
            self.focus_seat = min(seats) if seats else None
        one = self.one_at_a_time = self.zoom or not self.fits(view)
        for racer in view.racers:
            panel = self.panels[racer.seat]
            focused = racer.seat == self.focus_seat
            panel.set_class(focused, "focused")
            panel.display = focused or not one
            if panel.is_mounted and panel.children:
                panel.show(view, racer, now, one and focused)
        self.query_one("#spectate-side", VerticalScroll).display = one
        if one:
            self.query_one("#spectate-racers", Static).update(
                racer_lines(view.racers, None, view.clock.started, shown=self.focus_seat)
            )
        message = self.query_one("#spectate-message", Static)
        if not message.has_class("error"):
            message.update(self._guide(view))
        if view.state == "finished" and view.results is not None and self._results_race != view.race:
            self._results_race = view.race
            self.navigate(to.Results(self.code))

    def _guide(self, view: RoomView) -> str:
        if not view.racers:
            return "Nobody has taken a seat yet."
        if view.state == "waiting":
            return "Waiting for the racers to get ready · j: join the race yourself"
        if view.state == "countdown":
            return "The race is about to start."
        over = "The race is over · o: results and replays · " if view.state == "finished" else ""
        if not self.one_at_a_time:
            return f"{over}Every board side by side · ←/→: focus · z: one board at a time, full size"
        seats = [racer.seat for racer in view.racers]
        name = next((shown_name(r) for r in view.racers if r.seat == self.focus_seat), "")
        place = seats.index(self.focus_seat) + 1 if self.focus_seat in seats else 1
        which = f"{name}'s, {place} of {len(seats)} · ←/→: next racer"
        if self.zoom and self.fits(view):
            return f"{over}One board at a time: {which} · z: every board"
        return f"{over}One board at a time (too many to fit side by side): {which}"

    def action_focus_board(self, delta: int) -> None:
        seats = sorted(self.panels)
        if not seats:
            return
        index = seats.index(self.focus_seat) if self.focus_seat in seats else 0
        self.focus_seat = seats[(index + delta) % len(seats)]
        self.refresh_view()
        self.panels[self.focus_seat].scroll_visible()

    def action_zoom(self) -> None:
        self.zoom = not self.zoom
        self.refresh_view()
        view = self.view()
        if not self.zoom and view is not None and not self.fits(view):
            self.notify("The boards do not all fit side by side at this size: one at a time (←/→ to switch).")

    def action_results(self) -> None:
        view = self.view()
        if view is not None and view.state == "finished":
            self.navigate(to.Results(self.code))

    def action_join(self) -> None:
        code = self.code

        def joined(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.navigate(to.Game(reply.room), replace=True)

        self.request(lambda i: JoinRoom(id=i, room=code), joined, f"cannot join {code}")

    def action_leave(self) -> None:
        code = self.code

        async def leave() -> None:
            client = self.client
            if client is not None and code in client.roles:
                try:
                    await client.leave(code)
                except (ConnectionError, TimeoutError):
                    client.forget(code)
            self.dismiss()

        self.call(lambda client: leave())
