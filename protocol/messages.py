"""Every message of the Solitaire Race protocol, as msgspec Structs.

Frames are MessagePack maps, one message per websocket binary frame. Each message
names its kind in the ``type`` field; nested unions name theirs in ``kind``. The
decoder validates types and limits while decoding, so a message that reaches the
server's logic is well-formed. PROTOCOL.md (beside this file) documents each one.

Cards are integers 0-51: ``suit * 13 + rank - 1`` with suits Clubs, Spades,
Hearts, Diamonds (0-3) and ranks Ace (1) to King (13). In a pile, ``None`` (nil) is
a face-down card. Piles list their cards bottom first.

The messages live in :mod:`protocol.values`, :mod:`protocol.requests`, :mod:`protocol.events`
and :mod:`protocol.replies`; this module gathers them, so ``protocol.messages`` names them all.
"""

from protocol.events import (
    BoardChanged as BoardChanged,
)
from protocol.events import (
    ProgressChanged as ProgressChanged,
)
from protocol.events import (
    RaceOver as RaceOver,
)
from protocol.events import (
    RacerConnection as RacerConnection,
)
from protocol.events import (
    RacerFinished as RacerFinished,
)
from protocol.events import (
    RacerJoined as RacerJoined,
)
from protocol.events import (
    RacerLeft as RacerLeft,
)
from protocol.events import (
    RacerReady as RacerReady,
)
from protocol.events import (
    RacerResigned as RacerResigned,
)
from protocol.events import (
    Rematched as Rematched,
)
from protocol.events import (
    RoomEvent as RoomEvent,
)
from protocol.events import (
    SpectatorsChanged as SpectatorsChanged,
)
from protocol.events import (
    StateChanged as StateChanged,
)
from protocol.replies import (
    AccountInfo as AccountInfo,
)
from protocol.replies import (
    Ack as Ack,
)
from protocol.replies import (
    Arenas as Arenas,
)
from protocol.replies import (
    ArenaStandings as ArenaStandings,
)
from protocol.replies import (
    BoardPeriod as BoardPeriod,
)
from protocol.replies import (
    Brackets as Brackets,
)
from protocol.replies import (
    BracketStarted as BracketStarted,
)
from protocol.replies import (
    BracketView as BracketView,
)
from protocol.replies import (
    ChallengeResult as ChallengeResult,
)
from protocol.replies import (
    ChallengeWaiting as ChallengeWaiting,
)
from protocol.replies import (
    DailyInfo as DailyInfo,
)
from protocol.replies import (
    DailyReveal as DailyReveal,
)
from protocol.replies import (
    Error as Error,
)
from protocol.replies import (
    Goodbye as Goodbye,
)
from protocol.replies import (
    Hints as Hints,
)
from protocol.replies import (
    Inbox as Inbox,
)
from protocol.replies import (
    Joined as Joined,
)
from protocol.replies import (
    Leaderboard as Leaderboard,
)
from protocol.replies import (
    LeaderboardEntry as LeaderboardEntry,
)
from protocol.replies import (
    LegalMoves as LegalMoves,
)
from protocol.replies import (
    Lobby as Lobby,
)
from protocol.replies import (
    PlayerStats as PlayerStats,
)
from protocol.replies import (
    RaceLog as RaceLog,
)
from protocol.replies import (
    Replay as Replay,
)
from protocol.replies import (
    ReplayStep as ReplayStep,
)
from protocol.replies import (
    RoundClosed as RoundClosed,
)
from protocol.replies import (
    ServerMessage as ServerMessage,
)
from protocol.replies import (
    Snapshot as Snapshot,
)
from protocol.replies import (
    Update as Update,
)
from protocol.replies import (
    Welcome as Welcome,
)
from protocol.requests import (
    AcceptChallenge as AcceptChallenge,
)
from protocol.requests import (
    AskArena as AskArena,
)
from protocol.requests import (
    AskBracket as AskBracket,
)
from protocol.requests import (
    AskDaily as AskDaily,
)
from protocol.requests import (
    AskHint as AskHint,
)
from protocol.requests import (
    AskInbox as AskInbox,
)
from protocol.requests import (
    AskLeaderboard as AskLeaderboard,
)
from protocol.requests import (
    AskLegalMoves as AskLegalMoves,
)
from protocol.requests import (
    AskRaceLog as AskRaceLog,
)
from protocol.requests import (
    AskReplay as AskReplay,
)
from protocol.requests import (
    AskSnapshot as AskSnapshot,
)
from protocol.requests import (
    AskStats as AskStats,
)
from protocol.requests import (
    AsyncMatch as AsyncMatch,
)
from protocol.requests import (
    ChallengePlayer as ChallengePlayer,
)
from protocol.requests import (
    ChangePassword as ChangePassword,
)
from protocol.requests import (
    ClientMessage as ClientMessage,
)
from protocol.requests import (
    CreateRoom as CreateRoom,
)
from protocol.requests import (
    Hello as Hello,
)
from protocol.requests import (
    JoinArena as JoinArena,
)
from protocol.requests import (
    JoinBracket as JoinBracket,
)
from protocol.requests import (
    JoinRoom as JoinRoom,
)
from protocol.requests import (
    LeaderboardName as LeaderboardName,
)
from protocol.requests import (
    Leave as Leave,
)
from protocol.requests import (
    LeaveArena as LeaveArena,
)
from protocol.requests import (
    LeaveBracket as LeaveBracket,
)
from protocol.requests import (
    LeaveQueue as LeaveQueue,
)
from protocol.requests import (
    ListArenas as ListArenas,
)
from protocol.requests import (
    ListBrackets as ListBrackets,
)
from protocol.requests import (
    ListRooms as ListRooms,
)
from protocol.requests import (
    Login as Login,
)
from protocol.requests import (
    Logout as Logout,
)
from protocol.requests import (
    Password as Password,
)
from protocol.requests import (
    PlayBracket as PlayBracket,
)
from protocol.requests import (
    PlayMove as PlayMove,
)
from protocol.requests import (
    QuickMatch as QuickMatch,
)
from protocol.requests import (
    RaceGhost as RaceGhost,
)
from protocol.requests import (
    Ready as Ready,
)
from protocol.requests import (
    Register as Register,
)
from protocol.requests import (
    Rematch as Rematch,
)
from protocol.requests import (
    Resign as Resign,
)
from protocol.requests import (
    Spectate as Spectate,
)
from protocol.requests import (
    Start as Start,
)
from protocol.requests import (
    StartDaily as StartDaily,
)
from protocol.requests import (
    Undo as Undo,
)
from protocol.values import (
    LOBBY_PAGE as LOBBY_PAGE,
)
from protocol.values import (
    PROTOCOL_VERSION as PROTOCOL_VERSION,
)
from protocol.values import (
    ArenaInfo as ArenaInfo,
)
from protocol.values import (
    ArenaLine as ArenaLine,
)
from protocol.values import (
    AutoplayMode as AutoplayMode,
)
from protocol.values import (
    BracketInfo as BracketInfo,
)
from protocol.values import (
    BracketRound as BracketRound,
)
from protocol.values import (
    Card as Card,
)
from protocol.values import (
    ChallengeLine as ChallengeLine,
)
from protocol.values import (
    Clock as Clock,
)
from protocol.values import (
    DailyAccess as DailyAccess,
)
from protocol.values import (
    DailyTag as DailyTag,
)
from protocol.values import (
    Date as Date,
)
from protocol.values import (
    HintItem as HintItem,
)
from protocol.values import (
    LobbyCursor as LobbyCursor,
)
from protocol.values import (
    MoveText as MoveText,
)
from protocol.values import (
    Patch as Patch,
)
from protocol.values import (
    PileInfo as PileInfo,
)
from protocol.values import (
    PlayerName as PlayerName,
)
from protocol.values import (
    Progress as Progress,
)
from protocol.values import (
    Racer as Racer,
)
from protocol.values import (
    RacerLog as RacerLog,
)
from protocol.values import (
    RequestId as RequestId,
)
from protocol.values import (
    Result as Result,
)
from protocol.values import (
    Reveal as Reveal,
)
from protocol.values import (
    Role as Role,
)
from protocol.values import (
    RoomCode as RoomCode,
)
from protocol.values import (
    RoomOptions as RoomOptions,
)
from protocol.values import (
    RoomState as RoomState,
)
from protocol.values import (
    RoomSummary as RoomSummary,
)
from protocol.values import (
    RoomView as RoomView,
)
from protocol.values import (
    Variant as Variant,
)
