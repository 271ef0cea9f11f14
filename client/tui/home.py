"""The first screens: the name prompt, the home menu (which says how many challenges wait for
the player, from the inbox and the challenges the server pushes: results and invitations), the
room and practice forms, and joining by code. The Play hub (every way to race: ``p`` on the
home menu), quick races, async challenges, ghost races, arena tournaments, daily challenges,
leaderboards, statistics and the account screens have modules of their own (play_hub.py,
quick.py, challenges.py, ghost.py, arenas.py, daily.py, standings.py, account.py)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.widgets import Button, Footer, Input, Label, OptionList, Select, Static
from textual.widgets.option_list import Option
from textual.worker import Worker

from client.lib.connection import ServerError
from client.render.challenges import invitations, waiting_words, with_line
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged, FormScreen, ServerEvent, explain
from client.tui.widgets import GameSelect, Tick
from protocol.messages import (
    AccountInfo,
    AskInbox,
    ChallengeLine,
    ChallengeResult,
    ChallengeWaiting,
    CreateRoom,
    Inbox,
    Joined,
    JoinRoom,
    Ready,
    RoomOptions,
    ServerMessage,
)


class NameScreen(ClientScreen):
    """Asks for the player's name: on the first run (``first``: a welcome, and no way
    round it), or from the home menu to change it (Escape keeps the old one)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Keep your name", priority=True)]

    DEFAULT_CSS = """
    NameScreen { align: center middle; }
    NameScreen > Vertical { width: 60; height: auto; border: round $accent; padding: 1 2; }
    """

    def __init__(self, error: str | None = None, first: bool = False) -> None:
        super().__init__()
        self.error = error
        self.first = first

    def body(self) -> ComposeResult:
        with Vertical():
            yield Label("Welcome to Solitaire Race!" if self.first else "Change your name", classes="title")
            yield Label("What name should other racers see? (1-24 characters)")
            yield Input(value=self.race_app.settings.name or "", placeholder="your name", max_length=24, id="name")
            yield Static(self.error or "", id="name-error", classes="message error")
            if self.first:
                yield Static("Have an account? Type any name, then choose Log in on the home menu.", classes="hint")
            else:
                yield Static("Enter: save · Esc: keep your name", classes="hint")

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#name", Input).focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        # On the first run there is no name to keep.
        return action != "cancel" or not self.first

    def action_cancel(self) -> None:
        self.dismiss()

    @on(Input.Submitted, "#name")
    def submitted(self, event: Input.Submitted) -> None:
        name = event.value.strip()
        if not name:
            self.query_one("#name-error", Static).update("Type a name first.")
            return
        self.dismiss()
        self.race_app.set_name(name)


#: The home menu's entries that open a screen with no argument.
MENU: dict[str, to.Route] = {
    "bot": to.BotRace(),
    "quick": to.Quick(),
    "challenges": to.Challenges(),
    "arenas": to.Arenas(),
    "brackets": to.Brackets(),
    # The daily challenge opens on Antares, as the web client's daily page does (g: Scorpion).
    "daily": to.Daily("antares"),
    "leaderboards": to.Leaderboards(),
    "stats": to.Stats(),
    "create": to.Create(practice=False),
    "practice": to.Create(practice=True),
    "join": to.Join(),
    "lobby": to.Lobby(),
    "name": to.Name(),
    "register": to.Account("register"),
    "login": to.Account("login"),
    "password": to.Account("password"),
    "logout": to.Account("logout"),
}


def challenges_entry(waiting: str) -> str:
    """The home menu's Challenges entry, saying how many wait for the player (``waiting``)."""
    return "Challenges and async matches" + (f" · {waiting}" if waiting else ": race someone later")


class HomeScreen(ClientScreen):
    """The main menu: as many rows as it has entries, up to what the terminal leaves it (at
    80x24 a guest's whole menu shows, "Quit" included; a longer one scrolls)."""

    _was_ready = False
    #: What the inbox last said is waiting for the player ("2 challenges waiting for you", or "").
    waiting = ""
    #: The invitations it last listed (a pushed result or waiting challenge updates them).
    invited: tuple[ChallengeLine, ...] = ()

    BINDINGS: ClassVar[list[BindingType]] = [Binding("p", "play", "Play"), Binding("q", "app.quit", "Quit")]

    DEFAULT_CSS = """
    #menu-box { height: 1fr; }
    HomeScreen OptionList { height: auto; max-height: 100%; margin: 0 2; }
    #who { padding: 0 1; }
    """

    def body(self) -> ComposeResult:
        yield Label("♠ ♥ Solitaire Race ♣ ♦", classes="title")
        yield Static(id="who")
        with Vertical(id="menu-box"):
            yield OptionList(id="menu")
        yield Static("Arrows and Enter to choose · p: Play, every way to race · ? keys · q quit", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.refresh_menu()
        self.query_one("#menu", OptionList).focus()
        self.ask_inbox()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.refresh_menu()
        self.ask_inbox()  # back from a challenge's run or the inbox: what waits may have changed

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        self.refresh_menu()
        if event.up:
            self.ask_inbox()  # connected, or signed in as a new guest: results may have come meanwhile

    def on_server_event(self, event: ServerEvent) -> None:
        if isinstance(event.message, Joined | AccountInfo):
            self.refresh_menu()  # a seat restored (at reconnection or login), or now an account
        if isinstance(event.message, AccountInfo):
            self.ask_inbox()  # logged in: another player's inbox
        if isinstance(event.message, ChallengeResult | ChallengeWaiting):  # one fewer or one more
            self.show_waiting(invitations(with_line(self.invited, event.message.challenge)))

    def ask_inbox(self) -> None:
        """Ask for the inbox, to say on the menu how many challenges wait for the player (quietly:
        the menu works without it)."""
        client = self.client
        if client is None or client.ended is not None:
            return

        async def ask() -> None:
            try:
                reply = await client.request(lambda i: AskInbox(id=i))
            except (ServerError, ConnectionError, TimeoutError):
                return
            if isinstance(reply, Inbox) and client is self.client:
                self.show_waiting(invitations(reply.challenges))

        # The function, not a coroutine: a worker cancelled before it starts (exclusive) never
        # makes one, so none is left unawaited.
        worker: Worker[None] = self.run_worker(ask, group="inbox", exclusive=True, exit_on_error=False)
        del worker  # named for its type only: Textual's overloads infer none from a function

    def show_waiting(self, invited: Sequence[ChallengeLine]) -> None:
        """Say on the menu how many of ``invited`` (invitations) wait for the player."""
        self.invited, self.waiting = tuple(invited), waiting_words(invited)
        self.refresh_menu()

    def refresh_menu(self) -> None:
        app = self.race_app
        client = app.client
        who = self.query_one("#who", Static)
        if client is None:
            who.update(f"Connecting to {escape(app.url)}…")
        else:
            kind = "account" if client.account else "guest"
            who.update(f"Playing as [b]{escape(client.name)}[/b] ({kind}) on {escape(app.url)}")
        ready = client is not None and client.ended is None  # ended: banned, nothing to send
        options = [
            Option("Race a bot: start a race now", id="bot", disabled=not ready),
            Option("Quick race: race whoever is waiting", id="quick", disabled=not ready),
            Option(challenges_entry(self.waiting), id="challenges", disabled=not ready),
            Option("Arena tournaments: race on for points, live standings", id="arenas", disabled=not ready),
            Option("Bracket tournaments: knockout rounds on one deal", id="brackets", disabled=not ready),
        ]
        if client is not None:
            for code, mirror in sorted(client.rooms.items()):
                if client.roles.get(code) == "racer" and mirror.view().state != "finished":
                    options.append(Option(f"Back to your race in room {code}", id=f"room:{code}"))
        options += [
            Option("Daily challenge: Antares (g there: Scorpion)", id="daily", disabled=not ready),
            Option("Create a room", id="create", disabled=not ready),
            Option("Join a room by code", id="join", disabled=not ready),
            Option("Spectate a live public room", id="lobby", disabled=not ready),
            Option("Practice a deal", id="practice", disabled=not ready),
            Option("Leaderboards", id="leaderboards", disabled=not ready),
            Option("Your statistics", id="stats", disabled=not ready),
            # One entry for both games' rules (g there: the other game), and none for the keys (the
            # hint under the menu says "? keys"), to keep the menu in 24 rows.
            Option("How to play Scorpion and Antares (g there: the other)", id="rules:scorpion"),
        ]
        if client is not None and client.account:
            # An account's name is its own (the server keeps it): no renaming here.
            options += [
                Option("Change your password", id="password"),
                Option("Log out (this device or everywhere)", id="logout"),
            ]
        else:
            options += [
                Option("Register an account (keeps this player's statistics)", id="register", disabled=not ready),
                Option("Log in to your account", id="login", disabled=not ready),
                Option("Change your name", id="name"),
            ]
        options.append(Option("Quit", id="quit"))
        menu = self.query_one("#menu", OptionList)
        before = menu.highlighted_option
        # Keep the highlight on the same choice (by id: rows move as rooms come and go).
        enabled = [i for i, option in enumerate(options) if not option.disabled]
        # Once connected, start again from the top ("Race a bot"), not where offline choices left it.
        same = self._was_ready == ready
        self._was_ready = ready
        keep = [i for i in enabled if same and before is not None and options[i].id == before.id]
        menu.clear_options()
        menu.add_options(options)
        menu.highlighted = keep[0] if keep else enabled[0]

    def action_play(self) -> None:
        """The Play hub: every way to race, in one place."""
        self.navigate(to.Play())

    @on(OptionList.OptionSelected, "#menu")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        choice = event.option.id or ""
        route = MENU.get(choice)
        if choice.startswith("room:"):
            self.navigate(to.Game(choice[5:]))
        elif choice.startswith("rules:"):
            self.navigate(to.Rules("antares" if choice == "rules:antares" else "scorpion"))
        elif route is not None:
            self.navigate(route)
        elif choice == "quit":
            self.app.exit(0)


class CreateScreen(FormScreen):
    """A form for a new room, or (``practice``) a one-seat room on a chosen deal."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back", priority=True)]

    DEFAULT_CSS = """
    CreateScreen VerticalScroll { padding: 0 2; }
    CreateScreen Horizontal { height: auto; margin: 0 0 1 0; }
    CreateScreen Horizontal > Label { width: 22; padding: 0 1 0 0; }
    CreateScreen Select { width: 24; }
    CreateScreen Input { width: 24; }
    """

    def __init__(self, practice: bool) -> None:
        super().__init__()
        self.practice = practice

    def body(self) -> ComposeResult:
        title = "Practice a deal" if self.practice else "Create a room"
        yield Label(title, classes="title")
        # Not focusable: a scroll container takes a Tab stop that shows nothing.
        with VerticalScroll(can_focus=False):
            with Horizontal():
                yield Label("Game")
                yield GameSelect()
            if self.practice:
                with Horizontal():
                    yield Label("Deal number")
                    yield Input(placeholder="e.g. 617 or ms617 (blank: random)", compact=True, id="deal")
            else:
                with Horizontal():
                    yield Label("Racers")
                    yield Select[int](
                        [(str(n), n) for n in range(2, 9)], value=2, allow_blank=False, compact=True, id="racers"
                    )
                with Horizontal():
                    yield Label("Time limit (minutes)")
                    yield Input(placeholder="none", type="integer", valid_empty=True, compact=True, id="limit")
                yield Tick("Public (listed for spectators)", value=False, id="public")
            with Horizontal():
                yield Label("Autoplay (Antares)")
                yield Select[str](
                    [("safe", "safe"), ("off", "off"), ("all", "all")],
                    value="safe",
                    allow_blank=False,
                    compact=True,
                    id="autoplay",
                )
            yield Tick("Hints allowed", value=True, id="hints")
            yield Tick("Undo allowed", value=True, id="undo")
            yield Button("Start practice" if self.practice else "Create", id="create", compact=True, variant="primary")
            yield Static(id="create-error", classes="message error")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#variant", Select).focus()

    def show_error(self, text: str) -> None:
        self.query_one("#create-error", Static).update(text)

    def options(self) -> RoomOptions | None:
        autoplay = self.query_one("#autoplay", Select).value
        common = {
            "autoplay": autoplay if autoplay in ("off", "safe", "all") else "safe",
            "hints": self.query_one("#hints", Tick).value,
            "undo": self.query_one("#undo", Tick).value,
        }
        if self.practice:
            deal = self.query_one("#deal", Input).value.strip() or None
            return RoomOptions(max_racers=1, deal=deal, **common)  # type: ignore[arg-type]
        racers = self.query_one("#racers", Select).value
        limit_text = self.query_one("#limit", Input).value.strip()
        limit = int(limit_text) * 60 if limit_text else None
        if limit is not None and not 30 <= limit <= 86_400:
            self.show_error("The time limit is 1 to 1440 minutes.")
            return None
        return RoomOptions(
            max_racers=racers if isinstance(racers, int) else 2,
            public=self.query_one("#public", Tick).value,
            time_limit=limit,
            **common,  # type: ignore[arg-type]
        )

    @on(Button.Pressed, "#create")
    @on(Input.Submitted)
    def create(self) -> None:
        options = self.options()
        if options is None:
            return
        variant = self.query_one(GameSelect).variant
        practice = self.practice

        def opened(reply: ServerMessage) -> None:
            if not isinstance(reply, Joined):
                return
            self.navigate(to.Game(reply.room, seat=reply.seat), replace=True)
            if practice:
                # A practice room starts as soon as its only racer is ready.
                client = self.client
                if client is not None:
                    self.app.run_worker(client.request(lambda i: Ready(id=i, room=reply.room)), exit_on_error=False)

        self.request(lambda i: CreateRoom(id=i, variant=variant, options=options), opened)


class JoinScreen(ClientScreen):
    """Join a room by its code; a race already running can be spectated instead."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "app.pop_screen", "Back", priority=True)]

    DEFAULT_CSS = """
    JoinScreen Input { width: 30; margin: 1 2; }
    """

    def body(self) -> ComposeResult:
        yield Label("Join a room", classes="title")
        yield Label("Type the room code you were given (8 characters), then Enter.", classes="hint")
        yield Input(placeholder="room code", max_length=16, id="code")
        yield Static(id="join-error", classes="message error")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#code", Input).focus()

    def show_error(self, text: str) -> None:
        self.query_one("#join-error", Static).update(text)

    @on(Input.Submitted, "#code")
    def join(self, event: Input.Submitted) -> None:
        code = event.value.strip().upper()
        if not code:
            return

        async def attempt() -> None:
            client = self.client
            if client is None:
                self.show_error("not connected to the server yet")
                return
            try:
                reply = await client.request(lambda i: JoinRoom(id=i, room=code))
            except ServerError as error:
                if error.code in ("race-in-progress", "race-over"):
                    self.navigate(to.Spectate(code), replace=True)
                    self.app.notify(f"Room {code} is already racing: you are watching it.")
                    return
                self.show_error(explain(error))
                return
            except (ConnectionError, TimeoutError) as error:
                self.show_error(explain(error))
                return
            if isinstance(reply, Joined):
                self.navigate(to.Game(reply.room, seat=reply.seat), replace=True)

        self.run_worker(attempt(), exit_on_error=False)
