"""After a race: the results, the fairness check of the revealed deal, rematch, and a
step-by-step replay of any racer's game (boards rebuilt from the server's patches), from
which ``g`` races that run as a ghost."""

from __future__ import annotations

from typing import ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import DataTable, Footer, Label, Static

from client.render.brackets import bracket_notes
from client.render.challenges import run_notes
from client.render.describe import duration, rating_text, shown_name
from client.render.fairness import fairness_text, replay_open
from client.render.replay import BoardList, replay_boards
from client.render.standings import results_notes
from client.tui import navigation as to
from client.tui.base import ClientScreen, ServerEvent
from client.tui.widgets import BoardView
from protocol.messages import (
    AskReplay,
    Joined,
    PileInfo,
    RaceGhost,
    Racer,
    Rematch,
    Replay,
    RoomView,
    ServerMessage,
)


class ResultsScreen(ClientScreen):
    """The ranking of room ``code``'s last race; it closes by itself on a rematch."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "rematch", "Rematch"),
        Binding("p", "replay", "Replay"),
        Binding("b", "back", "Boards"),
        Binding("c", "challenge", "Challenge", show=False),  # in the hint: the footer keeps to 80 columns
        Binding("a", "arena", "Arena", show=False),
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
        elif view.challenge is not None:
            title = f"Challenge {view.challenge} · your run"
        elif view.bracket is not None:
            title = f"Bracket {view.bracket} · your round's run"
        elif view.arena is not None:
            title = escape(f"{view.arena_name or 'Arena'}: results of your race")
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
        notes = run_notes(view) if view.challenge is not None else results_notes(view)
        if view.bracket is not None:
            notes = bracket_notes()
        self.query_one("#results-notes", Static).update("\n".join(notes))
        self.query_one("#fairness", Static).update(fairness_text(view))
        self.refresh_bindings()
        if view.challenge is not None:
            keys = ["replays open in Challenges once both runs are in"]
        elif view.bracket is not None:
            keys = ["the round's places: on the bracket's page (Brackets) once it closes"]
        elif replay_open(view):
            keys = ["Enter or p: replay the selected racer's game"]
        else:
            keys = ["replays open when the day ends"]
        if view.arena is not None:
            keys.append("a: the arena (you race on from there)")  # its next race, not a rematch
        elif view.daily is None and view.challenge is None and view.bracket is None:
            keys.append("m: rematch")
        if any(self.rival(view, result.seat) for result in results):
            keys.append("c: challenge the selected racer")
        self.query_one("#results-hint", Static).update(" · ".join([*keys, "b: back to the boards", "q: home"]))

    def rival(self, view: RoomView, seat: int) -> Racer | None:
        """The racer in ``seat`` if the player may challenge them: another person (not a bot or a ghost)."""
        client = self.client
        racer = next((r for r in view.racers if r.seat == seat), None)
        if racer is None or racer.bot or racer.ghost or client is None or racer.player == client.player:
            return None
        return racer

    def action_challenge(self) -> None:
        """Challenge the selected racer to a deal they play later (the Challenges form, filled in)."""
        view = self.view()
        if view is None or not view.results:
            return
        row = self.query_one("#results", DataTable).cursor_row
        racer = self.rival(view, view.results[max(0, min(row, len(view.results) - 1))].seat)
        if racer is None:
            self.show_error("Choose another person's line to challenge them (bots and ghosts take no challenge).")
            return
        self.navigate(to.ChallengeForm("challenge", racer.player, racer.name))

    def show_error(self, text: str) -> None:
        message = self.query_one("#results-message", Static)
        message.update(text)
        message.add_class("error")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "rematch":
            # A daily challenge or a challenge's run is one attempt: another starts from its screen;
            # an arena pairs its next race itself; a bracket's run is the round's one attempt.
            client, view = self.client, self.view()
            kinds = (view.daily, view.challenge, view.arena, view.bracket) if view is not None else ()
            one_attempt = any(kind is not None for kind in kinds)
            return client is not None and client.roles.get(self.code) == "racer" and not one_attempt
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

    def action_arena(self) -> None:
        view = self.view()
        if view is not None and view.arena is not None:
            self.navigate(to.Arena(view.arena))

    def action_home(self) -> None:
        self.go_home()


class ReplayScreen(ClientScreen):
    """One racer's game, step by step: the server's patches applied to the starting board.
    ``g`` races this run: a new room where it plays as a ghost, on its recorded timing."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("right,n", "step(1)", "Next"),
        Binding("left,p", "step(-1)", "Back"),
        Binding("home", "goto(0)", "Start"),
        Binding("end", "goto(-1)", "End"),
        Binding("space", "play", "Play/pause"),
        Binding("g", "race_ghost", "Race it"),
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

    def action_race_ghost(self) -> None:
        """Race this run: the server opens a room with its ghost and starts the countdown."""
        replay = self.replay

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.navigate(to.Game(reply.room, seat=reply.seat), replace=True)

        self.request(
            lambda i: RaceGhost(id=i, room=replay.room, race=replay.race, seat=replay.seat), opened, "race this run"
        )

    def _advance(self) -> None:
        if self.playing:
            if self.step < len(self.boards) - 1:
                self.step += 1
                self.show_step()
            else:
                self.playing = False
