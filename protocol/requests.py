"""Client requests: every message a client may send (a tagged union, ``type`` names each)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from protocol.values import Date, LobbyCursor, MoveText, PlayerName, RequestId, RoomCode, RoomOptions, Variant


class _Request(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    """Base of client requests: every request carries a client-chosen ``id``."""

    id: RequestId


class Hello(_Request, tag="hello", omit_defaults=True):
    protocol: int
    name: PlayerName
    resume: Annotated[str, Meta(max_length=256)] | None = None
    #: The player is a program (``python -m client bot``); the server shows it on the seat and in
    #: results. Omitted when false (so a client that is no bot sends what it always sent).
    bot: bool = False


class CreateRoom(_Request, tag="create_room"):
    variant: Variant
    options: RoomOptions = RoomOptions()


class JoinRoom(_Request, tag="join"):
    room: RoomCode


class Spectate(_Request, tag="spectate"):
    room: RoomCode


class Leave(_Request, tag="leave"):
    room: RoomCode


class ListRooms(_Request, tag="list_rooms", omit_defaults=True):
    """A page of the lobby. Omitted fields (as old clients send it) ask for the first page,
    both games."""

    #: The page after the one whose ``lobby.next`` this is; None: the first page.
    after: LobbyCursor | None = None
    #: Only this game's rooms; None: both games.
    variant: Variant | None = None


class Ready(_Request, tag="ready"):
    room: RoomCode
    ready: bool = True


class Start(_Request, tag="start"):
    room: RoomCode


class PlayMove(_Request, tag="move"):
    room: RoomCode
    move: MoveText


class Undo(_Request, tag="undo"):
    room: RoomCode


class AskHint(_Request, tag="hint"):
    room: RoomCode


class AskLegalMoves(_Request, tag="legal_moves"):
    room: RoomCode


class Resign(_Request, tag="resign"):
    room: RoomCode


class Rematch(_Request, tag="rematch"):
    room: RoomCode


class AskSnapshot(_Request, tag="snapshot"):
    room: RoomCode


class AskRaceLog(_Request, tag="race_log"):
    room: RoomCode
    #: Which race of the room; nil means its latest finished race.
    race: Annotated[int, Meta(ge=1, le=2**31)] | None = None


class QuickMatch(_Request, tag="quick_match"):
    """Wait in the quick-match line of ``variant``: an Ack now, then, when a race forms, a
    Joined carrying this request's id and a Snapshot; the race's countdown starts by itself."""

    variant: Variant


class LeaveQueue(_Request, tag="leave_queue"):
    variant: Variant


class AskDaily(_Request, tag="daily"):
    """Today's daily challenge of ``variant`` (answered by :class:`DailyInfo`)."""

    variant: Variant


class StartDaily(_Request, tag="start_daily"):
    """Play a daily challenge: today's (``date`` None or today) once per account, ranked, and
    in no other way; an earlier day's as practice, with hints, as often as you like.
    Answered by Joined and a Snapshot of a one-racer room."""

    variant: Variant
    date: Date | None = None


LeaderboardName = Literal["daily", "best-time", "wins", "streak", "rating"]


class AskLeaderboard(_Request, tag="leaderboard"):
    """A leaderboard: the top ``limit`` entries, or with ``around`` the entries around you.
    ``date`` (YYYY-MM-DD) picks the day of a daily board; today by default."""

    variant: Variant
    board: LeaderboardName = "daily"
    date: Annotated[str, Meta(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    limit: Annotated[int, Meta(ge=1, le=100)] = 10
    around: bool = False


class AskStats(_Request, tag="stats"):
    """A player's statistics in ``variant`` (yours by default)."""

    variant: Variant
    player: Annotated[str, Meta(max_length=32)] | None = None


class AskReplay(_Request, tag="replay"):
    """One racer's game of a finished race, step by step (see :class:`Replay`)."""

    room: RoomCode
    seat: Annotated[int, Meta(ge=0, le=7)]
    #: Which race of the room; nil means its latest finished race.
    race: Annotated[int, Meta(ge=1, le=2**31)] | None = None


#: Never logged, never stored: only its argon2 hash is kept.
Password = Annotated[str, Meta(min_length=1, max_length=128)]


class Register(_Request, tag="register"):
    """Make this connection's player (a guest) an account named ``name``: it keeps its player
    id, statistics and rating. Answered by :class:`~protocol.replies.AccountInfo`."""

    name: PlayerName
    password: Password


class Login(_Request, tag="login"):
    """Become the account ``name`` on this connection (answered by ``AccountInfo``)."""

    name: PlayerName
    password: Password


class Logout(_Request, tag="logout"):
    """End this connection's session (Ack, then close 4001); ``everywhere`` revokes every
    resume token of the account and closes all its connections."""

    everywhere: bool = False


class ChangePassword(_Request, tag="change_password"):
    """Change the account's password: every other token is revoked; answered by
    ``AccountInfo`` with this connection's new token."""

    password: Password
    new_password: Password


ClientMessage = (
    Hello
    | CreateRoom
    | JoinRoom
    | Spectate
    | Leave
    | ListRooms
    | Ready
    | Start
    | PlayMove
    | Undo
    | AskHint
    | AskLegalMoves
    | Resign
    | Rematch
    | AskSnapshot
    | AskRaceLog
    | AskReplay
    | QuickMatch
    | LeaveQueue
    | AskDaily
    | StartDaily
    | AskLeaderboard
    | AskStats
    | Register
    | Login
    | Logout
    | ChangePassword
)
