"""Drivers the room tests share: rooms at fixed times with fixed deals, and a winning line.

Every room here is driven with explicit times in milliseconds (from :data:`T0`) and a
deal picker that always answers the same deal, so each test replays exactly.
Players are ``ann`` (the creator, seat 0), ``bob``, ``cat`` and ``dan``. Also: readers
of an outcome's events and of a room's boards, and everything visible of a room at once
(:func:`state_of`, to show a command changed nothing).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from functools import cache
from typing import Any

import msgspec
import pytest

from protocol.codec import encode
from protocol.messages import RoomEvent, RoomOptions, RoomView, Snapshot, Variant
from server.games import Antares, Autoplay, Move, Options
from server.rooms.errors import RoomError
from server.rooms.lifecycle import State
from server.rooms.record import encode_record
from server.rooms.step import Outcome
from server.rooms.timing import DEFAULT_COUNTDOWN_MS
from server.solver import Budget, Solved, solve
from tests.rooms.driving import Driven, create

T0 = 1_700_000_000_000
PLAYERS = ("ann", "bob", "cat", "dan")
ANN, BOB, CAT = PLAYERS[:3]
#: Antares deal 24 is solved in well under a second (autoplay "safe", the default option).
WINNABLE_ANTARES = "24"


def open_room(
    variant: Variant = "scorpion", picks: str = "617", racers: int = 2, seated: int | None = None, **options: Any
) -> Driven:
    """A room for ``racers`` with ``seated`` of :data:`PLAYERS` in it (all by default), at :data:`T0`,
    whose deal picker always picks deal ``picks``."""
    room, _ = create(
        "ROOM",
        variant,
        msgspec.structs.replace(RoomOptions(max_racers=racers), **options),
        PLAYERS[0],
        PLAYERS[0].title(),
        T0,
        deal_picker=lambda _variant: picks,
    )
    for player in PLAYERS[1 : racers if seated is None else seated]:
        room.join(player, player.title(), T0)
    return room


def start_race(room: Driven, now: int = T0) -> int:
    """Every racer readies at ``now``, the countdown runs out; returns the race's start time."""
    for player in room.racers().values():
        room.ready(player, True, now)
    started = now + DEFAULT_COUNTDOWN_MS
    assert room.next_deadline() == started  # the countdown
    room.tick(started)
    assert room.state is State.RACING
    return started


@cache
def winning_line() -> tuple[Move, ...]:
    """A line that wins Antares :data:`WINNABLE_ANTARES` with safe autoplay (solved once per session)."""
    result = solve(
        Antares, WINNABLE_ANTARES, Options(autoplay=Autoplay.SAFE), Budget(seconds=10, clock=time.process_time)
    )
    assert isinstance(result, Solved)
    return result.moves


def play(room: Driven, player: str, moves: Iterable[Move], now: int) -> list[Outcome]:
    """Play ``moves`` through :meth:`Room.move` as ``player``, each written in its position."""
    seat = room.seat_of(player)
    assert seat is not None
    outcomes = []
    for move in moves:
        game = room.game_of(seat)
        assert game is not None
        outcomes.append(room.move(player, game.move_text(move), now))
    return outcomes


def events(outcome: Outcome) -> list[RoomEvent]:
    return [emission.full for emission in outcome.emissions]


def kinds(outcome: Outcome) -> list[type]:
    return [type(event) for event in events(outcome)]


def refused(code: str) -> pytest.RaisesExc[RoomError]:
    """Expect a :class:`RoomError` with protocol error ``code``."""
    return pytest.raises(RoomError, check=lambda error: error.code == code)


def boards(view: RoomView) -> dict[int, list[list[int | None]] | None]:
    return {racer.seat: racer.board for racer in view.racers}


def state_of(room: Driven) -> tuple[bytes, bytes, bytes]:
    """Everything a command could change that anyone could see: the record, and every view."""
    views = [encode(Snapshot(room.code, room.version, room.view(seat, T0))) for seat in (None, *room.racers())]
    games = [room.game_of(seat) for seat in sorted(room.racers())]
    full = msgspec.json.encode([[g.full_view().piles, g.full_view().hidden, len(g.moves)] for g in games if g])
    return encode_record(room.record), b"".join(views), full


def antares_race(time_limit: int | None = None) -> tuple[Driven, int]:
    """A two-racer race on the winnable Antares deal, started; returns the room and the start time."""
    room = open_room("antares", WINNABLE_ANTARES, 2, autoplay="safe", time_limit=time_limit)
    return room, start_race(room)


def practice(deal: str = WINNABLE_ANTARES) -> tuple[Driven, int]:
    """A one-racer Antares room on a chosen deal, started."""
    room = open_room("antares", picks="1", racers=1, deal=deal)  # the chosen deal wins over the picker
    return room, start_race(room)
