"""The race screen: the room before the race (who is ready), the countdown, the player's
board with rivals' progress beside it, and the way to results.

Moves are chosen with the keyboard cursor (or the mouse) on the board, or typed in
notation; either way they go to the server, which answers with the canonical move or
the reason it is illegal (shown on the message line). Nothing here knows a rule.
"""

from __future__ import annotations

import math
import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Digits, Footer, Input, Static

from client.render.cursor import hint_marks
from client.render.describe import (
    clock_text,
    count,
    duration,
    elapsed_ms,
    out_text,
    racer_lines,
    shown_name,
)
from client.render.keys import notation_prompt, race_legend
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged, ServerEvent
from client.tui.roomtext import ready_at_once, topbar_text, waiting_words
from client.tui.widgets import BoardView
from protocol.messages import (
    Ack,
    AskHint,
    AskLegalMoves,
    HintItem,
    Hints,
    LegalMoves,
    PileInfo,
    PlayMove,
    Racer,
    RacerResigned,
    Ready,
    Resign,
    RoomView,
    ServerMessage,
    Snapshot,
    Start,
    StateChanged,
    Undo,
    Update,
)
from protocol.mirror import RoomMirror

#: Seconds within which a second press confirms resigning or leaving a race.
CONFIRM_SECONDS = 3.0

STUCK = "No moves left: undo (u) or resign (R R)."
UNDONE = "↶ move taken back (it still counts in your moves)"
STUCK_NO_UNDO = "No moves left: resign (R R) (this room has no undo)."


class GameScreen(ClientScreen):
    """Room ``code``, where the player has a seat."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "ready", "Ready"),
        Binding("s", "start", "Start now"),
        Binding("u", "undo", "Undo"),
        Binding("h", "hint", "Hint"),
        Binding("d", "deal", "Deal"),
        Binding("colon,slash", "type_move", "Type"),
        Binding("R", "resign", "Resign"),
        Binding("b", "next_board", "Next board"),
        Binding("o", "results", "Results"),
        Binding("a", "arena", "Arena", show=False),  # an arena's race: its top bar says so
        Binding("f2", "rules", "Rules", show=False),  # in the legend: the footer keeps to 80 columns
        Binding("escape", "cancel", "Cancel", show=False, priority=True),
        Binding("q", "leave", "Leave"),
    ]

    DEFAULT_CSS = """
    #topbar { height: auto; max-height: 2; background: $primary-background; padding: 0 1; }
    #main { height: 1fr; }
    #play { width: 1fr; align-horizontal: center; }
    #side { width: 30; border-left: solid $primary; padding: 0 1; }
    #clock { text-style: bold; height: auto; }
    #waiting { padding: 1 2; }
    #countdown { width: auto; margin: 1 4; }
    #countdown-label { padding: 1 4 0 4; text-style: bold; }
    #notation { margin: 0 1; }
    #legend { dock: bottom; height: auto; color: $text-muted; border-top: solid $primary; }
    """

    def __init__(self, code: str, seat: int | None = None) -> None:
        super().__init__()
        self.code = code
        self.seat = seat
        self.shown_seat: int | None = seat
        self.offset_ms = 0.0  # server clock minus ours
        self.hints: list[HintItem] = []
        self.hint_index = 0
        self._confirm: tuple[str, float] | None = None
        self._results_race: int | None = None
        self._finished_seen: int | None = None
        self._state: str | None = None
        #: The race last shown (a rematch starts a new one: the last race's messages go).
        self._race: int | None = None
        #: The piles last shown (what the legend and the notation box offer depends on them).
        self._piles: list[PileInfo] | None = None
        #: Racers' names by seat, kept for the events of a racer who has since left.
        self._names: dict[int, str] = {}
        #: The clock's text as last drawn.
        self._clock_text = ""

    def body(self) -> ComposeResult:
        yield Static(id="topbar")
        with Horizontal(id="main"):
            with VerticalScroll(id="play"):
                yield Static(id="waiting")
                yield Static(id="countdown-label")
                yield Digits(id="countdown")
                yield BoardView(interactive=True, id="board", fit=True)
            with Vertical(id="side"):
                yield Static(id="clock")
                yield Static(id="racers")
                yield Static(race_legend(stock=True), id="legend")
        yield Static(id="message", classes="message")
        yield Input(placeholder=notation_prompt([]), compact=True, id="notation")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(0.1, self.tick)
        self.refresh_view()
        self.query_one("#board", BoardView).focus()

    # -- the room as the server sends it ------------------------------------------------------

    @property
    def mirror(self) -> RoomMirror | None:
        client = self.client
        return None if client is None else client.rooms.get(self.code)

    def me(self, view: RoomView) -> Racer | None:
        client = self.client
        player = None if client is None else client.player
        return next((racer for racer in view.racers if racer.player == player), None)

    def on_server_event(self, event: ServerEvent) -> None:
        if event.room != self.code:
            return
        message = event.message
        if isinstance(message, Snapshot):
            self._clock_sample(message.view.clock.now)
        elif isinstance(message, Update):
            for room_event in message.events:
                if isinstance(room_event, StateChanged):
                    self._clock_sample(room_event.clock.now)
        self.refresh_view()
        if isinstance(message, Update):
            for room_event in message.events:
                if isinstance(room_event, RacerResigned) and room_event.seat != self.seat:
                    self._rival_out(room_event)

    def _rival_out(self, event: RacerResigned) -> None:
        """Say that another racer stopped (a bot gives up when stuck: the player should know)."""
        self.say(out_text(self._names.get(event.seat, f"The racer in seat {event.seat + 1}"), event.reason))

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        client = self.client
        if event.up and client is not None and self.code not in client.rooms:
            self.app.notify(f"You are no longer in room {self.code}.", severity="warning")
            self.go_home()
        else:
            self.refresh_view()

    def _clock_sample(self, server_now: int) -> None:
        self.offset_ms = server_now - time.time() * 1000

    def server_now(self) -> float:
        return time.time() * 1000 + self.offset_ms

    def refresh_view(self) -> None:
        mirror = self.mirror
        topbar = self.query_one("#topbar", Static)
        if mirror is None:
            topbar.update(f"Room {self.code} · loading…")
            return
        view = mirror.view()
        me = self.me(view)
        self.seat = None if me is None else me.seat
        self._names.update({racer.seat: shown_name(racer) for racer in view.racers})
        if view.race != self._race:
            if self._race is not None:
                # A rematch: what was said about the last race ("You resigned.", a hint) goes.
                self.say("")
                self.hints, self._confirm = [], None
                if ready_at_once(view, me, self.race_app.has_bot(self.code)):
                    self.action_ready()  # as the first race started: at once (practice, a bot)
            self._race = view.race
        if view.piles != self._piles:
            self._piles = view.piles
            stock = any(pile.kind == "stock" for pile in view.piles)
            self.query_one("#legend", Static).update(race_legend(stock=stock))
            self.query_one("#notation", Input).placeholder = notation_prompt(view.piles)
            self.refresh_bindings()
        if self.shown_seat is None or all(r.seat != self.shown_seat for r in view.racers):
            self.shown_seat = self.seat
        state = view.state
        racing = state == "racing" and me is not None and me.finished_ms is None and not me.resigned
        phase = f"{state}:{racing}:{sum(r.board is not None for r in view.racers)}"
        if phase != self._state:
            # What the keys do depends on the phase: the footer shows only what works now.
            self._state = phase
            self.refresh_bindings()
            self.query_one("#notation", Input).display = racing
            if racing and self.focused is None:  # the board was hidden until now (a rematch): keys play at once
                self.query_one("#board", BoardView).focus()
        whose = ""
        if state in ("racing", "finished") and self.shown_seat is not None and self.shown_seat != self.seat:
            whose = " · " + next(r.name for r in view.racers if r.seat == self.shown_seat) + "'s board"
        topbar.update(topbar_text(view) + whose)

        waiting = self.query_one("#waiting", Static)
        countdown = self.query_one("#countdown", Digits)
        countdown_label = self.query_one("#countdown-label", Static)
        board = self.query_one("#board", BoardView)
        waiting.display = state == "waiting"
        countdown.display = countdown_label.display = state == "countdown"
        board.display = state in ("racing", "finished")
        if state == "waiting":
            client = self.client
            creator = client is not None and view.creator == client.player
            waiting.update(waiting_words(view, self.seat, creator, self.race_app.has_bot(self.code)))
        if state == "countdown":
            countdown_label.update("The race starts in…")
        if state in ("racing", "finished"):
            shown = self.shown_seat
            board.interactive = racing and shown == self.seat
            board.show(view.piles, None if shown is None else mirror.board(shown))
        self.query_one("#racers", Static).update(racer_lines(view.racers, self.seat, view.clock.started))
        self._announce(view, me)
        self.tick()

    def _announce(self, view: RoomView, me: Racer | None) -> None:
        if me is not None and me.finished_ms is not None and self._finished_seen != view.race:
            self._finished_seen = view.race
            others = [r for r in view.racers if r.seat != me.seat and r.finished_ms is None and not r.resigned]
            tail = " Waiting for the others (b: look at their boards)." if others and view.state == "racing" else ""
            moves = count(me.progress.moves, "move")
            self.say(f"🏁 You won in {duration(me.finished_ms)} with {moves}!{tail}", "good")
        if view.state == "finished" and view.results is not None and self._results_race != view.race:
            self._results_race = view.race
            self.navigate(to.Results(self.code))

    def tick(self) -> None:
        mirror = self.mirror
        if mirror is None:
            return
        view = mirror.view()
        clock = view.clock
        now = self.server_now()
        if view.state == "countdown" and clock.countdown_ends is not None:
            self.query_one("#countdown", Digits).update(str(max(1, math.ceil((clock.countdown_ends - now) / 1000))))
        ends_in = None if clock.ends is None or clock.finished is not None else max(0.0, clock.ends - now)
        me = self.me(view)
        elapsed = elapsed_ms(clock, now)
        if me is not None and me.finished_ms is not None:
            elapsed = me.finished_ms
        text = clock_text(elapsed, ends_in, daily=view.daily is not None)
        if text != self._clock_text:
            # The clock ticks ten times a second: it is redrawn alone, and the screen laid out
            # again only when the clock gains or loses a line.
            layout = len(text.splitlines()) != len(self._clock_text.splitlines())
            self.query_one("#clock", Static).update(text, layout=layout)
            self._clock_text = text

    # -- messages --------------------------------------------------------------------------

    def say(self, text: str, kind: str = "") -> None:
        message = self.query_one("#message", Static)
        message.update(text)
        message.set_class(kind == "error", "error")
        message.set_class(kind == "good", "good")

    def show_error(self, text: str) -> None:
        self.say(f"✗ {text}", "error")

    def on_board_view_notice(self, event: BoardView.Notice) -> None:
        self.say(event.text, "error")

    # -- actions --------------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        mirror = self.mirror
        if mirror is None:
            return action in ("leave", "cancel")
        view = mirror.view()
        me = self.me(view)
        racing = view.state == "racing" and me is not None and me.finished_ms is None and not me.resigned
        if action in ("ready", "start"):
            client = self.client
            creator = client is not None and view.creator == client.player
            return view.state == "waiting" and (action == "ready" or creator)
        if action == "deal":
            # Only a game with a stock deals (Antares has none): the piles the server sends say.
            return racing and any(pile.kind == "stock" for pile in view.piles)
        if action in ("undo", "resign", "type_move"):
            return racing and (action != "undo" or view.options.undo)
        if action == "hint":
            return racing  # without hints, it says why
        if action == "next_board":
            return view.state in ("racing", "finished") and sum(r.board is not None for r in view.racers) > 1
        if action == "results":
            return view.state == "finished"
        return True

    def on_board_view_move_chosen(self, event: BoardView.MoveChosen) -> None:
        self.send_move(event.move)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        # Emptied whatever the server says: a refused move (its reason quotes it) must not
        # stay for the next move to be typed after it.
        event.input.value = ""
        if text:
            self.send_move(text)

    def send_move(self, text: str) -> None:
        code = self.code

        def played(reply: ServerMessage) -> None:
            if isinstance(reply, Ack):
                self.say(f"✓ {reply.move or text}", "good")
                self.check_stuck()

        self.request(lambda i: PlayMove(id=i, room=code, move=text), played, what=text)

    def check_stuck(self) -> None:
        """Ask the server for the legal moves; when there are none, say what is left to do
        (the client knows no rules: an empty answer is how it knows the game is stuck)."""
        code = self.code

        def answered(reply: ServerMessage) -> None:
            if isinstance(reply, LegalMoves) and not reply.moves and self.racing():
                undo = self.mirror is not None and self.mirror.view().options.undo
                self.say(STUCK if undo else STUCK_NO_UNDO, "error")

        self.request(lambda i: AskLegalMoves(id=i, room=code), answered)

    def racing(self) -> bool:
        """Whether the player is still racing in this room."""
        mirror = self.mirror
        if mirror is None:
            return False
        view = mirror.view()
        me = self.me(view)
        return view.state == "racing" and me is not None and me.finished_ms is None and not me.resigned

    def action_deal(self) -> None:
        self.send_move("deal")

    def action_undo(self) -> None:
        code = self.code
        self.request(lambda i: Undo(id=i, room=code), lambda reply: self.say(UNDONE, "good"), "undo")

    def action_rules(self) -> None:
        mirror = self.mirror
        self.navigate(to.Rules("antares" if mirror is not None and mirror.view().variant == "antares" else "scorpion"))

    def action_hint(self) -> None:
        """Ask the server for hints; pressing again shows the next one. When the server has
        no hint, the legal moves are shown instead; when there is none, that the game is stuck."""
        mirror = self.mirror
        if mirror is not None and not mirror.view().options.hints:
            daily = mirror.view().daily
            if daily is not None and daily.ranked:
                self.say("Hints are off in a ranked daily attempt: everyone plays it with the same tools.", "error")
            else:
                self.say("Hints are off in this room.", "error")
            return
        board = self.query_one("#board", BoardView)
        if self.hints and board.hint:
            self.hint_index = (self.hint_index + 1) % len(self.hints)
            self._show_hint()
            return
        code = self.code

        def hinted(reply: ServerMessage) -> None:
            if not isinstance(reply, Hints):
                return
            self.hints, self.hint_index = list(reply.hints), 0
            if self.hints:
                self._show_hint()
            else:
                self.request(lambda i: AskLegalMoves(id=i, room=code), legal, "hint")

        def legal(reply: ServerMessage) -> None:
            if not isinstance(reply, LegalMoves):
                return
            if not reply.moves:
                undo = self.mirror is not None and self.mirror.view().options.undo
                self.say(STUCK if undo else STUCK_NO_UNDO, "error")
                return
            self.hints = [
                HintItem(move=move, reason="a legal move (the server has no better hint)") for move in reply.moves
            ]
            self.hint_index = 0
            self._show_hint()

        self.request(lambda i: AskHint(id=i, room=code), hinted, "hint")

    def _show_hint(self) -> None:
        board = self.query_one("#board", BoardView)
        hint = self.hints[self.hint_index]
        cards, target = hint_marks(board.piles, board.board, hint.move)
        board.mark_hint(cards, target)
        more = f" ({self.hint_index + 1}/{len(self.hints)}, h: next)" if len(self.hints) > 1 else ""
        self.say(f"Hint: {hint.move}: {hint.reason}{more}")

    def _confirmed(self, action: str, prompt: str) -> bool:
        """True on the second press of ``action`` within a few seconds."""
        now = time.monotonic()
        if self._confirm is not None and self._confirm[0] == action and now - self._confirm[1] < CONFIRM_SECONDS:
            self._confirm = None
            return True
        self._confirm = (action, now)
        self.say(prompt, "error")
        return False

    def action_resign(self) -> None:
        if not self._confirmed("resign", "Press R again to resign this race."):
            return
        code = self.code
        self.request(lambda i: Resign(id=i, room=code), lambda reply: self.say("You resigned."), "resign")

    def action_ready(self) -> None:
        mirror = self.mirror
        me = None if mirror is None else self.me(mirror.view())
        ready = not (me is not None and me.ready)
        code = self.code
        self.request(lambda i: Ready(id=i, room=code, ready=ready), None, "ready")

    def action_start(self) -> None:
        code = self.code
        self.request(lambda i: Start(id=i, room=code), None, "start")

    def action_type_move(self) -> None:
        self.query_one("#notation", Input).focus()

    def action_cancel(self) -> None:
        board = self.query_one("#board", BoardView)
        if board.selected is not None:
            board.clear_selection()
            self.say("")
        else:
            board.focus()

    def action_next_board(self) -> None:
        mirror = self.mirror
        if mirror is None:
            return
        seats = [racer.seat for racer in mirror.view().racers if racer.board is not None]
        if not seats:
            return
        current = seats.index(self.shown_seat) if self.shown_seat in seats else -1
        self.shown_seat = seats[(current + 1) % len(seats)]
        name = next(r.name for r in mirror.view().racers if r.seat == self.shown_seat)
        self.say(f"Showing {'your' if self.shown_seat == self.seat else name + chr(39) + 's'} board.")
        self.refresh_view()

    def action_results(self) -> None:
        self.navigate(to.Results(self.code))

    def action_arena(self) -> None:
        """An arena's race: back to the arena's page (under this screen if it opened the race)."""
        arena = None if self.mirror is None else self.mirror.view().arena
        if arena is not None:
            self.navigate(to.Arena(arena))

    def action_leave(self) -> None:
        if self.racing() and not self._confirmed("leave", "Leaving now resigns the race: press q again to leave."):
            return
        code = self.code

        async def leave() -> None:
            self.race_app.stop_bot(code)  # a bot called in for this room goes too
            client = self.client
            if client is not None:
                try:
                    await client.leave(code)
                except (ConnectionError, TimeoutError):
                    client.forget(code)
            self.go_home()

        self.call(lambda client: leave())
