"""Drivers the room tests share: rooms at fixed times with fixed deals, and a winning line.

Every room here is driven with explicit times in milliseconds (from :data:`T0`) and a
deal picker that always answers the same deal, so each test replays exactly.
Players are ``ann`` (the creator, seat 0), ``bob``, ``cat`` and ``dan``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

from protocol.messages import RoomOptions
from server.games import Antares, Autoplay, Move, Options
from server.rooms.lifecycle import COUNTDOWN_MS, State
from server.rooms.step import Outcome
from server.solver import Budget, Solved, solve
from tests.rooms.driving import Driven, create

T0 = 1_700_000_000_000
PLAYERS = ("ann", "bob", "cat", "dan")
#: Antares deal 24 is solved in well under a second (autoplay "safe", the default option).
WINNABLE_ANTARES = "24"


def open_room(
    variant: str = "scorpion", picks: str = "617", racers: int = 2, seated: int | None = None, **options: object
) -> Driven:
    """A room for ``racers`` with ``seated`` of :data:`PLAYERS` in it (all by default), at :data:`T0`,
    whose deal picker always picks deal ``picks``."""
    room, _ = create(
        "ROOM",
        variant,
        RoomOptions(max_racers=racers, **options),  # type: ignore[arg-type]
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
    started = now + COUNTDOWN_MS
    assert room.next_deadline() == started  # the countdown
    room.tick(started)
    assert room.state is State.RACING
    return started


@cache
def winning_line() -> tuple[Move, ...]:
    """A line that wins Antares :data:`WINNABLE_ANTARES` with safe autoplay (solved once per session)."""
    result = solve(Antares, WINNABLE_ANTARES, Options(autoplay=Autoplay.SAFE), Budget(seconds=10))
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
