"""Bracket tournaments (PROTOCOL.md, "Bracket tournaments"; ``brackets``, ``join_bracket``,
``leave_bracket``, ``play_bracket``, ``bracket``): the list of brackets, and a bracket's page.

On a bracket's page ``j`` registers and ``l`` unregisters before the start; once a round you
are in opens, ``p`` plays your run of it (a one-racer room on the round's deal, its countdown
started at once). The page shows each round's players and, once it closed, its places with
who went on and its revealed deal checked against the round's commitment seen before (see
client/tui/commitments.py), then the final standings. It asks the server again every few
seconds while it shows, when the player comes back to it from their run, and, shown or not,
when the server pushes that the bracket started (``bracket_started``) or that one of the
player's rounds closed (``round_closed``); the list is asked again on those pushes too.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.markup import escape
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Footer, Label, Static

from client.lib.settings import round_key
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
from client.render.commitments import coloured
from client.tui import navigation as to
from client.tui.base import ServerEvent
from client.tui.tournaments import PAGE_KEYS, TournamentList, TournamentScreen, now_ms
from protocol.messages import (
    Ack,
    AskBracket,
    BracketInfo,
    Brackets,
    BracketStarted,
    BracketView,
    ClientMessage,
    JoinBracket,
    Joined,
    LeaveBracket,
    ListBrackets,
    PlayBracket,
    RoundClosed,
    ServerMessage,
)


class BracketsScreen(TournamentList[BracketInfo]):
    """The brackets being played, open to registration, and over in the last day; Enter opens one."""

    REFRESH_SECONDS = 10.0  # between two looks at the list
    KIND = "brackets"
    MESSAGE = "brackets-message"
    FOCUS = "#brackets"
    HEADING = "Bracket tournaments"
    GUIDE = BRACKET_GUIDE
    HINT = "Enter: the bracket's page, to register and play your rounds · r: refresh"
    EMPTY = "No bracket is scheduled: an operator schedules them."
    COLUMNS = ("Bracket", "Game", "Where it stands", "Players", "You")

    def ask(self, request_id: int) -> ClientMessage:
        return ListBrackets(id=request_id)

    def read(self, reply: ServerMessage) -> Sequence[BracketInfo] | None:
        return listed(reply.brackets) if isinstance(reply, Brackets) else None

    def cells(self, info: BracketInfo, now: float) -> tuple[str, ...]:
        players = f"{info.players}/{info.size}"
        you = "registered" if info.registered else ""
        return info.name, info.variant.capitalize(), state_text(info, now), players, you

    def page(self, tournament: str) -> to.Route:
        return to.Bracket(tournament)

    def on_server_event(self, event: ServerEvent) -> None:
        if isinstance(event.message, BracketStarted | RoundClosed):
            self.action_refresh()  # one of the listed brackets started, or a round of one closed


class BracketScreen(TournamentScreen):
    """Bracket ``bracket``'s page: register or unregister, play your round, its rounds and standings."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "register", "Register"),
        Binding("l", "unregister", "Unregister"),
        Binding("p", "play", "Play your round"),
        *PAGE_KEYS,
    ]

    DEFAULT_CSS = """
    #bracket-when { padding: 0 1; height: auto; }
    #bracket-status { padding: 0 1; height: auto; text-style: bold; margin: 0 0 1 0; }
    #bracket-scroll { height: 1fr; padding: 0 1; }
    #bracket-standings { margin: 1 0 0 0; }
    """

    REFRESH_SECONDS = 3.0  # between two looks at the bracket
    MESSAGE = "bracket-message"

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

    def tick(self) -> None:
        self.show_status()  # the time left to start a run moves

    def on_server_event(self, event: ServerEvent) -> None:
        message = event.message
        if isinstance(message, BracketStarted | RoundClosed) and message.bracket.id == self.bracket:
            self.action_refresh()  # shown or not: the player comes back to it to play on

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
        app, client = self.race_app, self.client
        me = None if client is None else client.player
        now = now_ms()
        info = reply.bracket
        self.query_one("#bracket-title", Label).update(escape(f"Bracket: {info.name}"))
        self.query_one("#bracket-when", Static).update(escape(f"{heading(info)} · {state_text(info, now)}"))
        rounds: list[str] = []
        for n, round_ in enumerate(reply.rounds):
            seen = app.settings.commitments.get(round_key(app.url, info.id, round_.number))
            rounds += [*round_lines(reply, n, me, now, seen), ""]
        if not rounds:
            rounds = ["No round yet: round 1 opens at the start."] if info.state == "registering" else []
        self.query_one("#bracket-rounds", Static).update(coloured(escape("\n".join(rounds).rstrip())))
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
