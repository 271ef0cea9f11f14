"""The wire codec: every message survives a round trip; bad frames get the right error code."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from protocol.codec import MalformedFrame, decode_client, decode_server, encode, request_id_of
from protocol.errors import ErrorCode
from protocol.messages import (
    PROTOCOL_VERSION,
    AcceptChallenge,
    AccountInfo,
    Ack,
    ArenaInfo,
    ArenaLine,
    Arenas,
    ArenaStandings,
    AskArena,
    AskBracket,
    AskDaily,
    AskHint,
    AskInbox,
    AskLeaderboard,
    AskLegalMoves,
    AskRaceLog,
    AskReplay,
    AskSnapshot,
    AskStats,
    AsyncMatch,
    BoardChanged,
    BoardPeriod,
    BracketInfo,
    BracketRound,
    Brackets,
    BracketStarted,
    BracketView,
    ChallengeLine,
    ChallengePlayer,
    ChallengeResult,
    ChallengeWaiting,
    ChangePassword,
    ClientMessage,
    Clock,
    CreateRoom,
    DailyInfo,
    DailyReveal,
    Error,
    Goodbye,
    Hello,
    HintItem,
    Hints,
    Inbox,
    JoinArena,
    JoinBracket,
    Joined,
    JoinRoom,
    Leaderboard,
    LeaderboardEntry,
    Leave,
    LeaveArena,
    LeaveBracket,
    LeaveQueue,
    LegalMoves,
    ListArenas,
    ListBrackets,
    ListRooms,
    Lobby,
    Login,
    Logout,
    Patch,
    PileInfo,
    PlayBracket,
    PlayerStats,
    PlayMove,
    Progress,
    ProgressChanged,
    QuickMatch,
    RaceGhost,
    RaceLog,
    RaceOver,
    Racer,
    RacerConnection,
    RacerFinished,
    RacerJoined,
    RacerLeft,
    RacerLog,
    RacerReady,
    RacerResigned,
    Ready,
    Register,
    Rematch,
    Rematched,
    Replay,
    ReplayStep,
    Resign,
    Result,
    Reveal,
    RoomEvent,
    RoomOptions,
    RoomSummary,
    RoomView,
    RoundClosed,
    ServerMessage,
    Snapshot,
    Spectate,
    SpectatorsChanged,
    Start,
    StartDaily,
    StateChanged,
    Undo,
    Update,
    Welcome,
)

PROGRESS = Progress(home=3, ordered=5, moves=17)
RACER = Racer(seat=1, player="p1", name="Bob", progress=PROGRESS, board=[[None, 4, 17], [], [51]])
CLOCK = Clock(now=1_700_000_000_000, countdown_ends=1_700_000_003_000, started=1_700_000_003_000)
RESULTS = [Result(place=1, seat=1, name="Bob", finished=True, time_ms=61_000, moves=80, home=52)]
REVEAL = Reveal(deal="617", salt="ab" * 16)
OPTIONS = RoomOptions(autoplay="all", hints=False, undo=False, max_racers=1, time_limit=600, deal="617")
VIEW = RoomView(
    code="ABCD",
    variant="antares",
    options=OPTIONS,
    state="finished",
    creator="p1",
    piles=[PileInfo("s1", "scorpion"), PileInfo("hc", "foundation")],
    racers=[RACER, Racer(seat=0, player="p0", name="Ann", progress=PROGRESS, connected=False, resigned="left")],
    spectators=2,
    clock=CLOCK,
    race=3,
    commitment="0f" * 32,
    reveal=REVEAL,
    results=RESULTS,
)

CLIENT_MESSAGES: list[ClientMessage] = [
    Hello(id=1, protocol=PROTOCOL_VERSION, name="Ann"),
    Hello(id=2, protocol=PROTOCOL_VERSION, name="Ann", resume="token"),
    CreateRoom(id=3, variant="scorpion"),
    CreateRoom(id=4, variant="antares", options=OPTIONS),
    JoinRoom(id=5, room="ABCD"),
    Spectate(id=6, room="ABCD"),
    Leave(id=7, room="ABCD"),
    ListRooms(id=8),
    ListRooms(id=8, variant="antares"),
    ListRooms(id=8, after="1800000000000.K7Q2M9XD", variant="scorpion"),
    Ready(id=9, room="ABCD"),
    Ready(id=10, room="ABCD", ready=False),
    Start(id=11, room="ABCD"),
    PlayMove(id=12, room="ABCD", move="QS>5"),
    Undo(id=13, room="ABCD"),
    AskHint(id=14, room="ABCD"),
    AskLegalMoves(id=15, room="ABCD"),
    Resign(id=16, room="ABCD"),
    Rematch(id=17, room="ABCD"),
    AskSnapshot(id=18, room="ABCD"),
    AskRaceLog(id=2**53, room="ABCD"),
    AskReplay(id=3, room="ABCD", seat=1),
    RaceGhost(id=3, room="ABCD", seat=1),
    RaceGhost(id=3, variant="antares", date="2026-12-04", rank=1),
    ChallengePlayer(id=4, variant="antares", player="p2"),
    ChallengePlayer(id=4, variant="scorpion", rated=False, hours=72),
    AcceptChallenge(id=5, challenge="QX7M2KDA"),
    AsyncMatch(id=6, variant="scorpion"),
    AskInbox(id=7),
    ListArenas(id=8),
    JoinArena(id=9, arena="ARENA1"),
    LeaveArena(id=10, arena="ARENA1"),
    AskArena(id=11, arena="ARENA1", limit=20, around=True),
    ListBrackets(id=12),
    JoinBracket(id=13, bracket="BR"),
    LeaveBracket(id=14, bracket="BR"),
    PlayBracket(id=15, bracket="BR"),
    AskBracket(id=16, bracket="BR"),
    QuickMatch(id=4, variant="scorpion"),
    LeaveQueue(id=5, variant="scorpion"),
    AskDaily(id=6, variant="antares"),
    StartDaily(id=7, variant="antares"),
    StartDaily(id=7, variant="antares", date="2026-11-28"),
    AskLeaderboard(id=8, variant="scorpion", board="wins", limit=5),
    AskLeaderboard(id=9, variant="scorpion", date="2026-11-29", around=True),
    AskLeaderboard(id=9, variant="antares", board="weekly", period="2026-W49", around=True),
    AskStats(id=10, variant="antares", player="p1"),
    Register(id=11, name="Ann", password="correct horse"),
    Login(id=12, name="Ann", password="correct horse"),
    Logout(id=13),
    Logout(id=14, everywhere=True),
    ChangePassword(id=15, password="correct horse", new_password="battery staple"),
]

EVENTS: list[RoomEvent] = [
    BoardChanged(seat=0, patches=[Patch(0, 2, [None, 5]), Patch(8, 0, [])], progress=PROGRESS),
    ProgressChanged(seat=0, progress=Progress(home=52, ordered=0, moves=90, won=True)),
    RacerJoined(racer=RACER),
    RacerLeft(seat=2),
    RacerLeft(seat=0, creator="p1"),
    RacerReady(seat=1, ready=False),
    RacerConnection(seat=1, connected=False),
    SpectatorsChanged(count=4),
    StateChanged(state="countdown", clock=CLOCK, race=2, commitment="aa" * 32),
    RacerFinished(seat=1, time_ms=61_000, moves=80),
    RacerResigned(seat=0, reason="disconnected"),
    RaceOver(results=RESULTS, reveal=REVEAL),
    Rematched(race=2),
]

SERVER_MESSAGES: list[ServerMessage] = [
    Welcome(id=1, player="p1", name="Bob", resume="token", protocol=PROTOCOL_VERSION),
    Welcome(id=1, player="p1", name="Bob", resume="p1.1.sig", protocol=PROTOCOL_VERSION, account=True),
    AccountInfo(id=2, player="p1", name="Bob", resume="p1.2.sig"),
    Ack(id=2),
    Ack(id=3, room="ABCD", version=7, move="QS>5"),
    Joined(id=4, room="ABCD", role="racer", seat=1),
    Joined(id=5, room="ABCD", role="spectator"),
    Hints(id=6, room="ABCD", hints=[HintItem("QS>5", "builds in suit")]),
    LegalMoves(id=7, room="ABCD", moves=["deal", "QS>5"]),
    Lobby(id=8, rooms=[RoomSummary("ABCD", "scorpion", "waiting", ["Ann"], 2, 0)]),
    Lobby(
        id=8,
        rooms=[RoomSummary("K7Q2M9XD", "antares", "racing", ["Ann", "Bob"], 2, 1, created=1_800_000_000_000)],
        next="1800000000000.K7Q2M9XD",
    ),
    DailyInfo(
        id=11,
        variant="antares",
        date="2026-11-29",
        commitment="ab" * 32,
        par=61,
        attempted=False,
        ends=1_800_000_000_000,
        access="guest",
        yesterday=DailyReveal(date="2026-11-28", deal="12345", salt="cd" * 16, commitment="ef" * 32, solution=["AS>h"]),
    ),
    Leaderboard(
        id=12,
        variant="scorpion",
        board="daily",
        date="2026-11-29",
        entries=[LeaderboardEntry(rank=1, player="p1", name="Ann", value=61_000, finished=True, moves=52, home=52)],
        me=LeaderboardEntry(rank=1, player="p1", name="Ann", value=61_000),
    ),
    Leaderboard(
        id=12,
        variant="antares",
        board="season",
        entries=[LeaderboardEntry(rank=1, player="p1", name="Ann", value=3, total_time_ms=184_000)],
        period=BoardPeriod(
            name="2026-Q4", first_day="2026-10-01", last_day="2026-12-31", previous="2026-Q3", next=None
        ),
    ),
    Brackets(id=12, brackets=[BracketInfo("BR", "antares", "Friday", 1, 16, 10, "registering", 5, True)]),
    BracketView(
        id=12,
        bracket=BracketInfo("BR", "antares", "Friday", 1, 16, 10, "over", 4, True, 0, "Ann"),
        rounds=[
            BracketRound(1, 1, 2, ["Ann", "Bob"], "played", [Result(1, 0, "Ann", True, 5, 6, 52)], Reveal("617", "00")),
            BracketRound(2, 3, 4, ["Ann"], None),
        ],
        standings=["Ann", "Bob"],
    ),
    Arenas(id=12, arenas=[ArenaInfo("ARENA1", "scorpion", "Hourly", 1, 2, "live", 40)]),
    ArenaStandings(
        id=12,
        arena=ArenaInfo("ARENA1", "scorpion", "Hourly", 1, 2, "over"),
        lines=[ArenaLine(1, "p1", "Ann", 12, 5, 4, True, "ROOM")],
        me=ArenaLine(7, "p2", "Bob", 2, 3, 1),
    ),
    Inbox(
        id=12,
        challenges=[
            ChallengeLine("QX7M2KDA", "antares", True, "open", 1, 2, "Ann"),
            ChallengeLine(
                "QX7M2KDA",
                "antares",
                True,
                "over",
                1,
                2,
                "Ann",
                "Bob",
                1,
                True,
                [Result(1, 0, "Ann", True, 5, 6, 52, 1510.0, 10.0)],
                ["A", "B"],
                Reveal("617", "00"),
            ),
        ],
    ),
    PlayerStats(
        id=13,
        variant="scorpion",
        player="p1",
        name="Ann",
        races_started=3,
        races_won=1,
        races_finished=2,
        daily_attempts=4,
        daily_wins=2,
        best_time_ms=None,
        current_streak=1,
        longest_streak=2,
        rating=1520.5,
        rating_deviation=180.25,
    ),
    Replay(
        id=10,
        room="ABCD",
        race=1,
        seat=0,
        name="Ann",
        board=[[None, 3], []],
        steps=[ReplayStep(entry="QS>5", patches=[Patch(0, 1, [4])]), ReplayStep(entry="resign left", patches=[])],
    ),
    RaceLog(
        id=9,
        room="ABCD",
        race=1,
        variant="scorpion",
        options=RoomOptions(),
        deal="617",
        salt="cd" * 16,
        commitment="ee" * 32,
        racers=[RacerLog(seat=0, name="Ann", moves=["4D>2", "deal"])],
    ),
    ChallengeResult(
        challenge=ChallengeLine(
            "QX7M2KDA",
            "scorpion",
            False,
            "expired",
            1,
            2,
            "Ann",
            side=0,
            played=True,
            reveal=Reveal("617", "00"),
            commitment="ab" * 32,
        )
    ),
    ChallengeWaiting(
        challenge=ChallengeLine(
            "QX7M2KDA", "scorpion", True, "open", 1, 2, "Ann", side=1, played=False, commitment="ab" * 32
        )
    ),
    BracketStarted(
        bracket=BracketInfo("BR", "antares", "Friday", 1, 16, 10, "playing", 4, True, 1, to_play=True),
        round=BracketRound(1, 1, 2, ["Ann", "Bob"], you="to-play", player_ids=["p1", "p2"], commitment="ab" * 32),
    ),
    BracketStarted(bracket=BracketInfo("BR", "antares", "Friday", 1, 16, 10, "cancelled", 1, True)),
    RoundClosed(
        bracket=BracketInfo("BR", "antares", "Friday", 1, 16, 10, "playing", 4, True, 2, to_play=True),
        round=BracketRound(
            1,
            1,
            2,
            ["Ann", "Bob"],
            "played",
            [Result(1, 0, "Ann", True, 5, 6, 52), Result(2, 1, "Bob", False, None, 3, 9)],
            Reveal("617", "00"),
            rooms=["A", None],
            player_ids=["p1", "p2"],
            commitment="cd" * 32,
        ),
        next=BracketRound(2, 3, 4, ["Ann"], "to-play", start_by=5, player_ids=["p1"], commitment="ef" * 32),
    ),
    RoundClosed(
        bracket=BracketInfo("BR", "antares", "Friday", 1, 16, 10, "over", 4, True, 0, "Ann"),
        round=BracketRound(2, 3, 4, ["Ann"], "played", [Result(1, 0, "Ann", True, 5, 6, 52)], Reveal("617", "00")),
    ),
    Error(code=ErrorCode.ILLEGAL_MOVE, message="no", id=10, rule="build-in-suit"),
    Error(code=ErrorCode.BAD_FRAME, message="not MessagePack"),
    Snapshot(room="ABCD", version=12, view=VIEW),
    Snapshot(room="ABCD", version=12, view=VIEW, id=11),
    Snapshot(
        room="ABCD",
        version=12,
        view=msgspec.structs.replace(
            VIEW, challenge="QX7M2KDA", challenge_side=1, challenge_rated=False, reveal=None, results=None
        ),
    ),
    Snapshot(room="ABCD", version=12, view=msgspec.structs.replace(VIEW, arena="ARENA1", arena_name="Hourly")),
    *(Update(room="ABCD", base=i, version=i + 1, events=[event]) for i, event in enumerate(EVENTS)),
    Update(room="ABCD", base=3, version=5, events=EVENTS[:2]),
    Goodbye(reason="shutdown"),
]


def pack(message: dict[str, Any]) -> bytes:
    return msgspec.msgpack.encode(message)


def malformed(frame: bytes) -> MalformedFrame:
    with pytest.raises(MalformedFrame) as caught:
        decode_client(frame)
    return caught.value


@pytest.mark.parametrize("message", CLIENT_MESSAGES, ids=lambda m: type(m).__name__)
def test_every_client_message_round_trips(message: ClientMessage) -> None:
    assert decode_client(encode(message)) == message


@pytest.mark.parametrize("message", SERVER_MESSAGES, ids=lambda m: type(m).__name__)
def test_every_server_message_round_trips(message: ServerMessage) -> None:
    assert decode_server(encode(message)) == message


def test_every_message_type_is_covered() -> None:
    client = {type(m) for m in CLIENT_MESSAGES}
    server = {type(m) for m in SERVER_MESSAGES}
    events = {type(e) for e in EVENTS}
    assert client == set(ClientMessage.__args__)
    assert server == set(ServerMessage.__args__)
    assert events == set(RoomEvent.__args__)


def test_the_lobby_request_and_answer_of_clients_before_paging_are_unchanged() -> None:
    """Paging fields left out are defaults: a client that does not page sends, and reads,
    the frames it always did; nil is read as left out."""
    assert msgspec.msgpack.decode(encode(ListRooms(id=8))) == {"type": "list_rooms", "id": 8}
    assert decode_client(pack({"type": "list_rooms", "id": 8, "after": None, "variant": None})) == ListRooms(id=8)
    lobby = msgspec.msgpack.decode(encode(Lobby(id=8, rooms=[RoomSummary("ABCD", "scorpion", "waiting", [], 2, 0)])))
    assert lobby == {
        "type": "lobby",
        "id": 8,
        "rooms": [
            {"code": "ABCD", "variant": "scorpion", "state": "waiting", "racers": [], "max_racers": 2, "spectators": 0}
        ],
    }


def test_frames_name_their_type_and_events_their_kind() -> None:
    frame = msgspec.msgpack.decode(encode(Update(room="R", base=0, version=1, events=[RacerLeft(seat=1)])))
    assert frame["type"] == "update"
    assert frame["events"] == [{"kind": "left", "seat": 1}]
    assert msgspec.msgpack.decode(encode(Undo(id=4, room="R"))) == {"type": "undo", "id": 4, "room": "R"}


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b"\xc1", id="never-used-byte"),
        pytest.param(b"\x82\xa4type", id="map-cut-short"),
        pytest.param(b"", id="empty"),
        pytest.param(b"\xa5ab", id="string-cut-short"),
        pytest.param(pack({"type": "undo", "id": 1, "room": "R"}) + b"\xc1", id="trailing-garbage"),
    ],
)
def test_malformed_messagepack_is_a_bad_frame(frame: bytes) -> None:
    error = malformed(frame)
    assert error.code == "bad-frame"
    assert error.request_id is None


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b"\x92", id="array-header-only"),
        pytest.param(pack({"type": "teleport", "id": 1})[:-1], id="unknown-type-cut-short"),
        pytest.param(
            pack({"type": "move", "id": 1, "room": "R", "move": 3, "x": "yy"})[:-2], id="wrong-type-cut-short"
        ),
        pytest.param(pack({"type": "undo", "id": "x", "room": "R"}) + b"\xc1", id="wrong-type-trailing-garbage"),
    ],
)
def test_broken_frame_that_fails_validation_first_is_a_bad_frame(frame: bytes) -> None:
    assert malformed(frame).code == "bad-frame"


def test_server_side_decoder_reports_bad_frames_too() -> None:
    with pytest.raises(MalformedFrame) as caught:
        decode_server(b"\xc1")
    assert caught.value.code == "bad-frame"
    with pytest.raises(MalformedFrame) as caught:
        decode_server(pack({"type": "ack"}))
    assert caught.value.code == "invalid-message"


@pytest.mark.parametrize(
    "message",
    [
        {"type": "move", "id": 5, "room": "ABCD", "move": 3},
        {"type": "move", "id": 5, "room": "ABCD"},
        {"type": "ready", "id": 5, "room": "ABCD", "ready": "yes"},
        {"type": "create_room", "id": 5, "variant": "klondike"},
        {"type": "hello", "id": 5, "protocol": "1", "name": "Ann"},
        {"type": "list_rooms", "id": 5, "variant": "klondike"},
        {"type": "list_rooms", "id": 5, "after": "page 2"},
        {"type": "list_rooms", "id": 5, "after": 2},
        {"type": "list_rooms", "id": 5, "after": "1800000000000.K7Q2M9XD" + "X" * 30},
    ],
)
def test_wrong_field_types_are_invalid_with_the_request_id(message: dict[str, Any]) -> None:
    error = malformed(pack(message))
    assert error.code == "invalid-message"
    assert error.request_id == 5


@pytest.mark.parametrize("request_id", [-1, 2**53 + 1, "5", True, None, 1.5])
def test_unreadable_request_id_is_not_reported(request_id: object) -> None:
    error = malformed(pack({"type": "undo", "id": request_id, "room": "ABCD"}))
    assert error.code == "invalid-message"
    assert error.request_id is None


def test_missing_id_and_non_map_frames_are_invalid() -> None:
    assert malformed(pack({"type": "list_rooms"})).code == "invalid-message"
    for frame in (msgspec.msgpack.encode([1, 2]), msgspec.msgpack.encode("hello"), msgspec.msgpack.encode(5)):
        error = malformed(frame)
        assert (error.code, error.request_id) == ("invalid-message", None)


@pytest.mark.parametrize("kind", ["teleport", "welcome", "update", "Hello", ""])
def test_unknown_type_is_reported_as_such(kind: str) -> None:
    error = malformed(pack({"type": kind, "id": 7}))
    assert error.code == "unknown-type"
    assert error.request_id == 7


def test_missing_or_non_text_type_is_invalid() -> None:
    assert malformed(pack({"id": 7, "room": "R"})).code == "invalid-message"
    assert malformed(pack({"type": 3, "id": 7})).code == "invalid-message"


@pytest.mark.parametrize(
    "message",
    [
        {"type": "leave", "id": 1, "room": "ABCD", "extra": 1},
        {"type": "list_rooms", "id": 1, "admin": True},
        {"type": "create_room", "id": 1, "variant": "scorpion", "options": {"max_racers": 2, "cheat": True}},
    ],
)
def test_unknown_fields_are_rejected(message: dict[str, Any]) -> None:
    error = malformed(pack(message))
    assert error.code == "invalid-message"
    assert error.request_id == 1


def hello(name: str) -> bytes:
    return pack({"type": "hello", "id": 1, "protocol": 1, "name": name})


def create(**options: Any) -> bytes:
    return pack({"type": "create_room", "id": 1, "variant": "scorpion", "options": options})


def move(text: str) -> bytes:
    return pack({"type": "move", "id": 1, "room": "ABCD", "move": text})


@pytest.mark.parametrize(
    ("frame", "valid"),
    [
        (hello("A"), True),
        (hello("x" * 64), True),
        (hello("x" * 65), False),
        (hello(""), False),
        (create(max_racers=1), True),
        (create(max_racers=8), True),
        (create(max_racers=0), False),
        (create(max_racers=9), False),
        (create(time_limit=29), False),
        (create(time_limit=30), True),
        (create(spectator_delay=301), False),
        (create(spectator_delay=0), True),
        (create(autoplay="sometimes"), False),
        (create(deal=""), False),
        (create(deal="1" * 25), False),
        (move("Q" * 32), True),
        (move("Q" * 33), False),
        (move(""), False),
        (pack({"type": "join", "id": 1, "room": "R" * 17}), False),
        (pack({"type": "join", "id": 1, "room": ""}), False),
    ],
)
def test_limits(frame: bytes, valid: bool) -> None:
    if valid:
        decode_client(frame)
    else:
        error = malformed(frame)
        assert (error.code, error.request_id) == ("invalid-message", 1)


def test_error_message_is_bounded_for_long_unknown_types() -> None:
    error = malformed(pack({"type": "x" * 10_000, "id": 1}))
    assert error.code == "unknown-type"
    assert len(str(error)) < 200


def test_request_id_of_reads_the_id_of_any_map_frame() -> None:
    assert request_id_of(pack({"type": "move", "id": 9, "room": 5})) == 9
    assert request_id_of(pack({"type": "whatever", "id": 2**53})) == 2**53
    for frame in (b"\xc1", b"\x92", pack({"id": True}), pack({"id": -1}), msgspec.msgpack.encode([9])):
        assert request_id_of(frame) is None
