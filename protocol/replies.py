"""Server messages: every message the server sends (a tagged union, ``type`` names each)."""

from __future__ import annotations

import msgspec

from protocol.errors import ErrorCode
from protocol.events import RoomEvent
from protocol.requests import LeaderboardName
from protocol.values import (
    ArenaInfo,
    ArenaLine,
    BracketInfo,
    BracketRound,
    Card,
    ChallengeLine,
    DailyAccess,
    HintItem,
    Patch,
    RacerLog,
    Role,
    RoomOptions,
    RoomSummary,
    RoomView,
    Variant,
)


class _Reply(msgspec.Struct, tag_field="type", omit_defaults=True):
    """Base of server messages."""


class Welcome(_Reply, tag="welcome"):
    """You are ``player``, named ``name``; keep ``resume`` as your token. ``protocol`` is the
    protocol version the server speaks (the one ``hello`` asked for: it welcomes no other);
    ``server_version`` the server software's version, for people and bug reports."""

    id: int
    player: str
    name: str
    resume: str
    protocol: int
    #: The player is a registered account (resumed with an account's token); absent for guests.
    account: bool = False
    #: The server's software version (its package's, e.g. ``"0.1.0"``). Absent from servers
    #: before it was sent, and from a server that does not know its version (never installed).
    server_version: str = ""


class AccountInfo(_Reply, tag="account"):
    """You are the account ``player`` named ``name``; keep ``resume`` as your token from now on."""

    id: int
    player: str
    name: str
    resume: str


class Ack(_Reply, tag="ack"):
    """Success of a request that returns nothing more; ``version`` is the room version
    after the request, ``move`` the canonical text of a move played."""

    id: int
    room: str | None = None
    version: int | None = None
    move: str | None = None


class Joined(_Reply, tag="joined"):
    """You are in ``room`` as ``role``; a :class:`Snapshot` follows. ``home``: the room runs
    on another server of the service than this connection's, the one the balancer calls
    ``home``; a client may reconnect with ``?home=<home>`` in its address and resume there,
    to be served without the hop between servers (PROTOCOL.md, "Going home")."""

    id: int
    room: str
    role: Role
    seat: int | None = None
    home: str | None = None


class Hints(_Reply, tag="hints"):
    id: int
    room: str
    hints: list[HintItem]


class LegalMoves(_Reply, tag="legal_moves"):
    id: int
    room: str
    moves: list[str]


class Lobby(_Reply, tag="lobby"):
    """A page of the lobby: at most :data:`~protocol.values.LOBBY_PAGE` rooms, newest first.
    ``next`` is there when more follow: send it as ``list_rooms.after`` for the next page."""

    id: int
    rooms: list[RoomSummary]
    next: str | None = None


class RaceLog(_Reply, tag="race_log"):
    """Everything needed to replay a finished race: the deal, options and every move."""

    id: int
    room: str
    race: int
    variant: Variant
    options: RoomOptions
    deal: str
    salt: str
    commitment: str
    racers: list[RacerLog]


class ReplayStep(msgspec.Struct, frozen=True):
    """One entry of a racer's log (a move, ``undo``, or ``resign <why>``) and the patches it
    made to their board (none for a resignation)."""

    entry: str
    patches: list[Patch]


class Replay(_Reply, tag="replay"):
    """A racer's whole game after the race: the starting board, then every step in order.
    Applying the patches step by step shows the game as it was played, without rules."""

    id: int
    room: str
    race: int
    seat: int
    name: str
    board: list[list[Card | None]]
    steps: list[ReplayStep]


class DailyReveal(msgspec.Struct, frozen=True):
    """A finished day's challenge: its deal, salt (for the commitment) and the solver's line."""

    date: str
    deal: str
    salt: str
    commitment: str
    solution: list[str]


class DailyInfo(_Reply, tag="daily"):
    """Today's challenge of ``variant``: its commitment and par; whether you have used your
    ranked attempt; what ``start_daily`` of today's deal does for you (``access``); when the
    day ends (Unix ms); and yesterday's challenge revealed."""

    id: int
    variant: Variant
    date: str
    commitment: str
    par: int
    attempted: bool
    ends: int
    access: DailyAccess
    yesterday: DailyReveal | None = None


class LeaderboardEntry(msgspec.Struct, omit_defaults=True, frozen=True):
    rank: int
    player: str
    name: str
    #: The figure the board ranks by: time in ms, wins (in the period, on a weekly or season
    #: board), days of streak, or rating.
    value: float
    finished: bool | None = None
    moves: int | None = None
    home: int | None = None
    #: Weekly and season boards only: the total time of the period's wins, in ms.
    total_time_ms: int | None = None


class BoardPeriod(msgspec.Struct, frozen=True):
    """The week (``2026-W49``) or season (``2026-Q4``) a weekly or season board shows: its
    first and last UTC days (YYYY-MM-DD), and the names of the periods before and after it,
    to browse (nil only past the ends of the calendar: periods span the years 1 to 9998)."""

    name: str
    first_day: str
    last_day: str
    previous: str | None
    next: str | None


class Leaderboard(_Reply, tag="leaderboard"):
    id: int
    variant: Variant
    board: LeaderboardName
    entries: list[LeaderboardEntry]
    date: str | None = None
    me: LeaderboardEntry | None = None
    #: Weekly and season boards only: the period shown.
    period: BoardPeriod | None = None


class PlayerStats(_Reply, tag="stats"):
    id: int
    variant: Variant
    player: str
    name: str
    races_started: int
    races_won: int
    races_finished: int
    daily_attempts: int
    daily_wins: int
    best_time_ms: int | None
    current_streak: int
    longest_streak: int
    rating: float
    rating_deviation: float


class Inbox(_Reply, tag="inbox"):
    """Your challenges, newest first: those waiting for you, yours waiting for a rival, and
    the results (answer to ``inbox``)."""

    id: int
    challenges: list[ChallengeLine]


class Arenas(_Reply, tag="arenas"):
    """The arenas that are live, upcoming or ended in the last day, soonest first."""

    id: int
    arenas: list[ArenaInfo]


class ArenaStandings(_Reply, tag="arena"):
    """An arena's standings: the ``lines`` asked for, and yours (``me``) if you have raced."""

    id: int
    arena: ArenaInfo
    lines: list[ArenaLine]
    me: ArenaLine | None = None


class Brackets(_Reply, tag="brackets"):
    """The bracket tournaments registering, playing, or started in the last day."""

    id: int
    brackets: list[BracketInfo]


class BracketView(_Reply, tag="bracket"):
    """A bracket and its rounds, the open one last; ``standings``: names, best first, once
    over, and ``standing_ids`` the players' ids in the same order."""

    id: int
    bracket: BracketInfo
    rounds: list[BracketRound]
    standings: list[str] | None = None
    standing_ids: list[str] | None = None


class ChallengeResult(_Reply, tag="challenge_result"):
    """Pushed, unasked (no ``id``), to each player of a challenge on every connection they have
    open when its result is known: ``over`` (the second run ended; in a rated one, once the
    ratings moved) or ``expired`` (its window closed first). ``challenge`` is the line their
    ``inbox`` would now show them."""

    challenge: ChallengeLine


class ChallengeWaiting(_Reply, tag="challenge_waiting"):
    """Pushed, unasked (no ``id``), to the player a challenge names, on every connection they
    have open, when it is made: it waits for their run. ``challenge`` is the line their
    ``inbox`` would now show them."""

    challenge: ChallengeLine


class BracketStarted(_Reply, tag="bracket_started"):
    """Pushed, unasked (no ``id``), to each player registered for a bracket on every connection
    they have open when its start time came: ``round`` is its first round, open now (start your
    run before ``start_by``), or absent when it was cancelled (``bracket.state``: too few
    players registered)."""

    bracket: BracketInfo
    round: BracketRound | None = None


class RoundClosed(_Reply, tag="round_closed"):
    """Pushed, unasked (no ``id``), to each player of a bracket round on every connection they
    have open when the round closes: ``round``, with its results and reveal; ``next``, the
    round that opened with it (absent when the bracket is over); ``bracket`` as the ``bracket``
    request would now show it to them."""

    bracket: BracketInfo
    round: BracketRound
    next: BracketRound | None = None


class Error(_Reply, tag="error"):
    """A request failed. ``id`` names it when it could be read; ``code`` is from the
    table in PROTOCOL.md, a closed set within a protocol version (see its "Versions");
    ``rule`` names the broken rule of an illegal move."""

    code: ErrorCode
    message: str
    id: int | None = None
    rule: str | None = None


class Snapshot(_Reply, tag="snapshot"):
    """The whole room at ``version``; ``id`` is set when it answers :class:`AskSnapshot`."""

    room: str
    version: int
    view: RoomView
    id: int | None = None


class Update(_Reply, tag="update"):
    """Events that took the room from version ``base`` to ``version``.

    Apply it only when your copy is at ``base``; otherwise ask for a snapshot.
    """

    room: str
    base: int
    version: int
    events: list[RoomEvent]


class Goodbye(_Reply, tag="goodbye"):
    """The server is going away (shutdown); reconnect later with your resume token."""

    reason: str


ServerMessage = (
    Welcome
    | AccountInfo
    | Ack
    | Joined
    | Hints
    | LegalMoves
    | Lobby
    | RaceLog
    | Replay
    | DailyInfo
    | Leaderboard
    | PlayerStats
    | Inbox
    | Arenas
    | ArenaStandings
    | Brackets
    | BracketView
    | ChallengeResult
    | ChallengeWaiting
    | BracketStarted
    | RoundClosed
    | Error
    | Snapshot
    | Update
    | Goodbye
)
