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


LeaderboardName = Literal["daily", "best-time", "wins", "streak", "rating", "weekly", "season"]


class AskLeaderboard(_Request, tag="leaderboard", omit_defaults=True):
    """A leaderboard: the top ``limit`` entries, or with ``around`` the entries around you.
    ``date`` (YYYY-MM-DD) picks the day of a daily board; today by default. ``period`` picks
    the week (``2026-W49``) of a weekly board or the season (``2026-Q4``) of a season board;
    the current one (UTC) by default."""

    variant: Variant
    board: LeaderboardName = "daily"
    date: Annotated[str, Meta(pattern=r"^\d{4}-\d{2}-\d{2}$")] | None = None
    period: Annotated[str, Meta(pattern=r"^[0-9]{4}-(W[0-9]{2}|Q[0-9])$")] | None = None
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


class RaceGhost(_Request, tag="race_ghost", omit_defaults=True):
    """Race a recorded run on its deal: a practice room for you and the run's ghost, which
    plays the run's moves on their recorded timing; its countdown starts at once (answered
    like ``create_room``: Joined, then a Snapshot). Name the run one way:

    - ``room`` (with ``seat``, and ``race``: its latest finished race by default): a
      finished race's run, as a replay names it;
    - ``variant`` and ``deal``, or ``date`` (a past daily challenge's deal): a kept best
      run on that deal, ``player``'s (yours when neither ``player`` nor ``rank`` is given)
      or the ``rank``-th fastest.

    Never a run of today's daily challenge, nor on its deal. Never rated."""

    room: RoomCode | None = None
    race: Annotated[int, Meta(ge=1, le=2**31)] | None = None
    seat: Annotated[int, Meta(ge=0, le=7)] = 0
    variant: Variant | None = None
    deal: Annotated[str, Meta(min_length=1, max_length=24)] | None = None
    date: Date | None = None
    player: Annotated[str, Meta(max_length=32)] | None = None
    rank: Annotated[int, Meta(ge=1, le=100)] | None = None


class ChallengePlayer(_Request, tag="challenge", omit_defaults=True):
    """Challenge ``player`` (a player id), or anyone you give the challenge's id to (no
    ``player``), to a deal: you play it now, they have ``hours`` to play the same deal.
    Answered by Joined and a Snapshot of your run's room, whose view names the challenge."""

    variant: Variant
    player: Annotated[str, Meta(min_length=1, max_length=32)] | None = None
    rated: bool = True
    hours: Annotated[int, Meta(ge=1, le=72)] = 24


class AcceptChallenge(_Request, tag="accept_challenge"):
    """Play your run of challenge ``challenge`` (one you were invited to, or an open one):
    Joined and a Snapshot of its room."""

    challenge: Annotated[str, Meta(min_length=1, max_length=16)]


class AsyncMatch(_Request, tag="async_match"):
    """Race someone who is not online: play the deal of a waiting challenger near your rating
    now, or, if none waits, a new deal whose run waits for the next player (Joined, Snapshot)."""

    variant: Variant


class AskInbox(_Request, tag="inbox"):
    """Your challenges: pending ones and results (answered by ``inbox``)."""


class ListArenas(_Request, tag="arenas"):
    """The arena tournaments live, upcoming or ended in the last day (answered by ``arenas``)."""


TournamentId = Annotated[str, Meta(min_length=1, max_length=16)]


class JoinArena(_Request, tag="join_arena"):
    """Wait to be paired in live arena ``arena``: an Ack now, then, when a race forms (2 to 4
    players by rating), a Joined carrying this request's id and a Snapshot; its countdown
    starts by itself. Send it again after each race to race on."""

    arena: TournamentId


class LeaveArena(_Request, tag="leave_arena"):
    """Stop waiting to be paired in ``arena`` (your points stay)."""

    arena: TournamentId


class AskArena(_Request, tag="arena"):
    """An arena's standings: the top ``limit``, or with ``around`` the lines around you."""

    arena: TournamentId
    limit: Annotated[int, Meta(ge=1, le=100)] = 10
    around: bool = False


class ListBrackets(_Request, tag="brackets"):
    """The bracket tournaments registering, playing, or started in the last day."""


class JoinBracket(_Request, tag="join_bracket"):
    """Register for bracket ``bracket`` before it starts (Ack)."""

    bracket: TournamentId


class LeaveBracket(_Request, tag="leave_bracket"):
    """Take your registration back before the bracket starts (Ack)."""

    bracket: TournamentId


class PlayBracket(_Request, tag="play_bracket"):
    """Play your run of the bracket's open round: Joined and a Snapshot of a one-racer room
    on the round's deal, whose countdown starts at once."""

    bracket: TournamentId


class AskBracket(_Request, tag="bracket"):
    """A bracket, its rounds and, once over, its standings (answered by ``bracket``)."""

    bracket: TournamentId


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
    | RaceGhost
    | ChallengePlayer
    | AcceptChallenge
    | AsyncMatch
    | AskInbox
    | ListArenas
    | JoinArena
    | LeaveArena
    | AskArena
    | ListBrackets
    | JoinBracket
    | LeaveBracket
    | PlayBracket
    | AskBracket
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
