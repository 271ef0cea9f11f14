"""The daily challenge of one game: today's date, par and commitment, whether the ranked
attempt is used, the time left in the day; yesterday's deal, revealed, with the solver's
solution and the fairness check; and the start of an attempt (today's, ranked, once; or yesterday's, as practice).

Commitments are remembered in the settings when first seen, so that yesterday's reveal is
checked against the commitment this client saw before the deal was known, not only against
the one the server sends along with the reveal.
"""

from __future__ import annotations

import time
from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.widgets import Button, Footer, Label, Static

from client.lib.settings import commitment_key
from client.render.fairness import today_text, yesterday_text
from client.render.standings import GAMES
from client.tui import navigation as to
from client.tui.base import ClientScreen, ConnectionChanged
from protocol.messages import AskDaily, DailyInfo, Joined, ServerMessage, StartDaily, Variant

#: Seconds to wait for today's deal: a server that did not prepare it ahead picks it now.
DAILY_TIMEOUT = 60.0


class DailyScreen(ClientScreen):
    """Today's daily challenge of ``variant``."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "start", "Start"),
        Binding("g", "other_game", "Other game"),
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

    def body(self) -> ComposeResult:
        yield Label(id="daily-title", classes="title")
        with VerticalScroll():
            yield Static(id="daily-today")
            yield Button("Start", id="daily-start", compact=True, variant="primary", disabled=True)
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
        message = self.query_one("#daily-message", Static)
        message.update(text)
        message.add_class("error")

    def action_refresh(self) -> None:
        variant = self.variant
        self.info = None
        self.query_one("#daily-title", Label).update(f"Daily challenge · {variant.capitalize()}")
        self.query_one("#daily-today", Static).update(f"Asking the server for today's {variant.capitalize()} deal…")
        self.query_one("#daily-yesterday", Static).update("")
        self.query_one("#daily-start", Button).disabled = True

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
        self.query_one("#daily-yesterday", Static).update(yesterday_text(info.variant, reveal, seen))
        start = self.query_one("#daily-start", Button)
        ranked = info.access == "ranked"
        start.label = "Start your ranked attempt (s)" if ranked else "Practise yesterday's deal (s)"
        playable = ranked or reveal is not None
        if start.disabled == playable:
            start.disabled = not playable
            if playable:
                start.focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "daily-start":
            self.action_start()

    def action_start(self) -> None:
        """Today's ranked attempt if it is open to you; else yesterday's deal, as practice."""
        info = self.info
        if info is None:
            return
        variant = self.variant
        date = None
        if info.access != "ranked":
            if info.yesterday is None:
                return
            date = info.yesterday.date

        def opened(reply: ServerMessage) -> None:
            if isinstance(reply, Joined):
                # The server readied the only seat: the countdown is already running.
                self.navigate(to.Game(reply.room, seat=reply.seat), replace=True)

        self.request(lambda i: StartDaily(id=i, variant=variant, date=date), opened, "start the daily challenge")

    def action_other_game(self) -> None:
        self.variant = GAMES[(GAMES.index(self.variant) + 1) % len(GAMES)]
        self.action_refresh()

    def action_leaderboard(self) -> None:
        self.navigate(to.Leaderboards(self.variant, "daily"))
