"""What every screen of the terminal UI shares: the connection banner, the messages
that carry server frames to the screens, and a way to run a request without blocking
the UI and report its failure in words."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import ClassVar, Protocol, TypeVar, cast

from textual import events
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Select, Static

from client.lib.bot import Level
from client.lib.connection import RaceClient, ServerError
from client.lib.settings import Settings
from client.tui.navigation import Help, Home, Navigate, Route
from protocol.messages import ClientMessage, ServerMessage

T = TypeVar("T")

#: The smallest terminal the screens are laid out for.
MIN_WIDTH, MIN_HEIGHT = 80, 24


class ClientApp(Protocol):
    """What screens use of the app (the app itself imports the screens, so they name
    it only by this protocol)."""

    url: str
    settings: Settings
    client: RaceClient | None
    banner: str | None

    def set_name(self, name: str) -> None: ...

    def start_bot(self, code: str, level: Level) -> None: ...

    def stop_bot(self, code: str) -> None: ...

    def has_bot(self, code: str) -> bool: ...


class ServerEvent(Message):
    """A frame from the server, after the client library applied it to its room copies."""

    def __init__(self, room: str, message: ServerMessage) -> None:
        super().__init__()
        self.room = room
        self.message = message


class ConnectionChanged(Message):
    """The connection dropped (``up`` False) or is back with its rooms restored (True)."""

    def __init__(self, up: bool) -> None:
        super().__init__()
        self.up = up


def explain(error: BaseException) -> str:
    """A failed request, in words for the player."""
    if isinstance(error, ServerError):
        return str(error)
    if isinstance(error, TimeoutError):
        return "the server did not answer in time; try again"
    return "not connected to the server: wait for the connection to come back, then try again"


class ClientScreen(Screen[None]):
    """A screen with the connection banner on top. Subclasses compose their body in
    :meth:`body` and handle frames in ``on_server_event``."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("f1,question_mark", "help", "Help")]

    DEFAULT_CSS = """
    #banner { dock: top; height: 1; background: $error; color: $text; text-style: bold; display: none; }
    #banner.shown { display: block; }
    #too-small { dock: top; width: 100%; height: 100%; display: none; background: $error-darken-2;
                 color: $text; text-style: bold; content-align: center middle; padding: 1 2; }
    #too-small.shown { display: block; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="banner")
        yield from self.body()
        # Composed last and docked over everything: below 80x24 the board would be garbled.
        yield Static(id="too-small")

    def body(self) -> ComposeResult:
        return iter(())

    @property
    def race_app(self) -> ClientApp:
        return cast(ClientApp, self.app)

    @property
    def client(self) -> RaceClient | None:
        return self.race_app.client

    def on_mount(self) -> None:
        self.show_banner(self.race_app.banner)
        self.check_size()

    def on_screen_resume(self) -> None:
        self.show_banner(self.race_app.banner)
        self.check_size()

    def on_resize(self, event: events.Resize) -> None:
        self.check_size()

    def check_size(self) -> None:
        """Cover the screen with a notice while the terminal is smaller than 80x24."""
        width, height = self.app.size
        small = width < MIN_WIDTH or height < MIN_HEIGHT
        notice = self.query_one("#too-small", Static)
        if small:
            notice.update(
                f"The terminal is too small: {width} x {height}.\n\n"
                f"Make it at least {MIN_WIDTH} x {MIN_HEIGHT} (resize the window, or a smaller font)."
            )
        notice.set_class(small, "shown")

    def navigate(self, route: Route, replace: bool = False) -> None:
        """Ask the app for the screen ``route`` (on top of this one, or ``replace``-ing it)."""
        self.app.post_message(Navigate(route, replace))

    def action_help(self) -> None:
        self.navigate(Help())

    def show_banner(self, text: str | None) -> None:
        banner = self.query_one("#banner", Static)
        banner.update(text or "")
        banner.set_class(bool(text), "shown")

    def go_home(self) -> None:
        """Close every screen above the home menu."""
        self.navigate(Home())

    def show_error(self, text: str) -> None:
        """Tell the player a request failed (screens with a message line override this)."""
        self.notify(text, severity="error")

    def call(
        self, make: Callable[[RaceClient], Awaitable[T]], done: Callable[[T], None] | None = None, what: str = ""
    ) -> None:
        """Run ``make(client)`` in a worker; hand its result to ``done``, or show why it failed."""
        client = self.client
        if client is None:
            self.show_error("not connected to the server yet")
            return

        async def run() -> None:
            try:
                result = await make(client)
            except (ServerError, ConnectionError, TimeoutError) as error:
                self.show_error(f"{what}: {explain(error)}" if what else explain(error))
                return
            if done is not None:
                done(result)

        self.run_worker(run(), exit_on_error=False)

    def request(
        self, build: Callable[[int], ClientMessage], done: Callable[[ServerMessage], None] | None = None, what: str = ""
    ) -> None:
        """Send a request in a worker (see :meth:`call`)."""
        self.call(lambda client: client.request(build), done, what)


class FormScreen(ClientScreen):
    """A screen of fields: Escape closes an open drop-down list first, then leaves the form."""

    def action_back(self) -> None:
        """Close an open list first; otherwise leave the form."""
        for select in self.query(Select):
            if select.expanded:
                select.expanded = False
                select.focus()
                return
        self.app.pop_screen()
