"""How a screen asks for another: it posts :class:`Navigate` with a route, a frozen value
naming the screen and its arguments, and the app (the one module that knows every screen
class) builds and shows it. So no screen imports another, and the screens form no cycle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from textual.message import Message

from client.lib.bot import Level
from protocol.messages import LeaderboardName, PileInfo, Replay, Variant


@dataclass(frozen=True)
class Home:
    """The home menu: every screen above it closes."""


@dataclass(frozen=True)
class Name:
    """The name prompt (``error``: why the server refused the last name)."""

    error: str | None = None
    first: bool = False


@dataclass(frozen=True)
class Game:
    """A room where the player has (or is taking) a seat."""

    code: str
    seat: int | None = None


@dataclass(frozen=True)
class Results:
    code: str


@dataclass(frozen=True)
class Spectate:
    code: str


@dataclass(frozen=True)
class Daily:
    variant: Variant


@dataclass(frozen=True)
class Leaderboards:
    """The leaderboards, on Antares first as the daily challenge (and the web client's daily page)."""

    variant: Variant = "antares"
    board: LeaderboardName = "daily"


@dataclass(frozen=True)
class Stats:
    pass


@dataclass(frozen=True)
class Quick:
    pass


@dataclass(frozen=True)
class Lobby:
    pass


@dataclass(frozen=True)
class Create:
    practice: bool


@dataclass(frozen=True)
class Join:
    pass


@dataclass(frozen=True)
class BotRace:
    """Choose a game and a bot's level; ``variant`` and ``level`` given: start at once."""

    variant: Variant | None = None
    level: Level | None = None


#: The account screens: register, log in, change the password, log out.
AccountAction = Literal["register", "login", "password", "logout"]


@dataclass(frozen=True)
class Account:
    """One of the account screens (``action``)."""

    action: AccountAction


@dataclass(frozen=True)
class Challenges:
    """Your challenges (the inbox), and the ways to start one."""


#: The challenge forms: challenge someone, take a challenge by its id, an async match.
ChallengeKind = Literal["challenge", "take", "async"]


@dataclass(frozen=True)
class ChallengeForm:
    """A challenge form (``kind``); ``player`` (and their ``name``): the rival to challenge."""

    kind: ChallengeKind = "challenge"
    player: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class ReplayRun:
    """A run's replay, already fetched (``piles``: its game's board layout)."""

    replay: Replay
    piles: list[PileInfo]


@dataclass(frozen=True)
class Arenas:
    """The arena tournaments: live, upcoming and recently over."""


@dataclass(frozen=True)
class Arena:
    """Arena ``arena``'s page: joining, leaving and its standings (shown again, not opened
    twice, when it is already open under the race)."""

    arena: str


@dataclass(frozen=True)
class Brackets:
    """The bracket tournaments: being played, open to registration, and recently over."""


@dataclass(frozen=True)
class Bracket:
    """Bracket ``bracket``'s page: registering, playing your round, its rounds and standings."""

    bracket: str


@dataclass(frozen=True)
class Play:
    """The Play hub: every way to race, and the challenges waiting for the player."""


@dataclass(frozen=True)
class Ghost:
    """The ghost race form: race a kept best run on a deal, or a finished race's run (a replay link)."""


@dataclass(frozen=True)
class Help:
    pass


@dataclass(frozen=True)
class Rules:
    variant: Variant


Route = (
    Home
    | Name
    | Game
    | Results
    | Spectate
    | Daily
    | Leaderboards
    | Stats
    | Quick
    | Lobby
    | Create
    | Join
    | BotRace
    | Account
    | Challenges
    | ChallengeForm
    | ReplayRun
    | Arenas
    | Arena
    | Brackets
    | Bracket
    | Play
    | Ghost
    | Help
    | Rules
)


class Navigate(Message):
    """Show ``route``: on top of the current screen, or (``replace``) instead of it."""

    def __init__(self, route: Route, replace: bool = False) -> None:
        super().__init__()
        self.route = route
        self.replace = replace
