"""Arena tournaments (PROTOCOL.md, "Arena tournaments"; ``arenas``, ``join_arena``,
``leave_arena``, ``arena``): the list of arenas, and an arena's page with its live standings.

On an arena's page ``j`` joins: the player waits in the arena's line (as a quick race waits)
until the server pairs them; the race opens on top of the page. While the page stays open
under the race, the player races on: when a race ends the page joins again by itself and, once
the next race forms, closes the last race's screens and opens it. ``l`` stops that (and leaves
the line); closing the page leaves it too. The standings (the top and the lines around yours)
are asked for every few seconds while the page shows, and after each race.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar, Final

from rich.markup import escape
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import DataTable, Footer, Label, Static
from textual.worker import Worker

from client.lib.connection import ServerError
from client.render.arenas import (
    ARENA_GUIDE,
    COLUMNS,
    WAITING,
    arena_heading,
    final_text,
    line_cells,
    listed,
    me_text,
    standing_lines,
    utc_clock,
    when_text,
)
from client.tui import navigation as to
from client.tui.base import ServerEvent, explain
from client.tui.tournaments import PAGE_KEYS, TournamentList, TournamentScreen, now_ms
from protocol.messages import (
    ArenaInfo,
    ArenaLine,
    Arenas,
    ArenaStandings,
    AskArena,
    ClientMessage,
    JoinArena,
    Joined,
    LeaveArena,
    ListArenas,
    ServerMessage,
)

#: Lines asked for: the top, and around the player when they are below it.
TOP: Final = 10
AROUND: Final = 5

#: How the player's own line stands out.
YOU_STYLE: Final = "bold reverse"


class ArenasScreen(TournamentList[ArenaInfo]):
    """The arenas live, upcoming and over in the last day; Enter opens one."""

    REFRESH_SECONDS = 15.0  # between two looks at the list
    KIND = "arenas"
    MESSAGE = "arenas-message"
    FOCUS = "#arenas"
    HEADING = "Arena tournaments"
    GUIDE = ARENA_GUIDE
    HINT = "Enter: the arena's page, to join it and follow its standings · r: refresh"
    EMPTY = "No arena is scheduled today: an operator schedules them."
    COLUMNS = ("Arena", "Game", "When", "Players")

    def ask(self, request_id: int) -> ClientMessage:
        return ListArenas(id=request_id)

    def read(self, reply: ServerMessage) -> Sequence[ArenaInfo] | None:
        return listed(reply.arenas) if isinstance(reply, Arenas) else None

    def cells(self, info: ArenaInfo, now: float) -> tuple[str, ...]:
        return info.name, info.variant.capitalize(), when_text(info, now), str(info.players)

    def page(self, tournament: str) -> to.Route:
        return to.Arena(tournament)


class ArenaScreen(TournamentScreen):
    """Arena ``arena``: join or leave it, its standings, and the races of those on it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("j", "join", "Join"),
        Binding("l", "leave", "Leave"),
        Binding("w", "watch", "Watch"),
        Binding("g", "your_race", "Your race", show=False),  # in the hint: the footer keeps to 80 columns
        *PAGE_KEYS,
    ]

    DEFAULT_CSS = """
    ArenaScreen DataTable { height: 1fr; margin: 0 1; }
    #arena-when { padding: 0 1; height: 1; }
    #arena-status { padding: 0 1; height: auto; text-style: bold; }
    #arena-me { padding: 0 1; height: auto; }
    """

    REFRESH_SECONDS = 3.0  # between two looks at the standings
    MESSAGE = "arena-message"
    FOCUS = "#standings"

    def __init__(self, arena: str) -> None:
        super().__init__()
        self.arena = arena
        self.reply: ArenaStandings | None = None
        self.lines: list[ArenaLine | None] = []
        #: The player chose to race here: join again after each race (until ``l``).
        self.racing_on = False
        #: In the arena's line (or asking to be).
        self.waiting = False
        #: The ids of this page's ``join_arena`` requests: their ``joined`` opens a race.
        self.asked: set[int] = set()
        #: The player's last arena race from this page, and the race whose end was seen.
        self.room: str | None = None
        self.ended: str | None = None

    def body(self) -> ComposeResult:
        yield Label(f"Arena {self.arena}", id="arena-title", classes="title")
        yield Static(id="arena-when")
        yield Static(id="arena-status")
        yield DataTable(id="standings", cursor_type="row")
        yield Static(id="arena-me")
        yield Static(id="arena-message", classes="message")
        yield Static("j: join · l: leave · Enter or w: watch their race · g: your race · r: refresh", classes="hint")
        yield Footer()

    def resumed(self) -> None:
        self.show_status()

    def on_unmount(self) -> None:
        """Closing the page leaves the arena: out of its line, and no next race."""
        self.racing_on = False
        client = self.client
        if self.waiting and client is not None:
            self.waiting = False
            arena = self.arena
            self.app.run_worker(client.request(lambda i: LeaveArena(id=i, arena=arena)), exit_on_error=False)

    # -- the player's races ------------------------------------------------------------------

    def race_state(self) -> str | None:
        """The state of the player's last race from this page (None: none, or not here yet)."""
        client = self.client
        mirror = None if client is None or self.room is None else client.rooms.get(self.room)
        return None if mirror is None else mirror.view().state

    def racing(self) -> bool:
        """Whether the player's race from this page is on."""
        return self.race_state() not in (None, "finished")

    def action_join(self) -> None:
        if self.reply is not None and self.reply.arena.state != "live":
            self.show_error("The arena is not live: you can join it while it runs.")
            return
        self.racing_on = True
        if self.racing():
            self.say("You race on after this race.")
        else:
            self.queue()

    def queue(self) -> None:
        """Wait in the arena's line; the ``joined`` of the race that forms opens it."""
        client = self.client
        if self.waiting or client is None:
            return
        self.waiting = True
        self.show_status()
        arena = self.arena

        def build(request_id: int) -> JoinArena:
            self.asked.add(request_id)  # before it is sent: its joined may come at any time after
            return JoinArena(id=request_id, arena=arena)

        async def join() -> None:
            try:
                await client.request(build)
            except ServerError as error:
                self.waiting = self.racing_on = False
                self.show_error(explain(error))
            except (ConnectionError, TimeoutError):
                self.waiting = False  # joined again once the connection is back
            self.show_status()

        self.run_worker(join(), exit_on_error=False)

    def action_leave(self) -> None:
        was_racing_on, self.racing_on = self.racing_on, False
        if self.waiting:
            self.leave_line("You left the arena's line: your points stay.")
        else:
            self.say("You will not be paired again after this race." if was_racing_on else "You are not in its line.")
        self.show_status()

    def leave_line(self, said: str = "") -> None:
        """Out of the arena's line (if a race formed first, its ``joined`` opens it)."""
        client, arena = self.client, self.arena
        self.waiting = False
        if client is None:
            return

        async def leave() -> None:
            try:
                await client.request(lambda i: LeaveArena(id=i, arena=arena))
            except ServerError as error:
                if error.code != "not-in-queue":
                    self.show_error(f"leave: {explain(error)}")
                return
            except (ConnectionError, TimeoutError):
                return  # the server drops a closed connection from the line
            if said:
                self.say(said)

        self.run_worker(leave(), exit_on_error=False)

    def on_server_event(self, event: ServerEvent) -> None:
        message = event.message
        if isinstance(message, Joined) and message.id in self.asked and message.role == "racer":
            self.asked.discard(message.id)
            self.waiting = False
            previous, self.room = self.room, message.room
            self.run_worker(self._open_race(message, previous), exit_on_error=False)
        elif event.room == self.room and self.race_state() == "finished" and self.ended != self.room:
            self.ended = self.room  # the race is over: its points, and the next race
            self.action_refresh()
            if self.racing_on:
                self.queue()
            self.show_status()

    async def _open_race(self, joined: Joined, previous: str | None) -> None:
        """The next race formed: the last race's screens close, its room is left, the race opens."""
        if self not in self.app.screen_stack:
            return
        while self.app.screen is not self:
            await self.app.pop_screen()
        client = self.client
        if client is not None and previous is not None and previous != joined.room and previous in client.rooms:
            try:
                await client.leave(previous)
            except (ConnectionError, TimeoutError):
                client.forget(previous)
        self.show_status()
        self.navigate(to.Game(joined.room, seat=joined.seat))

    def connection_changed(self, up: bool) -> None:
        if not up:
            self.waiting = False  # the server drops a closed connection from the line
        elif self.racing_on and not self.racing():
            self.queue()
        super().connection_changed(up)
        self.show_status()

    # -- the standings -----------------------------------------------------------------------

    def action_refresh(self) -> None:
        client, arena = self.client, self.arena
        if client is None:
            return

        async def ask() -> None:
            try:
                top = await client.request(lambda i: AskArena(id=i, arena=arena, limit=TOP))
                around = None
                if isinstance(top, ArenaStandings) and top.me is not None and top.me.rank > TOP:
                    around = await client.request(lambda i: AskArena(id=i, arena=arena, limit=AROUND, around=True))
            except (ServerError, ConnectionError, TimeoutError) as error:
                self.show_error(f"standings: {explain(error)}")
                return
            if isinstance(top, ArenaStandings):
                self.show(top, around if isinstance(around, ArenaStandings) else None)

        # The function, not a coroutine: a worker cancelled before it starts (exclusive) never
        # makes one, so none is left unawaited.
        worker: Worker[None] = self.run_worker(ask, group="standings", exclusive=True, exit_on_error=False)
        del worker  # named for its type only: Textual's overloads infer none from a function

    def show(self, top: ArenaStandings, around: ArenaStandings | None) -> None:
        self.reply = top
        if top.arena.state == "over":
            self.racing_on = False
            if self.waiting:
                self.leave_line()  # nobody is paired any more
        self.lines = standing_lines(top, around)
        client = self.client
        me = None if client is None else client.player
        table = self.query_one("#standings", DataTable)
        row = table.cursor_row
        table.clear(columns=True)
        table.add_columns(*COLUMNS)
        for n, line in enumerate(self.lines):
            if line is None:
                table.add_row("…", *[""] * (len(COLUMNS) - 1), key=f"gap-{n}")
                continue
            cells = line_cells(line, me)
            style = YOU_STYLE if line.player == me else ""
            table.add_row(*(Text(cell, style=style) for cell in cells), key=line.player)
        if self.lines:
            table.move_cursor(row=max(0, min(row, len(self.lines) - 1)))
        self.query_one("#arena-title", Label).update(escape(f"Arena: {top.arena.name}"))
        self.query_one("#arena-me", Static).update(escape(me_text(top)) if top.lines else "Nobody has raced yet.")
        self.tick()
        self.show_status()

    def tick(self) -> None:
        if self.reply is not None:
            self.query_one("#arena-when", Static).update(escape(arena_heading(self.reply.arena, now_ms())))

    def show_status(self) -> None:
        """What the player is doing here: waiting, racing, or how to start (or the final word)."""
        reply = self.reply
        if reply is not None and reply.arena.state == "over":
            text = final_text(reply)
        elif self.waiting:
            text = f"{WAITING} (l: leave)"
        elif self.racing():
            text = f"Your race in room {self.room} is on: g goes back to it."
        elif reply is not None and reply.arena.state == "upcoming":
            text = f"It starts at {utc_clock(reply.arena.starts, now_ms())}: join it then."
        else:
            text = "j: join, and race until the arena ends (paired again after each race)."
        self.query_one("#arena-status", Static).update(escape(text))

    # -- following the races -----------------------------------------------------------------

    def selected(self) -> ArenaLine | None:
        if not self.lines:
            return None
        row = self.query_one("#standings", DataTable).cursor_row
        return self.lines[max(0, min(row, len(self.lines) - 1))]

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        self.action_watch()

    def action_watch(self) -> None:
        """Watch the selected racer's race (15 s late, as the arena's rooms show it); yours: back to it."""
        line = self.selected()
        client = self.client
        if line is None or client is None:
            return
        if line.room is None:
            self.say(f"{line.name} is not racing now.")
        elif line.player == client.player or client.roles.get(line.room) == "racer":
            self.navigate(to.Game(line.room))
        else:
            self.navigate(to.Spectate(line.room))

    def action_your_race(self) -> None:
        if self.racing() and self.room is not None:
            self.navigate(to.Game(self.room))
        else:
            self.say("You have no race on now.")
