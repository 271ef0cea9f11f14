"""After a race: the results, the fairness check of the revealed deal, rematch, and a
step-by-step replay of any racer's game (boards rebuilt from the server's patches)."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Label, Static

from client.render.describe import duration, rating_text, shown_name
from client.render.fairness import fairness_text, replay_open
from client.render.replay import BoardList, replay_boards
from client.render.standings import results_notes
from client.tui.base import ClientScreen, ServerEvent
from client.tui.widgets import BoardView
from protocol.messages import AskReplay, PileInfo, Rematch, Replay, RoomView, ServerMessage


class ResultsScreen(ClientScreen):
    """The ranking of room ``code``'s last race; it closes by itself on a rematch."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "rematch", "Rematch"),
        Binding("p", "replay", "Replay"),
        Binding("b", "back", "Boards"),
        Binding("escape", "back", "Boards", show=False, priority=True),
        Binding("q", "home", "Home"),
    ]

    DEFAULT_CSS = """
    ResultsScreen DataTable { height: auto; max-height: 12; margin: 1 1 0 1; }
    #results-notes { padding: 0 1; margin: 0 0 1 0; color: $text-muted; }
    #fairness { padding: 0 1; }
    """

    def __init__(self, code: str) -> None:
        super().__init__()
        self.code = code

    def body(self) -> ComposeResult:
        yield Label("Results", id="results-title", classes="title")
        yield DataTable(id="results", cursor_type="row")
        yield Static(id="results-notes")
        yield Static(id="fairness")
        yield Static(id="results-hint", classes="hint")
        yield Static(id="results-message", classes="message")
        yield Footer()

    def view(self) -> RoomView | None:
        client = self.client
        mirror = None if client is None else client.rooms.get(self.code)
        return None if mirror is None else mirror.view()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#results", DataTable).focus()
        self.refresh_view()

    def on_server_event(self, event: ServerEvent) -> None:
        if event.room == self.code:
            self.refresh_view()

    def refresh_view(self) -> None:
        view = self.view()
        if view is None:
            return
        if view.state != "finished":
            # A rematch began: back to the room.
            if self.app.screen is self:
                self.dismiss()
            return
        if view.daily is not None:
            kind = "ranked" if view.daily.ranked else "practice"
            title = f"Daily challenge of {view.daily.date} · {kind} attempt"
        else:
            title = f"Results of race {view.race} in room {view.code}"
        self.query_one("#results-title", Label).update(title)
        table = self.query_one("#results", DataTable)
        row = table.cursor_row
        results = view.results or []
        rated = any(result.rating is not None for result in results)
        client = self.client
        mine = next((r.seat for r in view.racers if client is not None and r.player == client.player), None)
        table.clear(columns=True)
        table.add_columns("Place", "Racer", "Time", "Moves", "Home", *(["Rating"] if rated else []))
        for result in results:
            time_text = duration(result.time_ms) if result.finished else "did not finish"
            rating = [] if not rated else [rating_text(result.rating, result.rating_change) if result.rating else "-"]
            name = shown_name(result) + (" (you)" if result.seat == mine else "")
            table.add_row(str(result.place), name, time_text, str(result.moves), f"{result.home}/52", *rating)
        if 0 <= row < table.row_count:
            table.move_cursor(row=row)
        self.query_one("#results-notes", Static).update("\n".join(results_notes(view)))
        self.query_one("#fairness", Static).update(fairness_text(view))
        self.refresh_bindings()
        keys = [
            "Enter or p: replay the selected racer's game" if replay_open(view) else "replays open when the day ends"
        ]
        if view.daily is None:
            keys.append("m: rematch")
        self.query_one("#results-hint", Static).update(" · ".join([*keys, "b: back to the boards", "q: home"]))

    def show_error(self, text: str) -> None:
        message = self.query_one("#results-message", Static)
        message.update(text)
        message.add_class("error")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "rematch":
            # A daily challenge is one attempt: another starts from the daily screen.
            client, view = self.client, self.view()
            in_daily = view is not None and view.daily is not None
            return client is not None and client.roles.get(self.code) == "racer" and not in_daily
        if action == "replay":
            view = self.view()
            return view is None or replay_open(view)
        return True

    def action_rematch(self) -> None:
        code = self.code
        self.request(lambda i: Rematch(id=i, room=code), None, "rematch")

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_replay()

    def action_replay(self) -> None:
        view = self.view()
        if view is None or not view.results or not replay_open(view):
            return
        row = self.query_one("#results", DataTable).cursor_row
        result = view.results[max(0, min(row, len(view.results) - 1))]
        code, seat, piles = self.code, result.seat, view.piles

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Replay):
                self.app.push_screen(ReplayScreen(reply, piles))

        self.request(lambda i: AskReplay(id=i, room=code, seat=seat), opened, "replay")

    def action_back(self) -> None:
        self.dismiss()

    def action_home(self) -> None:
        self.go_home()


class ReplayScreen(ClientScreen):
    """One racer's game, step by step: the server's patches applied to the starting board."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,n", "step(1)", "Next"),
        Binding("left,p", "step(-1)", "Back"),
        Binding("home", "goto(0)", "Start"),
        Binding("end", "goto(-1)", "End"),
        Binding("space", "play", "Play/pause"),
        Binding("q", "app.pop_screen", "Close"),
        Binding("escape", "app.pop_screen", "Close", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    #replay-status { height: 1; padding: 0 1; text-style: bold; }
    """

    def __init__(self, replay: Replay, piles: list[PileInfo]) -> None:
        super().__init__()
        self.replay = replay
        self.piles = piles
        self.boards: list[BoardList] = replay_boards(replay)
        self.step = 0
        self.playing = False

    def body(self) -> ComposeResult:
        yield Label(f"Replay: {self.replay.name}'s game (race {self.replay.race})", classes="title")
        yield Static(id="replay-status")
        with VerticalScroll():
            yield BoardView(id="replay-board", fit=True)
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(0.4, self._advance)
        self.show_step()

    def show_step(self) -> None:
        steps = self.replay.steps
        entry = "starting board" if self.step == 0 else steps[self.step - 1].entry
        self.query_one("#replay-status", Static).update(f"Step {self.step} of {len(steps)}: {entry}")
        self.query_one("#replay-board", BoardView).show(self.piles, self.boards[self.step])

    def action_step(self, delta: int) -> None:
        self.playing = False
        self.step = max(0, min(len(self.boards) - 1, self.step + delta))
        self.show_step()

    def action_goto(self, step: int) -> None:
        self.playing = False
        self.step = len(self.boards) - 1 if step < 0 else step
        self.show_step()

    def action_play(self) -> None:
        self.playing = not self.playing
        if self.playing and self.step == len(self.boards) - 1:
            self.step = 0

    def _advance(self) -> None:
        if self.playing:
            if self.step < len(self.boards) - 1:
                self.step += 1
                self.show_step()
            else:
                self.playing = False
