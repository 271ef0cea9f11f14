"""The ghost race form (PROTOCOL.md, ``race_ghost``): race a recorded run on its deal, its
ghost playing the run's moves on their recorded timing beside you.

Name the run one of two ways: a replay link or a room code (a finished race's run: the web
client's ``#/replay/CODE/SEAT``, a race link ``/r/CODE``, or ``CODE`` and an optional
``/SEAT``), or a game and a deal (or a past daily challenge's date) with whose kept best run:
yours, the fastest, or a player's. The server opens the room and starts its countdown; every
refusal (no kept run, today's daily deal, ...) is its word, shown under the form.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import partial
from typing import ClassVar, Final

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Footer, Input, Label, Select, Static

from client.tui import navigation as to
from client.tui.base import FormScreen
from client.tui.widgets import GameSelect
from protocol.messages import Joined, RaceGhost, ServerMessage

#: A run named by its room, at the end of what was typed: ``…#/replay/CODE/SEAT``, ``…/r/CODE``,
#: ``CODE``, ``CODE/SEAT`` or ``CODE SEAT``.
RUN_LINK: Final = re.compile(r"([A-Za-z0-9]{1,16})(?:[/ ]([0-7]))?/?\s*$")

#: A past daily challenge's date, as the wire writes it.
DATE: Final = re.compile(r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")

#: Whose kept best run on the deal (when no player id is given).
WHOSE: Final = [("Your best run", "yours"), ("The fastest run", "fastest")]

GUIDE: Final = (
    "Race a recorded run beside you, on its deal and its timing (never rated). Give a replay "
    "link (or a room code), or a deal with whose kept best run: yours, the fastest, a player's."
)


def linked_run(text: str) -> tuple[str, int] | None:
    """The room and seat a replay link or a room code names (seat 0 when it names none)."""
    found = RUN_LINK.search(text.strip())
    if found is None:
        return None
    return found.group(1).upper(), int(found.group(2) or 0)


class GhostScreen(FormScreen):
    """The form: a replay link, or a game, a deal and whose run; Enter or the button races it."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back", priority=True)]

    DEFAULT_CSS = """
    #ghost-form { padding: 0 2; height: auto; }
    #ghost-form > Horizontal { height: auto; margin: 0 0 1 0; }
    #ghost-form > Horizontal > Label { width: 18; }
    #ghost-form Select { width: 24; }
    #ghost-form Input { width: 48; }
    #ghost-form > .section { text-style: bold; margin: 1 0 0 0; }
    """

    def body(self) -> ComposeResult:
        yield Label("Ghost race", classes="title")
        yield Static(GUIDE, classes="hint")
        with Vertical(id="ghost-form"):
            yield Label("A replay's run", classes="section")
            with Horizontal():
                yield Label("Link or room code")
                yield Input(placeholder="e.g. http://host/#/replay/K7Q2M9XD/1", compact=True, id="ghost-link")
            yield Label("Or a kept best run (leave the link blank)", classes="section")
            with Horizontal():
                yield Label("Game")
                yield GameSelect()
            with Horizontal():
                yield Label("Deal")
                yield Input(placeholder="a deal number, or a past daily's date", compact=True, id="ghost-deal")
            with Horizontal():
                yield Label("Whose run")
                yield Select[str](WHOSE, value="yours", allow_blank=False, compact=True, id="ghost-whose")
            with Horizontal():
                yield Label("Or a player id")
                yield Input(placeholder="their best run (blank: as chosen above)", compact=True, id="ghost-player")
            yield Button("Race the ghost", id="ghost-race", compact=True, variant="primary")
        yield Static(id="ghost-message", classes="message")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#ghost-link", Input).focus()

    def say(self, text: str, error: bool = False) -> None:
        message = self.query_one("#ghost-message", Static)
        message.update(escape(text))
        message.set_class(error, "error")

    def show_error(self, text: str) -> None:
        self.say(text, error=True)

    def request_for(self) -> tuple[Callable[[int], RaceGhost], str] | None:
        """The request the form names (built with its id) and what it races in words, or None
        (the player is told what is missing)."""
        link = self.query_one("#ghost-link", Input).value.strip()
        if link:
            run = linked_run(link)
            if run is None:
                self.show_error("That is not a replay link nor a room code.")
                return None
            room, seat = run
            return partial(RaceGhost, room=room, seat=seat), f"the run of seat {seat} in room {room}"
        deal = self.query_one("#ghost-deal", Input).value.strip()
        if not deal:
            self.show_error("Give a replay link, or a deal (a number, or a past daily's date).")
            return None
        variant = self.query_one(GameSelect).variant
        player = self.query_one("#ghost-player", Input).value.strip() or None
        fastest = player is None and self.query_one("#ghost-whose", Select).value == "fastest"
        date, number = (deal, None) if DATE.match(deal) else (None, deal)
        ghost = partial(RaceGhost, variant=variant, deal=number, date=date, player=player, rank=1 if fastest else None)
        whose = f"player {player}'s" if player else "the fastest" if fastest else "your best"
        return ghost, f"{whose} run on {variant.capitalize()} {deal}"

    @on(Button.Pressed, "#ghost-race")
    @on(Input.Submitted)
    def race(self) -> None:
        named = self.request_for()
        if named is None:
            return
        build, what = named
        self.say(f"Opening a room for you and {what}…")

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.navigate(to.Game(reply.room, seat=reply.seat), replace=True)

        self.request(build, opened, "race the ghost")
