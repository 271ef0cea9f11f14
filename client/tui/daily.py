"""The daily challenge of one game: today's date, par and commitment, whether the ranked
attempt is used, the time left in the day; yesterday's deal, revealed, with the solver's
solution and the fairness check; and the start of an attempt (today's, ranked, once; or yesterday's, as practice),
or a race against the ghost of yesterday's fastest kept run.

Commitments are remembered in the settings when first seen, so that yesterday's reveal is
checked against the commitment this client saw before the deal was known, not only against
the one the server sends along with the reveal.
"""

from __future__ import annotations

import time
from typing import ClassVar, Final

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Button, Footer, Label, Static

from client.lib.settings import commitment_key
from client.render.fairness import today_text, yesterday_text
from client.render.standings import GAMES
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged
from protocol.messages import AskDaily, DailyInfo, Joined, RaceGhost, ServerMessage, StartDaily, Variant

#: Seconds to wait for today's deal: a server that did not prepare it ahead picks it now.
DAILY_TIMEOUT = 60.0

#: Why today's deal is not yours to start, by the server's ``access`` (``ranked`` is).
CLOSED: Final[dict[str, str]] = {
    "used": "your ranked attempt today is used",
    "guest": "today's deal is for accounts (register from the home menu)",
    "bot": "bots do not play today's deal",
    "new-account": "your account is newer than today's deal (it opens for you tomorrow)",
}


def nothing_to_start(info: DailyInfo | None) -> str | None:
    """Why ``s`` starts nothing (None: it starts today's ranked attempt or yesterday's deal)."""
    if info is None:
        return "Nothing to start yet: the server has not sent today's challenge."
    if info.access == "ranked" or info.yesterday is not None:
        return None
    closed = CLOSED.get(info.access, CLOSED["used"])
    return f"Nothing to start: {closed}, and there is no earlier deal to practise yet."


class DailyScreen(ClientScreen):
    """Today's daily challenge of ``variant``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "start", "Start"),
        # When there is nothing to start, "s Start" leaves the footer and s says why.
        Binding("s", "why_not_start", show=False),
        Binding("g", "other_game", "Other game"),
        # Said under yesterday's deal, where it applies: the footer keeps to 80 columns.
        Binding("f", "race_fastest", "Fastest ghost", show=False),
        Binding("l", "leaderboard", "Leaderboard"),
        Binding("r", "refresh", "Refresh"),
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    DailyScreen VerticalScroll { padding: 0 1; }
    #daily-today { margin: 1 0 0 0; }
    #daily-yesterday { margin: 1 0; }
    #daily-start { margin: 0 0 1 0; }
    """

    def __init__(self, variant: Variant) -> None:
        super().__init__()
        self.variant: Variant = variant
        self.info: DailyInfo | None = None
        self.first_seen = ""
        #: Whether the start button is offered (None: not decided since the last refresh).
        self.offered: bool | None = None

    def body(self) -> ComposeResult:
        yield Label(id="daily-title", classes="title")
        with VerticalScroll():
            yield Static(id="daily-today")
            yield Button("Start", id="daily-start", compact=True, variant="primary")
            yield Static(id="daily-yesterday")
            yield Static(id="daily-message", classes="message")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.set_interval(1.0, self.show_info)
        self.action_refresh()

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up:
            self.action_refresh()

    def show_error(self, text: str) -> None:
        self.say(text, error=True)

    def say(self, text: str, error: bool = False) -> None:
        message = self.query_one("#daily-message", Static)
        message.update(text)
        message.set_class(error, "error")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "start":
            return nothing_to_start(self.info) is None
        if action == "race_fastest":
            return self.info is not None and self.info.yesterday is not None
        return True

    def action_why_not_start(self) -> None:
        self.say(nothing_to_start(self.info) or "")

    def action_refresh(self) -> None:
        variant = self.variant
        self.info = None
        self.query_one("#daily-title", Label).update(f"Daily challenge · {variant.capitalize()}")
        self.query_one("#daily-today", Static).update(f"Asking the server for today's {variant.capitalize()} deal…")
        self.query_one("#daily-yesterday", Static).update("")
        self.query_one("#daily-start", Button).display = False
        self.offered = None
        self.refresh_bindings()

        def answered(reply: ServerMessage) -> None:
            if isinstance(reply, DailyInfo) and reply.variant == self.variant:
                self._remember(reply)
                self.show_info()

        self.call(
            lambda client: client.request(lambda i: AskDaily(id=i, variant=variant), timeout=DAILY_TIMEOUT),
            answered,
            f"today's {variant} challenge",
        )

    def _remember(self, info: DailyInfo) -> None:
        """Keep the commitments seen; note the first one seen for today."""
        app = self.race_app
        settings = app.settings
        before = dict(settings.commitments)
        self.first_seen = settings.seen_commitment(commitment_key(app.url, info.variant, info.date), info.commitment)
        if settings.commitments != before:
            settings.save()
        self.info = info

    def show_info(self) -> None:
        info = self.info
        if info is None:
            return
        app = self.race_app
        self.query_one("#daily-today", Static).update(today_text(info, time.time() * 1000, self.first_seen))
        reveal = info.yesterday
        key = None if reveal is None else commitment_key(app.url, info.variant, reveal.date)
        seen = None if key is None else app.settings.commitments.get(key)
        ghost = "" if reveal is None else "\n\nf: race the ghost of the fastest run kept on that deal."
        self.query_one("#daily-yesterday", Static).update(yesterday_text(info.variant, reveal, seen) + ghost)
        start = self.query_one("#daily-start", Button)
        start.label = "Start your ranked attempt (s)" if info.access == "ranked" else "Practise yesterday's deal (s)"
        why_not = nothing_to_start(info)
        if self.offered != (why_not is None):
            # Offered only when it starts something; otherwise the message line says why not.
            self.offered = start.display = why_not is None
            self.refresh_bindings()
            if self.offered:
                start.focus()
            self.say(why_not or "")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "daily-start":
            self.action_start()

    def action_start(self) -> None:
        """Today's ranked attempt if it is open to you; else yesterday's deal, as practice."""
        info = self.info
        if info is None or nothing_to_start(info) is not None:
            self.action_why_not_start()
            return
        variant = self.variant
        date = None if info.access == "ranked" or info.yesterday is None else info.yesterday.date

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                # The server readied the only seat: the countdown is already running.
                self.navigate(to.Game(reply.room, seat=reply.seat), replace=True)

        self.request(lambda i: StartDaily(id=i, variant=variant, date=date), opened, "start the daily challenge")

    def action_race_fastest(self) -> None:
        """Race the fastest run kept on yesterday's deal: its ghost, in a room of your own."""
        info = self.info
        if info is None or info.yesterday is None:
            return
        variant, date = self.variant, info.yesterday.date

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                self.navigate(to.Game(reply.room, seat=reply.seat), replace=True)

        self.request(lambda i: RaceGhost(id=i, variant=variant, date=date, rank=1), opened, "race the fastest run")

    def action_other_game(self) -> None:
        self.variant = GAMES[(GAMES.index(self.variant) + 1) % len(GAMES)]
        self.action_refresh()

    def action_leaderboard(self) -> None:
        self.navigate(to.Leaderboards(self.variant, "daily"))
