"""The Play hub: every way to race in one menu (a quick race, a bot, a challenge, an async
match, a ghost, the daily challenge, arenas and brackets), and the challenges waiting for the
player, each playable from here.

Each entry opens the screen that already does it (the hub only names a route); a challenge
waiting for the player is taken with ``accept_challenge``, as the inbox takes it. What waits is
the server's inbox, asked for when the hub opens, when the player comes back to it, when the
connection is back, and on ``r``; what the server pushes updates it at once: a result
(``challenge_result``: an invitation that expired) or a challenge that waits for the player's
run (``challenge_waiting``: a new invitation).
"""

from __future__ import annotations

import time
from typing import ClassVar, Final

from rich.markup import escape
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.widgets import Footer, Label, OptionList, Static
from textual.widgets.option_list import Option

from client.render.challenges import invitations, status_text, waiting_words, with_line
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged, ServerEvent
from protocol.messages import (
    AcceptChallenge,
    AskInbox,
    ChallengeLine,
    ChallengeResult,
    ChallengeWaiting,
    Inbox,
    Joined,
    ServerMessage,
)

#: The hub's entries, in its order: (id, words, the route it opens).
ENTRIES: Final[tuple[tuple[str, str, to.Route], ...]] = (
    ("quick", "Race now: a quick race with whoever is waiting", to.Quick()),
    ("bot", "Race a bot: a private race that starts at once", to.BotRace()),
    ("challenge", "Challenge a player: they race your deal later", to.ChallengeForm("challenge")),
    ("async", "Async match: the deal of someone who played it already", to.ChallengeForm("async")),
    ("take", "Take a challenge by its id", to.ChallengeForm("take")),
    ("ghost", "Ghost race: a kept best run, or a replay link's run", to.Ghost()),
    # On Antares first, as on the home menu (g there: Scorpion).
    ("daily", "Daily challenge: today's deal (g there: the other game)", to.Daily("antares")),
    ("arenas", "Arena tournaments: race on for points, live standings", to.Arenas()),
    ("brackets", "Bracket tournaments: knockout rounds on one deal", to.Brackets()),
    ("inbox", "Your challenges (the inbox): results and replays", to.Challenges()),
)

#: The routes by entry id.
ROUTES: Final[dict[str, to.Route]] = {choice: route for choice, _, route in ENTRIES}

#: The prefix of an invitation's entry id (then the challenge's id).
INVITATION: Final = "invitation:"


def invitation_text(line: ChallengeLine, now_ms: float) -> str:
    """An invitation's entry: who challenges the player, to which game, and the time left."""
    return f"▸ {line.challenger}'s {line.variant.capitalize()} challenge · {status_text(line, now_ms)}"


class PlayHubScreen(ClientScreen):
    """Every way to race, then the invitations waiting for the player (Enter plays one)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Refresh", show=False),  # in the hint
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    #play-box { height: 1fr; }
    PlayHubScreen OptionList { height: auto; max-height: 100%; margin: 0 2; }
    """

    def __init__(self) -> None:
        super().__init__()
        #: The invitations the inbox last listed, newest first.
        self.waiting: list[ChallengeLine] = []

    def body(self) -> ComposeResult:
        yield Label("Play: every way to race", classes="title")
        yield Static("Choose how to race now, or play a challenge waiting for you.", classes="hint")
        with Vertical(id="play-box"):
            yield OptionList(id="play", markup=False)  # names as the players typed them
        yield Static(id="play-message", classes="message")
        yield Static("Arrows and Enter to choose · r: refresh the challenges · q: back", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.show_entries()
        self.query_one("#play", OptionList).focus()
        self.action_refresh()

    def on_screen_resume(self) -> None:
        super().on_screen_resume()
        self.show_entries()
        self.action_refresh()  # back from a run or the inbox: what waits may have changed

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        self.show_entries()
        if event.up:
            self.action_refresh()

    def on_server_event(self, event: ServerEvent) -> None:
        if isinstance(event.message, ChallengeResult | ChallengeWaiting):
            # Over or expired: no longer an invitation to play; waiting for the player: one more.
            self.waiting = invitations(with_line(self.waiting, event.message.challenge))
            self.show_entries()

    def say(self, text: str, error: bool = False) -> None:
        message = self.query_one("#play-message", Static)
        message.update(escape(text))
        message.set_class(error, "error")

    def show_error(self, text: str) -> None:
        self.say(text, error=True)

    def action_refresh(self) -> None:
        """Ask the server for the inbox (quietly while not connected: the entries work without it)."""
        if self.client is None:
            return

        def shown(reply: ServerMessage) -> None:
            if isinstance(reply, Inbox):
                self.waiting = invitations(reply.challenges)
                self.show_entries()

        self.request(lambda i: AskInbox(id=i), shown, "your challenges")

    def show_entries(self) -> None:
        """The entries (none usable while not connected), then the invitations; the highlight
        stays on the same entry."""
        client = self.client
        ready = client is not None and client.ended is None
        now = time.time() * 1000
        waiting = waiting_words(self.waiting)
        options = [
            Option(f"{words} · {waiting}" if choice == "inbox" and waiting else words, id=choice, disabled=not ready)
            for choice, words, _ in ENTRIES
        ]
        options += [
            Option(invitation_text(line, now), id=f"{INVITATION}{line.id}", disabled=not ready) for line in self.waiting
        ]
        menu = self.query_one("#play", OptionList)
        before = menu.highlighted_option
        menu.clear_options()
        menu.add_options(options)
        kept = [n for n, option in enumerate(options) if before is not None and option.id == before.id]
        menu.highlighted = kept[0] if kept else 0

    @on(OptionList.OptionSelected, "#play")
    def chosen(self, event: OptionList.OptionSelected) -> None:
        choice = event.option.id or ""
        if choice.startswith(INVITATION):
            self.play(choice.removeprefix(INVITATION))
        elif choice in ROUTES:
            self.navigate(ROUTES[choice])

    def play(self, challenge: str) -> None:
        """Take the invitation ``challenge``: the player's run opens (its countdown running)."""
        line = next((line for line in self.waiting if line.id == challenge), None)
        who = "the" if line is None else f"{line.challenger}'s"
        self.say(f"Opening your run of {who} challenge…")

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.say("")
                self.navigate(to.Game(reply.room, seat=reply.seat))

        self.request(lambda i: AcceptChallenge(id=i, challenge=challenge), opened, "play")
