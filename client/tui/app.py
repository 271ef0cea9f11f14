"""The terminal UI's application: the saved name and token, the connection (kept up
in the background, with a banner while it is down), and the screens.

The client library's listeners run on the UI's event loop; they post each frame to
every open screen as a :class:`ServerEvent`, so screens update from their own message
queues and nothing blocks the loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.app import App
from textual.message import Message
from websockets.exceptions import InvalidHandshake, InvalidURI

from client.connection import RaceClient, ServerError
from client.settings import Settings
from client.settings import config_dir as settings_dir
from client.tui.base import ClientScreen, ConnectionChanged, ServerEvent
from protocol.messages import Goodbye, ServerMessage


class RaceApp(App[int]):
    """``RaceApp(url)``: the whole terminal client. ``watch`` opens a room as a spectator
    straight away."""

    TITLE = "Solitaire Race"
    CSS = """
    Screen { background: $surface; }
    .title { text-style: bold; color: $accent; padding: 0 1; }
    .hint { color: $text-muted; padding: 0 1; }
    .message { height: auto; max-height: 2; padding: 0 1; }
    .message.error { color: $error; text-style: bold; }
    .message.good { color: $success; }
    """

    def __init__(self, url: str, config_dir: str | Path | None = None, watch: str | None = None) -> None:
        super().__init__()
        self.url = url
        self.settings = Settings.load(settings_dir(config_dir))
        self.watch_code = watch
        self.client: RaceClient | None = None
        self.banner: str | None = None
        self._connecting: asyncio.Task[None] | None = None

    def on_mount(self) -> None:
        from client.tui.home import HomeScreen, NameScreen

        self.push_screen(HomeScreen())
        if self.settings.name is None:
            self.push_screen(NameScreen())
        else:
            self.connect()

    # -- the connection --------------------------------------------------------------------

    def set_name(self, name: str) -> None:
        """Remember ``name`` and (re)connect as that name, keeping the player's token."""
        self.settings.name = name
        self.settings.save()
        self.connect()

    def connect(self) -> None:
        if self._connecting is not None and not self._connecting.done():
            return
        self._connecting = asyncio.create_task(self._connect_or_report())

    async def _connect_or_report(self) -> None:
        try:
            await self._connect()
        except Exception as error:  # a bug: say so on screen rather than lose it in a task
            self.set_banner(f"Could not connect: {type(error).__name__}: {error}")
            raise

    async def _connect(self) -> None:
        old, self.client = self.client, None
        if old is not None:
            await old.close()
        name = self.settings.name or "Player"
        delay = 0.5
        while True:
            token = self.settings.tokens.get(self.url)
            try:
                client = await RaceClient.connect(self.url, name, resume=token)
                break
            except ServerError as error:
                if error.code == "invalid-token":
                    # This server does not know our token (its data was reset): a new player.
                    self.settings.tokens.pop(self.url, None)
                    continue
                if error.code == "invalid-name":
                    from client.tui.home import NameScreen

                    self.set_banner(None)
                    self.push_screen(NameScreen(error=str(error)))
                    return
                self.set_banner(f"The server refused us: {error}. Retrying…")
            except (OSError, TimeoutError, InvalidHandshake, InvalidURI) as error:
                self.set_banner(f"Cannot reach {self.url} ({type(error).__name__}); retrying in {delay:.0f} s…")
            await asyncio.sleep(delay)
            delay = min(delay * 2, 10.0)
        if client.resume is not None:
            self.settings.tokens[self.url] = client.resume
        if client.name != self.settings.name:
            self.settings.name = client.name
        self.settings.save()
        client.listen(self._on_frame)
        client.listen_connection(self._on_connection)
        self.client = client
        self.set_banner(None)
        self._broadcast(lambda: ConnectionChanged(True))
        if self.watch_code is not None:
            from client.tui.spectate import SpectateScreen

            code, self.watch_code = self.watch_code, None
            self.push_screen(SpectateScreen(code))

    def _on_frame(self, room: str, message: ServerMessage) -> None:
        if isinstance(message, Goodbye):
            self.set_banner(f"The server is going away ({message.reason}). Reconnecting…")
        self._broadcast(lambda: ServerEvent(room, message))

    def _on_connection(self, up: bool) -> None:
        client = self.client
        if up:
            self.set_banner(None)
            self.notify("Reconnected.")
            if client is not None and client.resume is not None and client.resume != self.settings.tokens.get(self.url):
                self.settings.tokens[self.url] = client.resume
                self.settings.save()
        elif client is not None and client.goodbye is None:
            self.set_banner("Connection lost. Reconnecting…")
        self._broadcast(lambda: ConnectionChanged(up))

    def _broadcast(self, make: Callable[[], Message]) -> None:
        """Post a fresh message (one object per receiver) to every open screen."""
        for screen in self.screen_stack:
            if isinstance(screen, ClientScreen):
                screen.post_message(make())

    def set_banner(self, text: str | None) -> None:
        self.banner = text
        for screen in self.screen_stack:
            if isinstance(screen, ClientScreen) and screen.is_mounted:
                screen.show_banner(text)

    async def action_quit(self) -> None:
        if self.client is not None:
            await self.client.close()
        self.exit(0)

    async def on_unmount(self) -> None:
        if self._connecting is not None:
            self._connecting.cancel()
        if self.client is not None:
            await self.client.close()
