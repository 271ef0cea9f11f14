"""The values messages carry: type aliases and the shared structs (options, boards, views, results)."""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec
from msgspec import Meta

PROTOCOL_VERSION = 1

RequestId = Annotated[int, Meta(ge=0, le=2**53)]
RoomCode = Annotated[str, Meta(min_length=1, max_length=16)]
MoveText = Annotated[str, Meta(min_length=1, max_length=32)]
PlayerName = Annotated[str, Meta(min_length=1, max_length=64)]
Variant = Literal["scorpion", "antares"]
AutoplayMode = Literal["off", "safe", "all"]
RoomState = Literal["waiting", "countdown", "racing", "finished"]
Role = Literal["racer", "spectator"]
Card = Annotated[int, Meta(ge=0, le=51)]
#: A UTC day, ``YYYY-MM-DD``.
Date = Annotated[str, Meta(pattern=r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$")]
#: What ``start_daily`` of today's deal does for you: opens your one ranked attempt
#: (``ranked``), or nothing, since you started it already (``used``), you are a guest
#: (``guest``: register, or practise an earlier day), you said ``bot`` (``bot``), or your
#: account was registered after the day began (``new-account``: it opens for you tomorrow).
DailyAccess = Literal["ranked", "used", "guest", "bot", "new-account"]
#: Rooms on a page of the lobby, at most.
LOBBY_PAGE = 50
#: Where a lobby page ends: ``lobby.next``, sent back unchanged in ``list_rooms.after`` for
#: the page after it (the server makes it: ``<created>.<code>`` of the page's last room).
LobbyCursor = Annotated[str, Meta(max_length=40, pattern=r"^[0-9]{1,16}\.[A-Z0-9]{1,16}$")]


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
    #: Why the racer stopped: "resigned", "left" or "disconnected" (a ghost whose run ended
    #: unfinished: "stopped"); absent while in the race.
    resigned: str | None = None
    board: list[list[Card | None]] | None = None
    #: The racer is a bot (it said so in ``hello``); absent for people.
    bot: bool = False
    #: The seat is a ghost: a recorded run replayed on its own timing (``race_ghost``).
    ghost: bool = False


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
    #: The racer is a ghost (a recorded run); absent otherwise.
    ghost: bool = False


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
    #: In a room that wants winnable deals, once the race's deal is drawn: whether the solver
    #: certified it winnable (false: a random deal, which may have no winning line).
    certified: bool | None = None
    #: A challenge's run (``challenge``, ``accept_challenge``, ``async_match``): the
    #: challenge's id, to share; its deal stays secret until the challenge is over.
    challenge: str | None = None
    #: A race of an arena tournament (``join_arena``): the arena's id. When it ends, send
    #: ``join_arena`` again to be paired for the next race.
    arena: str | None = None
    #: A run of a bracket tournament's round (``play_bracket``): the bracket's id.
    bracket: str | None = None
    #: A challenge's run: the side it plays, its racer's (0 the challenger, 1 the challenged
    #: player); absent in other rooms and in runs opened by an older server.
    challenge_side: int | None = None
    #: A challenge's run: whether the challenge is rated (absent as ``challenge_side`` is).
    challenge_rated: bool | None = None
    #: A race of an arena tournament: the arena's name (absent as ``challenge_side`` is).
    arena_name: str | None = None


class BracketInfo(msgspec.Struct, omit_defaults=True, frozen=True):
    """A bracket tournament: its game, start (Unix ms), size and round length, where it
    stands (``registering``, ``playing``, ``over``, ``cancelled``), how many registered,
    whether you did, its open round's number (0 before the first) and, once over, its winner."""

    id: str
    variant: Variant
    name: str
    starts: int
    size: int
    round_minutes: int
    state: Literal["registering", "playing", "over", "cancelled"]
    players: int = 0
    registered: bool = False
    round: int = 0
    winner: str | None = None
    #: The open round waits for your run (you may start it now).
    to_play: bool = False
    #: Once over, the winner's player id (``winner`` is their name).
    winner_id: str | None = None


class BracketRound(msgspec.Struct, omit_defaults=True, frozen=True):
    """A round of a bracket: its window (Unix ms) and players (names, and their ids in
    ``player_ids``, by the same index). ``you``: ``to-play``, ``playing``, ``played`` or
    ``forfeited`` for a player of the round, absent otherwise. ``commitment``: the commitment
    of the round's deal (every run's room publishes it too). Once it closed: ``results``
    (``seat`` is the player's index in ``players``; the better half went on), ``rooms`` and
    ``reveal`` (its deal and salt, which hash to ``commitment``)."""

    number: int
    opens: int
    closes: int
    players: list[str]
    you: str | None = None
    results: list[Result] | None = None
    reveal: Reveal | None = None
    #: When a run must have started by (Unix ms), or be forfeited.
    start_by: int = 0
    #: Once closed: each player's run's room, by their index in ``players`` (for ``replay``);
    #: None for a forfeit.
    rooms: list[str | None] | None = None
    #: The players' ids, by their index in ``players`` (absent from an older server).
    player_ids: list[str] | None = None
    #: ``sha256(f"{variant}|{deal}|{salt}")`` in hex, the variant being the bracket's: fixed
    #: when the round opens, so ``reveal`` can be checked against it (absent from an older server).
    commitment: str | None = None


class ArenaInfo(msgspec.Struct, omit_defaults=True, frozen=True):
    """An arena tournament: its game and window (Unix ms), where it stands, and how many
    players have raced in it."""

    id: str
    variant: Variant
    name: str
    starts: int
    ends: int
    state: Literal["upcoming", "live", "over"]
    players: int = 0


class ArenaLine(msgspec.Struct, omit_defaults=True, frozen=True):
    """A line of an arena's standings. ``streak``: the player's next race counts double.
    ``room``: their race in progress, if any (spectate it to follow them)."""

    rank: int
    player: str
    name: str
    points: int
    races: int
    wins: int
    streak: bool = False
    room: str | None = None


class ChallengeLine(msgspec.Struct, omit_defaults=True, frozen=True):
    """A challenge as one of its players sees it in their inbox. ``state``: ``open`` (nobody
    has taken the challenged side), ``playing``, ``over`` (both runs ended) or ``expired``
    (the window closed first: void). ``side`` is yours (0 the challenger, 1 the opponent),
    absent for a challenge you were invited to and have not taken. ``opponent`` is the
    rival's name: the invited player's from the start, an open challenge's once taken.
    ``results`` (both runs, ``seat`` = side, with the rating change of a rated one), ``rooms``
    (the two rooms, for replays, by side) and ``reveal`` come once it is over; an expired one
    reveals its deal. ``commitment``, from the start, is the commitment of the challenge's
    deal, the one both runs' rooms publish: ``reveal`` hashes to it."""

    id: str
    variant: Variant
    rated: bool
    state: Literal["open", "playing", "over", "expired"]
    created: int
    expires: int
    challenger: str
    opponent: str | None = None
    side: int | None = None
    #: Your run ended.
    played: bool = False
    results: list[Result] | None = None
    rooms: list[str] | None = None
    reveal: Reveal | None = None
    #: ``sha256(f"{variant}|{deal}|{salt}")`` in hex (absent from an older server).
    commitment: str | None = None


class RoomSummary(msgspec.Struct, omit_defaults=True, frozen=True):
    """A line of the lobby."""

    code: str
    variant: Variant
    state: RoomState
    racers: list[str]
    max_racers: int
    spectators: int
    #: When the room was created (Unix ms): the lobby lists the newest first. 0 (omitted)
    #: where the server that made the line did not say.
    created: int = 0


class HintItem(msgspec.Struct, frozen=True):
    move: str
    reason: str


class RacerLog(msgspec.Struct, frozen=True):
    seat: int
    name: str
    moves: list[str]
