"""Leaderboards (one board of one game at a time, the player's own line highlighted) and
the player's statistics in every game."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Label, Static, Tab, Tabs

from client.render.standings import (
    BOARDS,
    FIGURES,
    GAMES,
    GUEST_NOT_ON_BOARDS,
    ORDERS,
    PERIOD_BOARDS,
    board_title,
    detail,
    figure,
    stats_rows,
)
from client.tui.base import ClientScreen, ConnectionChanged
from protocol.messages import (
    AskLeaderboard,
    AskStats,
    Leaderboard,
    LeaderboardName,
    PlayerStats,
    ServerMessage,
    Variant,
)

#: Entries asked for: the top of a board, or this many around the player.
LIMIT = 20

#: How the player's own line stands out.
YOU_STYLE = "bold reverse"

#: The keys under the table: every board's, then a period board's.
HINT = "b or the tabs: board · g: other game · a: around you / top · q: back"
PERIOD_HINT = "p / n: previous / next {period} · a: around you / top · b: board · q: back"

#: The tabs' labels: the boards' titles, shortened where needed to keep every tab in 80 columns.
TABS: dict[LeaderboardName, str] = {**BOARDS, "best-time": "Best time"}

#: The extra column of the boards that have one.
DETAILS: dict[LeaderboardName, str] = {"daily": "Moves", "weekly": "Total time", "season": "Total time"}


class LeaderboardScreen(ClientScreen):
    """A leaderboard: tabs for the boards, ``g`` for the other game, ``a`` for the entries
    around the player instead of the top; on a weekly or season board, ``p`` and ``n`` for
    the previous and next period (the current one first)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        # Short labels: the footer keeps to 80 columns.
        Binding("b", "next_board", "Board"),
        Binding("g", "other_game", "Game"),
        Binding("a", "around", "Around you/top"),
        Binding("p", "previous_period", "Previous", show=False),
        Binding("n", "next_period", "Next", show=False),
        Binding("r", "refresh", "Refresh"),
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    LeaderboardScreen DataTable { height: 1fr; margin: 0 1; }
    #board-title { padding: 0 1; height: 1; }
    #board-order { padding: 0 1; height: auto; color: $text-muted; }
    #board-me { padding: 0 1; height: auto; max-height: 3; }
    """

    def __init__(self, variant: Variant = "antares", board: LeaderboardName = "daily") -> None:
        super().__init__()
        self.variant: Variant = variant
        self.board: LeaderboardName = board
        self.around = False
        #: The week or season of a period board asked for (None: the current one).
        self.period: str | None = None
        #: Each period board's current period, as the server last named it (none later to browse).
        self.current: dict[LeaderboardName, str] = {}
        self.reply: Leaderboard | None = None

    def body(self) -> ComposeResult:
        yield Label("Leaderboards", classes="title")
        yield Tabs(*(Tab(title, id=name) for name, title in TABS.items()), active=self.board, id="boards")
        yield Static(id="board-title")
        yield Static(id="board-order")
        yield DataTable(id="board", cursor_type="row", zebra_stripes=True)
        yield Static(id="board-me")
        yield Static(HINT, id="board-keys", classes="hint")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one("#board", DataTable).focus()
        self.action_refresh()

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up:
            self.action_refresh()

    def show_error(self, text: str) -> None:
        self.query_one("#board-me", Static).update(f"[red]{text}[/red]")

    def on_tabs_tab_activated(self, event: Tabs.TabActivated) -> None:
        name = event.tab.id
        if name in BOARDS and name != self.board:
            self.board, self.period = name, None
            self.action_refresh()

    def action_next_board(self) -> None:
        names = list(BOARDS)
        self.board, self.period = names[(names.index(self.board) + 1) % len(names)], None
        self.query_one("#boards", Tabs).active = self.board  # already shown: no second request
        self.action_refresh()

    def action_previous_period(self) -> None:
        self._browse(-1)

    def action_next_period(self) -> None:
        self._browse(1)

    def _browse(self, step: int) -> None:
        """Show the period before (``-1``) or after (``1``) the one shown, as the server names
        it; nothing after the current one."""
        shown = self.reply.period if self.reply is not None and self.reply.board == self.board else None
        if shown is None or (step > 0 and shown.name == self.current.get(self.board)):
            return
        target = shown.previous if step < 0 else shown.next
        if target is not None:
            self.period = target
            self.action_refresh()

    def action_other_game(self) -> None:
        self.variant = GAMES[(GAMES.index(self.variant) + 1) % len(GAMES)]
        self.action_refresh()

    def action_around(self) -> None:
        self.around = not self.around
        self.action_refresh()

    def action_refresh(self) -> None:
        variant, board, around, period = self.variant, self.board, self.around, self.period
        scope = "around you" if around else "top"
        self.query_one("#board-title", Static).update(f"{variant.capitalize()} · {BOARDS[board]} · {scope} · loading…")
        kind = PERIOD_BOARDS.get(board)
        self.query_one("#board-keys", Static).update(HINT if kind is None else PERIOD_HINT.format(period=kind))

        def answered(reply: ServerMessage) -> None:
            if isinstance(reply, Leaderboard) and (reply.variant, reply.board, around, period) == (
                self.variant,
                self.board,
                self.around,
                self.period,
            ):
                self.show(reply)

        self.request(
            lambda i: AskLeaderboard(id=i, variant=variant, board=board, limit=LIMIT, around=around, period=period),
            answered,
            "leaderboard",
        )

    def show(self, reply: Leaderboard) -> None:
        self.reply = reply
        if self.period is None and reply.period is not None:
            self.current[reply.board] = reply.period.name
        board = reply.board
        self.query_one("#board-title", Static).update(f"[b]{board_title(reply, self.around)}[/b]")
        self.query_one("#board-order", Static).update(ORDERS[board])
        table = self.query_one("#board", DataTable)
        table.clear(columns=True)
        extra = DETAILS.get(board)
        table.add_columns("Rank", "Player", FIGURES[board], *([extra] if extra else []))
        mine = reply.me.player if reply.me is not None else None
        my_row = None
        for entry in reply.entries:
            you = entry.player == mine
            style = YOU_STYLE if you else ""
            cells = [str(entry.rank), entry.name + (" (you)" if you else ""), figure(board, entry)]
            if extra:
                cells.append(detail(board, entry))
            if you:
                my_row = table.row_count
            table.add_row(*(Text(cell, style=style) for cell in cells))
        if my_row is not None:
            table.move_cursor(row=my_row)
        me = self.query_one("#board-me", Static)
        client = self.client
        if reply.me is not None:
            me.update(f"You: rank {reply.me.rank}, {figure(board, reply.me)}.")
        elif client is not None and not client.account:
            me.update(GUEST_NOT_ON_BOARDS)
        elif not reply.entries:
            me.update("You are not on this board yet." if self.around else "Nobody is on this board yet.")
        elif self.around:
            me.update("You are not on this board yet.")
        else:
            me.update("You are not in this part of the board: a shows the entries around you.")


class StatsScreen(ClientScreen):
    """The player's statistics, a column per game."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "refresh", "Refresh"),
        Binding("q", "app.pop_screen", "Back"),
        Binding("escape", "app.pop_screen", "Back", show=False, priority=True),
    ]

    DEFAULT_CSS = """
    StatsScreen DataTable { height: auto; margin: 1 1; }
    """

    def __init__(self) -> None:
        super().__init__()
        self.stats: dict[str, PlayerStats] = {}

    def body(self) -> ComposeResult:
        yield Label("Your statistics", id="stats-title", classes="title")
        yield DataTable(id="stats", cursor_type="none", zebra_stripes=True)
        yield Static(id="stats-message", classes="message")
        yield Footer()

    def on_mount(self) -> None:
        super().on_mount()
        self.action_refresh()

    def on_connection_changed(self, event: ConnectionChanged) -> None:
        if event.up:
            self.action_refresh()

    def show_error(self, text: str) -> None:
        message = self.query_one("#stats-message", Static)
        message.update(text)
        message.add_class("error")

    def action_refresh(self) -> None:
        self.stats = {}
        for variant in GAMES:
            self._ask(variant)

    def _ask(self, variant: Variant) -> None:
        def answered(reply: ServerMessage) -> None:
            if isinstance(reply, PlayerStats):
                self.stats[reply.variant] = reply
                self.show()

        self.request(lambda i: AskStats(id=i, variant=variant), answered, f"{variant} statistics")

    def show(self) -> None:
        """The table once every game's statistics are in."""
        if set(self.stats) != set(GAMES):
            return
        first = self.stats[GAMES[0]]
        self.query_one("#stats-title", Label).update(f"Statistics of {first.name}")
        table = self.query_one("#stats", DataTable)
        table.clear(columns=True)
        table.add_columns("", *(variant.capitalize() for variant in GAMES))
        columns = [stats_rows(self.stats[variant]) for variant in GAMES]
        for index, (label, _) in enumerate(columns[0]):
            table.add_row(label, *(column[index][1] for column in columns), key=label)
