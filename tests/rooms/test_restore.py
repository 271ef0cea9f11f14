"""A room rebuilt from its stored record and move logs (``Room.restore``, after a restart
or on a new owner): boards, progress and results as they were; racers who do not return
are resigned.
"""

from __future__ import annotations

from protocol.messages import RacerResigned
from server.rooms.lifecycle import State
from server.rooms.record import decode_record, encode_record
from server.rooms.timing import DEFAULT_GRACE_MS
from tests.rooms import (
    ANN,
    BOB,
    CAT,
    PLAYERS,
    T0,
    antares_race,
    events,
    open_room,
    play,
    start_race,
    winning_line,
)
from tests.rooms.driving import Driven, log_texts


def test_restore_rebuilds_boards_and_progress_from_record_and_logs() -> None:
    room = open_room(racers=3)
    started = start_race(room)
    logs: dict[int, list[str]] = {}
    now = started
    for step in range(24):
        now += 500
        player = PLAYERS[step % 3]
        legal = room.legal_moves(player) if player != CAT or step < 14 else []
        if step == 14:
            outcome = room.resign(CAT, now)
        elif step in (7, 11) or (not legal and player != CAT):
            outcome = room.undo(player, now)
        elif legal:
            outcome = room.move(player, legal[step * 7 % len(legal)], now)
        else:
            continue
        for seat, entry in log_texts(outcome):
            logs.setdefault(seat, []).append(entry)
    assert {entry for entries in logs.values() for entry in entries} >= {"undo", "deal", "resign resigned"}
    assert room.state is State.RACING
    record = decode_record(encode_record(room.record))
    restored = Driven.restore(record, logs, now + 1000)
    assert restored.state is State.RACING
    live, back = room.view(None, now), restored.view(None, now)
    assert [(r.seat, r.board, r.progress, r.resigned) for r in back.racers] == [
        (r.seat, r.board, r.progress, r.resigned) for r in live.racers
    ]
    assert not any(r.connected for r in back.racers)
    assert back.commitment == live.commitment
    for seat in room.racers():
        a, b = room.game_of(seat), restored.game_of(seat)
        assert a is not None
        assert b is not None
        assert a.full_view() == b.full_view()
    assert restored.legal_moves(ANN) == room.legal_moves(ANN)
    assert restored.next_deadline() == now + 1000 + DEFAULT_GRACE_MS


def test_restored_racers_who_do_not_return_are_resigned() -> None:
    room = open_room()
    started = start_race(room)
    restored = Driven.restore(decode_record(encode_record(room.record)), {}, started + 10)
    restored.join(ANN, "Ann", started + 20)  # Ann comes back
    outcome = restored.tick(started + 10 + DEFAULT_GRACE_MS)
    assert events(outcome) == [RacerResigned(seat=1, reason="disconnected")]


def test_restore_of_a_finished_race_keeps_its_results() -> None:
    room, started = antares_race()
    logs: dict[int, list[str]] = {}
    for outcome in [*play(room, BOB, winning_line(), started + 30_000), room.resign(ANN, started + 31_000)]:
        for seat, entry in log_texts(outcome):
            logs.setdefault(seat, []).append(entry)
    assert room.state is State.FINISHED
    restored = Driven.restore(decode_record(encode_record(room.record)), logs, started + 99_000)
    assert restored.view(None, T0).results == room.view(None, T0).results
    assert restored.view(None, T0).reveal == room.view(None, T0).reveal
