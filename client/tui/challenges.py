"""Async challenges (PROTOCOL.md, ``challenge``, ``accept_challenge``, ``async_match``,
``inbox``): the inbox of your challenges, and the forms that start one.

The inbox lists invitations waiting for you (Enter plays one), your challenges waiting for a
rival (with the id to give), those being played, and the results: who won, the times, the
rating change, the revealed deal checked against the commitment seen before (see
client/tui/commitments.py), and, once a challenge is over, each run's replay (Enter: yours,
``v``: your rival's). What the server pushes of a challenge (``challenge_result``, a result;
``challenge_waiting``, an invitation whose challenger has played) replaces its line at once.
Every way of starting a challenge opens your run straight away: a one-racer room whose
countdown the server starts at once.
"""

from __future__ import annotations

import time
from typing import ClassVar

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, DataTable, Footer, Input, Label, Select, Static

from client.lib.settings import challenge_key
from client.render.challenges import (
    CHALLENGE_GUIDE,
    detail_lines,
    may_play,
    replay_rooms,
    rival_of,
    status_text,
    waiting_words,
    with_line,
)
from client.render.commitments import coloured
from client.render.replay import game_piles
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged, ServerEvent
from client.tui.widgets import GameSelect, Tick
from protocol.messages import (
    AcceptChallenge,
    AskInbox,
    AskReplay,
    AsyncMatch,
    ChallengeLine,
    ChallengePlayer,
    ChallengeResult,
    ChallengeWaiting,
    Inbox,
    Joined,
    Replay,
    ServerMessage,
    Variant,
)

#: The keys under the inbox.
HINT = "Enter: play an invitation or replay your run · v: your rival's run · r: refresh"


class ChallengesScreen(ClientScreen):
    """The inbox, newest first, with the highlighted challenge told in full under it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("c", "form('challenge')", "Challenge"),
        Binding("t", "form('take')", "Take by id"),
        Binding("a", "form('async')", "Async match"),
        Binding("v", "replay_rival", "Rival's run", show=False),
        Binding("r", "refresh", "Refresh", show=False),  # in the hint: the footer keeps to 80 columns
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    ChallengesScreen DataTable { height: auto; max-height: 10; margin: 0 1; }
    #challenges-guide { padding: 0 1; height: auto; color: $text-muted; }
    #inbox-detail { padding: 0 1; height: auto; margin: 1 0 0 0; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.lines: list[ChallengeLine] = []

    def body(self) -> ComposeResult:
        yield Label("Challenges", id="challenges-title", classes="title")
        yield Static(id="challenges-guide")
        yield DataTable(id="inbox", cursor_type="row")
        yield Static(id="inbox-detail")
        yield Static(id="inbox-message", classes="message")
        yield Static(HINT, classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#inbox", DataTable).focus()
        self.show_guide()
        self.action_refresh()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.action_refresh()  # back from a run or a form: the inbox may have changed

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up:
            self.show_guide()
            self.action_refresh()

    def on_server_event(self, event: ServerEvent) -> None:
        if isinstance(event.message, ChallengeResult | ChallengeWaiting):
            self.show(with_line(self.lines, event.message.challenge))  # what the inbox now says

    def show_guide(self) -> None:
        client = self.client
        you = "" if client is None or client.player is None else f" Your player id: {client.player}."
        self.query_one("#challenges-guide", Static).update(escape(CHALLENGE_GUIDE + you))

    def say(self, text: str, error: bool = False) -> None:
        message = self.query_one("#inbox-message", Static)
        message.update(escape(text))
        message.set_class(error, "error")

    def show_error(self, text: str) -> None:
        self.say(text, error=True)

    def action_refresh(self) -> None:
        def shown(reply: ServerMessage) -> None:
            if isinstance(reply, Inbox):
                self.show(reply.challenges)

        self.request(lambda i: AskInbox(id=i), shown, "inbox")

    def show(self, lines: list[ChallengeLine]) -> None:
        self.lines = lines
        table = self.query_one("#inbox", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        table.add_columns("Id", "Game", "Rival", "Where it stands")
        now = time.time() * 1000
        for line in lines:
            rival = rival_of(line) or "-"
            table.add_row(line.id, line.variant.capitalize(), rival, status_text(line, now), key=line.id)
        if lines:
            table.move_cursor(row=max(0, min(row, len(lines) - 1)))
        else:
            self.query_one("#inbox-detail", Static).update(
                "No challenge yet: c challenges someone, t takes one by its id, a finds an async match."
            )
        waiting = waiting_words(lines)
        self.query_one("#challenges-title", Label).update(f"Challenges · {waiting}" if waiting else "Challenges")
        self.show_detail()

    def selected(self) -> ChallengeLine | None:
        if not self.lines:
            return None
        row = self.query_one("#inbox", DataTable).cursor_row
        return self.lines[max(0, min(row, len(self.lines) - 1))]

    def show_detail(self) -> None:
        line = self.selected()
        if line is None:
            return
        app = self.race_app
        seen = app.settings.commitments.get(challenge_key(app.url, line.id))
        text = detail_lines(line, time.time() * 1000, seen)
        if may_play(line):
            text.append("Enter plays it now.")
        elif replay_rooms(line):
            text.append("Enter replays your run, v your rival's.")
        self.query_one("#inbox-detail", Static).update(coloured(escape("\n".join(text))))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self.show_detail()

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        line = self.selected()
        if line is None:
            return
        if may_play(line):
            self.say(f"Opening your run of {line.challenger}'s challenge…")
            self.request(lambda i: AcceptChallenge(id=i, challenge=line.id), self.opened, "play")
        elif replay_rooms(line):
            self.replay(line, 0)
        else:
            self.say(detail_lines(line, time.time() * 1000)[1])  # where it stands

    def action_replay_rival(self) -> None:
        line = self.selected()
        if line is not None and replay_rooms(line):
            self.replay(line, 1)
        else:
            self.say("Replays open once both runs are in.")

    def replay(self, line: ChallengeLine, which: int) -> None:
        """Replay run ``which`` of ``line`` (0: yours, 1: your rival's): each run is seat 0 of its room."""
        name, room = replay_rooms(line)[which]
        piles = game_piles(line.variant)

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Replay):
                self.navigate(to.ReplayRun(reply, piles))

        self.request(lambda i: AskReplay(id=i, room=room, seat=0), opened, f"{name}'s run")

    def opened(self, reply: ServerMessage) -> None:
        if isinstance(reply, Joined):
            self.navigate(to.Game(reply.room, seat=reply.seat))

    def action_form(self, kind: to.ChallengeKind) -> None:
        self.navigate(to.ChallengeForm(kind))


#: Each form's title and guide.
FORMS: dict[to.ChallengeKind, tuple[str, str]] = {
    "challenge": (
        "Challenge someone",
        "You play a new deal now; your rival has 24 h to play the same deal. Give a player id "
        "(from a leaderboard or a room), or leave it blank and give the challenge's id to anyone.",
    ),
    "take": ("Take a challenge", "Type the challenge's id you were given (8 letters): you play its deal now."),
    "async": (
        "Async match",
        "Play the deal of someone near your rating who played it in the last 24 h, or a new deal "
        "whose run waits for the next player. Always rated.",
    ),
}


class ChallengeFormScreen(ClientScreen):
    """Start a challenge (``kind``): challenge a player (``player``, named ``name``) or anyone
    given the id, take one by its id, or an async match. Your run opens at once."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back", priority=True)]

    DEFAULT_CSS = """
    #challenge-form { padding: 0 2; height: auto; }
    #challenge-form > Horizontal { height: auto; margin: 1 0 0 0; }
    #challenge-form > Horizontal > Label { width: 16; }
    #challenge-form Select { width: 24; }
    #challenge-form Input { width: 40; }
    #challenge-form > Button { margin: 1 0 0 0; }
    """

    def __init__(
        self, kind: to.ChallengeKind = "challenge", player: str | None = None, name: str | None = None
    ) -> None:
        super().__init__()
        self.kind: to.ChallengeKind = kind
        self.rival = player
        self.rival_name = name

    def body(self) -> ComposeResult:
        title, guide = FORMS[self.kind]
        yield Label(title, classes="title")
        yield Static(guide, classes="hint")
        with Vertical(id="challenge-form"):
            if self.kind == "take":
                with Horizontal():
                    yield Label("Challenge id")
                    yield Input(placeholder="e.g. QX7M2KDA", max_length=16, compact=True, id="challenge-id")
            else:
                with Horizontal():
                    yield Label("Game")
                    yield GameSelect()
            if self.kind == "challenge":
                with Horizontal():
                    yield Label("Rival" if self.rival_name is None else f"Rival ({self.rival_name[:8]})")
                    yield Input(
                        value=self.rival or "",
                        placeholder="a player id (blank: anyone)",
                        max_length=32,
                        compact=True,
                        id="rival",
                    )
                yield Tick("Rated (both ratings move once both have played)", value=True, id="rated")
            label = {"challenge": "Challenge: play your run", "take": "Play it", "async": "Find a match"}[self.kind]
            yield Button(label, id="send", compact=True, variant="primary")
        yield Static(id="form-message", classes="message error")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#challenge-id" if self.kind == "take" else "#variant").focus()

    def show_error(self, text: str) -> None:
        self.query_one("#form-message", Static).update(escape(text))

    def action_back(self) -> None:
        select = next(iter(self.query(Select)), None)
        if select is not None and select.expanded:
            select.expanded = False
            select.focus()
            return
        self.app.pop_screen()

    def variant(self) -> Variant:
        return self.query_one(GameSelect).variant

    @on(Button.Pressed, "#send")
    @on(Input.Submitted)
    def send(self) -> None:
        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.navigate(to.Game(reply.room, seat=reply.seat), replace=True)

        if self.kind == "take":
            code = self.query_one("#challenge-id", Input).value.strip().upper()
            if not code:
                self.show_error("Type the challenge's id first.")
                return
            self.request(lambda i: AcceptChallenge(id=i, challenge=code), opened, "take the challenge")
            return
        variant = self.variant()
        if self.kind == "async":
            self.request(lambda i: AsyncMatch(id=i, variant=variant), opened, "async match")
            return
        rival = self.query_one("#rival", Input).value.strip() or None
        rated = self.query_one("#rated", Tick).value
        self.request(lambda i: ChallengePlayer(id=i, variant=variant, player=rival, rated=rated), opened, "challenge")
