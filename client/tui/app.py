"""The terminal UI's application: the saved name and token, the connection (kept up
in the background, with a banner while it is down), the bots it races in-process, and
navigation: screens post :class:`~client.tui.navigation.Navigate` and only this module
builds screens, so the screens never import one another.

Accounts: each ``account`` reply (register, log in, new password) saves the account's
token and name, so the next start resumes the account. When the server ends the session
(4001: logged out here, everywhere, or by a password change elsewhere) the token is
forgotten and the app connects again as a new guest, saying why.

The client library's listeners run on the UI's event loop; they post each frame to
every open screen as a :class:`ServerEvent`, so screens update from their own message
queues and nothing blocks the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, assert_never

from textual.app import App
from textual.binding import Binding, BindingType
from textual.message import Message
from websockets.exceptions import InvalidHandshake, InvalidURI

from client.lib.bot import Level, join_and_stay
from client.lib.connection import RaceClient, ServerError
from client.lib.settings import Settings
from client.lib.settings import config_dir as settings_dir
from client.render.brackets import next_round_notice, started_notice
from client.render.challenges import result_notice, waiting_notice
from client.tui import commitments
from client.tui import navigation as to
from client.tui.account import LoginScreen, LogoutScreen, PasswordScreen, RegisterScreen
from client.tui.arenas import ArenaScreen, ArenasScreen
from client.tui.base import ClientScreen, ConnectionChanged, ServerEvent
from client.tui.botrace import BotRaceScreen
from client.tui.brackets import BracketScreen, BracketsScreen
from client.tui.challenges import ChallengeFormScreen, ChallengesScreen
from client.tui.daily import DailyScreen
from client.tui.game import GameScreen
from client.tui.ghost import GhostScreen
from client.tui.help import HelpScreen, RulesScreen
from client.tui.home import CreateScreen, HomeScreen, JoinScreen, NameScreen
from client.tui.lobby import LobbyScreen
from client.tui.play_hub import PlayHubScreen
from client.tui.quick import QuickScreen
from client.tui.results import ReplayScreen, ResultsScreen
from client.tui.spectate import SpectateScreen
from client.tui.standings import LeaderboardScreen, StatsScreen
from protocol.messages import (
    AccountInfo,
    BracketStarted,
    ChallengeResult,
    ChallengeWaiting,
    Goodbye,
    RoundClosed,
    ServerMessage,
    Snapshot,
    Update,
    Variant,
)


class RaceApp(App[int]):
    """``RaceApp(url)``: the whole terminal client. ``watch`` opens a room as a spectator
    straight away; ``bot_race`` (game, level) starts a race against a bot straight away.
    ``bot_delay`` sets the seconds between the moves of the bots it starts (None: their
    level's pace)."""

    TITLE = "Solitaire Race"
    CSS = """
    Screen { background: $surface; }
    .title { text-style: bold; color: $accent; padding: 0 1; }
    .hint { color: $text-muted; padding: 0 1; }
    .message { height: auto; max-height: 2; padding: 0 1; }
    .message.error { color: $error; text-style: bold; }
    .message.good { color: $success; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("ctrl+q", "quit", "Quit", show=False)]

    def __init__(
        self,
        url: str,
        config_dir: str | Path | None = None,
        watch: str | None = None,
        bot_race: tuple[Variant, Level] | None = None,
        bot_delay: float | None = None,
    ) -> None:
        super().__init__()
        self.url = url
        self.settings = Settings.load(settings_dir(config_dir))
        self.watch_code = watch
        self.bot_race = bot_race
        self.bot_delay = bot_delay
        self.client: RaceClient | None = None
        self.banner: str | None = None
        self._connecting: asyncio.Task[None] | None = None
        #: Whether the player was an account when last seen (to notice a session that ended).
        self._account = False
        self._bots: dict[str, asyncio.Task[None]] = {}
        #: The pushed news already told (a push may come again: the same news is told once).
        self._told: set[str] = set()

    def on_mount(self) -> None:
        self.push_screen(HomeScreen())
        if self.settings.name is None:
            self.push_screen(NameScreen(first=True))
        else:
            self.connect()

    # -- navigation ------------------------------------------------------------------------

    def on_navigate(self, message: to.Navigate) -> None:
        route = message.route
        if isinstance(route, to.Home):
            self.run_worker(self._pop_to_home(), exit_on_error=False)
            return
        if isinstance(route, to.Arena):
            # Back to the arena's page under the race, which races on from there.
            page = next((s for s in self.screen_stack if isinstance(s, ArenaScreen) and s.arena == route.arena), None)
            if page is not None:
                self.run_worker(self._pop_to(page), exit_on_error=False)
                return
        screen = self.screen_for(route)
        if message.replace:
            self.switch_screen(screen)
        else:
            self.push_screen(screen)

    async def _pop_to(self, screen: ClientScreen) -> None:
        while screen in self.screen_stack and self.screen is not screen:
            await self.pop_screen()

    async def _pop_to_home(self) -> None:
        while len(self.screen_stack) > 1 and not isinstance(self.screen, HomeScreen):
            await self.pop_screen()

    @staticmethod
    def screen_for(route: to.Route) -> ClientScreen:
        """The screen a route names (every screen of the UI is built here)."""
        match route:
            case to.Home():
                return HomeScreen()
            case to.Name(error=error, first=first):
                return NameScreen(error=error, first=first)
            case to.Game(code=code, seat=seat):
                return GameScreen(code, seat=seat)
            case to.Results(code=code):
                return ResultsScreen(code)
            case to.Spectate(code=code):
                return SpectateScreen(code)
            case to.Daily(variant=variant):
                return DailyScreen(variant)
            case to.Leaderboards(variant=variant, board=board):
                return LeaderboardScreen(variant, board)
            case to.Stats():
                return StatsScreen()
            case to.Quick():
                return QuickScreen()
            case to.Lobby():
                return LobbyScreen()
            case to.Create(practice=practice):
                return CreateScreen(practice=practice)
            case to.Join():
                return JoinScreen()
            case to.BotRace(variant=variant, level=level):
                return BotRaceScreen(variant, level)
            case to.Account(action=action):
                match action:
                    case "register":
                        return RegisterScreen()
                    case "login":
                        return LoginScreen()
                    case "password":
                        return PasswordScreen()
                    case "logout":
                        return LogoutScreen()
            case to.Challenges():
                return ChallengesScreen()
            case to.ChallengeForm(kind=kind, player=player, name=name):
                return ChallengeFormScreen(kind, player, name)
            case to.Arenas():
                return ArenasScreen()
            case to.Arena(arena=arena):
                return ArenaScreen(arena)
            case to.Brackets():
                return BracketsScreen()
            case to.Bracket(bracket=bracket):
                return BracketScreen(bracket)
            case to.ReplayRun(replay=replay, piles=piles):
                return ReplayScreen(replay, piles)
            case to.Play():
                return PlayHubScreen()
            case to.Ghost():
                return GhostScreen()
            case to.Help():
                return HelpScreen()
            case to.Rules(variant=variant):
                return RulesScreen(variant)
            case _:
                assert_never(route)

    # -- bots raced in this process ----------------------------------------------------------

    def start_bot(self, code: str, level: Level) -> None:
        """A bot of ``level`` joins room ``code`` on a connection of its own, and stays
        there for rematches until the player leaves (or the app closes)."""

        async def run() -> None:
            try:
                await join_and_stay(self.url, code, level, delay=self.bot_delay)
            except (ServerError, ConnectionError, OSError, TimeoutError) as error:
                self.notify(f"The bot stopped: {error}", severity="warning")

        self.stop_bot(code)
        task = asyncio.create_task(run())
        self._bots[code] = task
        task.add_done_callback(lambda done: self._bots.pop(code, None) if self._bots.get(code) is done else None)

    def stop_bot(self, code: str) -> None:
        """Send away the bot started for room ``code`` (the player left it), if any."""
        task = self._bots.pop(code, None)
        if task is not None:
            task.cancel()

    def has_bot(self, code: str) -> bool:
        """Whether this client runs a bot in room ``code`` (its "Race a bot" room)."""
        return code in self._bots

    # -- the connection --------------------------------------------------------------------

    def set_name(self, name: str) -> None:
        """Remember ``name`` and (re)connect as that name, keeping the player's token."""
        self.settings.name = name
        self.settings.save()
        self.connect()

    def connect(self) -> None:
        """Connect (again) in the background, closing the current connection first."""
        if self._connecting is not None and not self._connecting.done():
            return
        old, self.client = self.client, None
        self._connecting = asyncio.create_task(self._connect_or_report(old))

    async def _connect_or_report(self, old: RaceClient | None) -> None:
        try:
            if old is not None:
                await old.close()
            await self._connect()
        except Exception as error:  # a bug: say so on screen rather than lose it in a task
            self.set_banner(f"Could not connect: {type(error).__name__}: {error}")
            raise

    async def _connect(self) -> None:
        name = self.settings.name or "Player"
        delay = 0.5
        while True:
            token = self.settings.tokens.get(self.url)
            try:
                client = await RaceClient.connect(self.url, name, resume=token)
                break
            except ServerError as error:
                if error.code == "invalid-token":
                    # This server does not know our token (its data was reset), or the account's
                    # tokens were revoked (logged out everywhere, new password): a new player.
                    self.settings.tokens.pop(self.url, None)
                    self.notify(f"Your saved session was refused ({error}). You play as a new guest.", timeout=10)
                    continue
                if error.code == "invalid-name":
                    self.set_banner(None)
                    self.push_screen(NameScreen(error=str(error), first=True))
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
        client.listen(lambda room, message: self._on_frame(client, room, message))
        client.listen_connection(lambda up: self._on_connection(client, up))
        self.client, self._account = client, client.account
        self.set_banner(None)
        self._broadcast(lambda: ConnectionChanged(True))
        if self.watch_code is not None:
            code, self.watch_code = self.watch_code, None
            self.push_screen(SpectateScreen(code))
        if self.bot_race is not None:
            (variant, level), self.bot_race = self.bot_race, None
            self.push_screen(BotRaceScreen(variant, level))

    def _on_frame(self, client: RaceClient, room: str, message: ServerMessage) -> None:
        if isinstance(message, AccountInfo):
            # Registered, logged in or a new password: the library holds the account's new token.
            self._account = True
            self.settings.name = client.name
            if client.resume is not None:
                self.settings.tokens[self.url] = client.resume
            self.settings.save()
        if isinstance(message, Goodbye):
            self.set_banner(f"The server is going away ({message.reason}). Reconnecting…")
        mirror = client.rooms.get(room) if isinstance(message, Snapshot | Update) else None
        commitments.note(self.settings, self.url, message, None if mirror is None else mirror.view())
        self._tell(message)
        self._broadcast(lambda: ServerEvent(room, message))

    def _tell(self, message: ServerMessage) -> None:
        """Notify the player of news the server pushed (a challenge's result; a challenge that
        waits for their run; a bracket they registered for started, or was cancelled; a round
        closed from which they go on), once each, whichever screen shows."""
        now = time.time() * 1000
        text: str | None
        if isinstance(message, ChallengeResult):
            news, text = f"challenge {message.challenge.id}", result_notice(message.challenge, now)
        elif isinstance(message, ChallengeWaiting):
            news, text = f"challenge {message.challenge.id} waiting", waiting_notice(message.challenge, now)
        elif isinstance(message, BracketStarted):
            news, text = f"bracket {message.bracket.id} started", started_notice(message, now)
        elif isinstance(message, RoundClosed):
            news, text = f"bracket {message.bracket.id} {message.round.number}", next_round_notice(message, now)
        else:
            return
        if text is not None and news not in self._told:
            self._told.add(news)
            self.notify(text, title="Solitaire Race", markup=False, timeout=15)

    def _on_connection(self, client: RaceClient, up: bool) -> None:
        if client is not self.client:
            return  # a connection already replaced
        if up:
            self.set_banner(None)
            self.notify("Reconnected.")
            if client.resume is not None and client.resume != self.settings.tokens.get(self.url):
                self.settings.tokens[self.url] = client.resume
                self.settings.save()
            if self._account and not client.account:
                self.notify("The server no longer knows your session: you play as a new guest.", timeout=10)
            self._account = client.account
        elif client.ended is not None:
            self._session_ended(client)
        elif client.goodbye is None:
            self.set_banner("Connection lost. Reconnecting…")
        self._broadcast(lambda: ConnectionChanged(up))

    def _session_ended(self, client: RaceClient) -> None:
        """The server closed the connection for good: after a logout (here, everywhere, or a
        password changed elsewhere) forget the token and carry on as a new guest; when banned,
        say so and stop."""
        ended = client.ended
        assert ended is not None
        if not ended.logged_out:
            self.set_banner(f"The server closed the connection: {ended.reason or ended.code}.")
            return
        self.settings.tokens.pop(self.url, None)
        self.settings.save()
        self._account = False
        reason = ended.reason or "logged out"
        said = f"{reason[0].upper()}{reason[1:]}." if reason.startswith("logged out") else f"Logged out: {reason}."
        self.notify(f"{said} You play as a new guest now.", timeout=10)
        self.connect()

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
        for task in list(self._bots.values()):
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        if self.client is not None:
            await self.client.close()
