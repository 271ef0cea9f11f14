"""Every message of the Solitaire Race protocol, as msgspec Structs.

Frames are MessagePack maps, one message per websocket binary frame. Each message
names its kind in the ``type`` field; nested unions name theirs in ``kind``. The
decoder validates types and limits while decoding, so a message that reaches the
server's logic is well-formed. PROTOCOL.md (beside this file) documents each one.

Cards are integers 0-51: ``suit * 13 + rank - 1`` with suits Clubs, Spades,
Hearts, Diamonds (0-3) and ranks Ace (1) to King (13). In a pile, ``None`` (nil) is
a face-down card. Piles list their cards bottom first.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

PROTOCOL_VERSION = 1

RequestId = Annotated[int, Meta(ge=0, le=2**53)]
RoomCode = Annotated[str, Meta(min_length=1, max_length=16)]
MoveText = Annotated[str, Meta(min_length=1, max_length=32)]
PlayerName = Annotated[str, Meta(min_length=1, max_length=64)]
#: Never logged, never stored: only its argon2 hash is kept.
Password = Annotated[str, Meta(min_length=1, max_length=128)]
Variant = Literal["scorpion", "antares"]
AutoplayMode = Literal["off", "safe", "all"]
RoomState = Literal["waiting", "countdown", "racing", "finished"]
Role = Literal["racer", "spectator"]
Card = Annotated[int, Meta(ge=0, le=51)]


class _Request(msgspec.Struct, tag_field="type", forbid_unknown_fields=True):
    """Base of client requests: every request carries a client-chosen ``id``."""

    id: RequestId


class _Reply(msgspec.Struct, tag_field="type", omit_defaults=True):
    """Base of server messages."""


class _Event(msgspec.Struct, tag_field="kind", omit_defaults=True):
    """Base of room events inside an :class:`Update`."""


# -- values ------------------------------------------------------------------------


class RoomOptions(msgspec.Struct, forbid_unknown_fields=True, omit_defaults=True, frozen=True):
    """How a room plays. ``deal`` is for practice rooms only (``max_racers == 1``).

    ``spectator_delay`` (seconds) defaults to 0 for private rooms and 15 for public ones.
    """

    autoplay: AutoplayMode = "safe"
    hints: bool = True
    undo: bool = True
    max_racers: Annotated[int, Meta(ge=1, le=8)] = 2
    public: bool = False
    time_limit: Annotated[int, Meta(ge=30, le=86_400)] | None = None
    spectator_delay: Annotated[float, Meta(ge=0, le=300)] | None = None
    deal: Annotated[str, Meta(min_length=1, max_length=24)] | None = None
    #: Deal only solver-certified winnable deals; by default on for Scorpion, off for Antares.
    winnable: bool | None = None


class PileInfo(msgspec.Struct, frozen=True):
    """A pile's name (as the move notation spells it) and kind: scorpion, freecell,
    cell, foundation or stock. Lets a client lay out a board without knowing rules."""

    name: str
    kind: str


class Patch(msgspec.Struct, array_like=True, frozen=True):
    """Pile ``pile`` keeps its first ``keep`` cards, then ``add`` is laid on them."""

    pile: int
    keep: int
    add: list[Card | None]


class Progress(msgspec.Struct, frozen=True):
    """How far a racer is: cards home, cards built in order, moves, won."""

    home: int
    ordered: int
    moves: int
    won: bool = False


class Clock(msgspec.Struct, omit_defaults=True, frozen=True):
    """Server times in Unix milliseconds. ``now`` lets a client correct its own clock."""

    now: int
    countdown_ends: int | None = None
    started: int | None = None
    ends: int | None = None
    finished: int | None = None


class Racer(msgspec.Struct, omit_defaults=True, frozen=True):
    """A seat in a room. ``board`` is absent when the viewer may not see that board."""

    seat: int
    player: str
    name: str
    progress: Progress
    ready: bool = False
    connected: bool = True
    finished_ms: int | None = None
    #: Why the racer stopped: "resigned", "left" or "disconnected"; absent while in the race.
    resigned: str | None = None
    board: list[list[Card | None]] | None = None
    #: The racer is a bot (it said so in ``hello``); absent for people.
    bot: bool = False


class Result(msgspec.Struct, omit_defaults=True, frozen=True):
    """A racer's place: finishers by time then moves, then the others by progress.
    ``rating`` is the racer's new rating after a rated race, ``rating_change`` the change."""

    place: int
    seat: int
    name: str
    finished: bool
    time_ms: int | None
    moves: int
    home: int
    rating: float | None = None
    rating_change: float | None = None
    #: The racer is a bot; absent for people.
    bot: bool = False


class Reveal(msgspec.Struct, frozen=True):
    """The secret behind the commitment, published when the race ends.

    ``sha256(f"{variant}|{deal}|{salt}")`` in hex equals the commitment.
    """

    deal: str
    salt: str


class DailyTag(msgspec.Struct, frozen=True):
    """A daily-challenge room: the day (UTC, YYYY-MM-DD) and whether the attempt is ranked."""

    date: str
    ranked: bool


class RoomView(msgspec.Struct, omit_defaults=True, frozen=True):
    """A whole room as one viewer may see it."""

    code: str
    variant: Variant
    options: RoomOptions
    state: RoomState
    creator: str
    piles: list[PileInfo]
    racers: list[Racer]
    spectators: int
    clock: Clock
    race: int = 1
    commitment: str | None = None
    reveal: Reveal | None = None
    results: list[Result] | None = None
    daily: DailyTag | None = None


class RoomSummary(msgspec.Struct, omit_defaults=True, frozen=True):
    """A line of the lobby."""

    code: str
    variant: Variant
    state: RoomState
    racers: list[str]
    max_racers: int
    spectators: int


class HintItem(msgspec.Struct, frozen=True):
    move: str
    reason: str


class RacerLog(msgspec.Struct, frozen=True):
    seat: int
    name: str
    moves: list[str]


# -- client requests ---------------------------------------------------------------


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


class ListRooms(_Request, tag="list_rooms"):
    pass


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
    """Play today's daily challenge: the first attempt of the day is ranked, later ones are
    practice. Answered by Joined and a Snapshot of a one-racer room."""

    variant: Variant


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


class Register(_Request, tag="register"):
    """Make this connection's player (a guest) an account named ``name``: it keeps its player
    id, statistics and rating. Answered by :class:`AccountInfo` with a new resume token."""

    name: PlayerName
    password: Password


class Login(_Request, tag="login"):
    """Become the account ``name`` on this connection (answered by :class:`AccountInfo`)."""

    name: PlayerName
    password: Password


class Logout(_Request, tag="logout"):
    """End this connection's session (Ack, then close 4001); ``everywhere`` revokes every
    resume token of the account and closes all its connections."""

    everywhere: bool = False


class ChangePassword(_Request, tag="change_password"):
    """Change the account's password: every other token is revoked; answered by
    :class:`AccountInfo` with this connection's new token."""

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

# -- room events (inside Update) -------------------------------------------------------


class BoardChanged(_Event, tag="board"):
    """A racer's board changed: the patches turn the old public board into the new."""

    seat: int
    patches: list[Patch]
    progress: Progress


class ProgressChanged(_Event, tag="progress"):
    """A rival's progress, without cards: what a racer sees of a rival during a race."""

    seat: int
    progress: Progress


class RacerJoined(_Event, tag="joined"):
    racer: Racer


class RacerLeft(_Event, tag="left"):
    """The racer in ``seat`` left before the race; ``creator`` names the new creator if the
    one who left had created the room."""

    seat: int
    creator: str | None = None


class RacerReady(_Event, tag="ready"):
    seat: int
    ready: bool


class RacerConnection(_Event, tag="connection"):
    seat: int
    connected: bool


class SpectatorsChanged(_Event, tag="spectators"):
    count: int


class StateChanged(_Event, tag="state"):
    """The room moved to ``state``; a new race publishes its ``commitment`` here."""

    state: RoomState
    clock: Clock
    race: int = 1
    commitment: str | None = None


class RacerFinished(_Event, tag="finished"):
    seat: int
    time_ms: int
    moves: int


class RacerResigned(_Event, tag="resigned"):
    seat: int
    reason: str = "resigned"


class RaceOver(_Event, tag="race_over"):
    """The race is over. ``reveal`` is absent for a daily challenge, whose deal stays secret
    until the day ends."""

    results: list[Result]
    reveal: Reveal | None = None


class Rematched(_Event, tag="rematch"):
    """A new race in the same room: every board and result is cleared, ready flags too."""

    race: int


RoomEvent = (
    BoardChanged
    | ProgressChanged
    | RacerJoined
    | RacerLeft
    | RacerReady
    | RacerConnection
    | SpectatorsChanged
    | StateChanged
    | RacerFinished
    | RacerResigned
    | RaceOver
    | Rematched
)

# -- server messages ------------------------------------------------------------------


class Welcome(_Reply, tag="welcome"):
    id: int
    player: str
    name: str
    resume: str
    protocol: int
    #: The player is a registered account (resumed with an account's token); absent for guests.
    account: bool = False


class AccountInfo(_Reply, tag="account"):
    """You are the account ``player`` named ``name``; keep ``resume`` (the old token is void)."""

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
    """You are in ``room`` as ``role``; a :class:`Snapshot` follows."""

    id: int
    room: str
    role: Role
    seat: int | None = None


class Hints(_Reply, tag="hints"):
    id: int
    room: str
    hints: list[HintItem]


class LegalMoves(_Reply, tag="legal_moves"):
    id: int
    room: str
    moves: list[str]


class Lobby(_Reply, tag="lobby"):
    id: int
    rooms: list[RoomSummary]


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
    ranked attempt; when the day ends (Unix ms); and yesterday's challenge revealed."""

    id: int
    variant: Variant
    date: str
    commitment: str
    par: int
    attempted: bool
    ends: int
    yesterday: DailyReveal | None = None


class LeaderboardEntry(msgspec.Struct, omit_defaults=True, frozen=True):
    rank: int
    player: str
    name: str
    #: The figure the board ranks by: time in ms, wins, days of streak, or rating.
    value: float
    finished: bool | None = None
    moves: int | None = None
    home: int | None = None


class Leaderboard(_Reply, tag="leaderboard"):
    id: int
    variant: Variant
    board: LeaderboardName
    entries: list[LeaderboardEntry]
    date: str | None = None
    me: LeaderboardEntry | None = None


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


class Error(_Reply, tag="error"):
    """A request failed. ``id`` names it when it could be read; ``code`` is from the
    table in PROTOCOL.md; ``rule`` names the broken rule of an illegal move."""

    code: str
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
    | Error
    | Snapshot
    | Update
    | Goodbye
)
