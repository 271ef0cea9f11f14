"""What every screen of the terminal UI shares: the connection banner, the messages
that carry server frames to the screens, and a way to run a request without blocking
the UI and report its failure in words."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, TypeVar, cast

from textual.app import ComposeResult
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Static

from client.connection import RaceClient, ServerError
from protocol.messages import ClientMessage, ServerMessage

if TYPE_CHECKING:
    from client.tui.app import RaceApp

T = TypeVar("T")


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

    DEFAULT_CSS = """
    #banner { dock: top; height: 1; background: $error; color: $text; text-style: bold; display: none; }
    #banner.shown { display: block; }
    """

    def compose(self) -> ComposeResult:
        yield Static(id="banner")
        yield from self.body()

    def body(self) -> ComposeResult:
        return iter(())

    @property
    def race_app(self) -> RaceApp:
        from client.tui.app import RaceApp

        return cast(RaceApp, self.app)

    @property
    def client(self) -> RaceClient | None:
        return self.race_app.client

    def on_mount(self) -> None:
        self.show_banner(self.race_app.banner)

    def on_screen_resume(self) -> None:
        self.show_banner(self.race_app.banner)

    def show_banner(self, text: str | None) -> None:
        banner = self.query_one("#banner", Static)
        banner.update(text or "")
        banner.set_class(bool(text), "shown")

    def go_home(self) -> None:
        """Close every screen above the home menu."""
        from client.tui.home import HomeScreen

        async def pop() -> None:
            while len(self.app.screen_stack) > 1 and not isinstance(self.app.screen, HomeScreen):
                await self.app.pop_screen()

        self.app.run_worker(pop(), exit_on_error=False)

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
