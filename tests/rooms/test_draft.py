"""The commands' rules (server/rooms/draft.py): moves, undo, hints and legal moves,
finishing and ranking, grace periods for dropped racers, rematches, the cap on a race's moves.
"""

from __future__ import annotations

import pytest

from protocol.fairness import verify
from protocol.messages import (
    BoardChanged,
    HintItem,
    ProgressChanged,
    RaceOver,
    RacerConnection,
    RacerFinished,
    RacerLeft,
    RacerResigned,
    Rematched,
    RoomOptions,
    StateChanged,
)
from server.rooms import commands
from server.rooms.draft import MAX_LOG_ENTRIES
from server.rooms.errors import RoomError
from server.rooms.lifecycle import State
from server.rooms.record import copy_record
from server.rooms.timing import DEFAULT_GRACE_MS, RoomTiming
from tests.rooms import (
    ANN,
    BOB,
    CAT,
    T0,
    WINNABLE_ANTARES,
    antares_race,
    events,
    kinds,
    open_room,
    play,
    refused,
    start_race,
    state_of,
    winning_line,
)
from tests.rooms.driving import Driven, create, log_texts

# -- moves ------------------------------------------------------------------------------


def test_a_legal_move_reports_its_canonical_text_and_log_entry() -> None:
    room = open_room()
    start_race(room)
    outcome = room.move(ANN, "4d > 2", T0 + 4000)
    assert outcome.move == "4D>2"
    assert log_texts(outcome) == [(0, "4D>2")]
    [emission] = outcome.emissions
    assert isinstance(emission.full, BoardChanged)
    assert emission.owner == 0
    assert emission.redacted == ProgressChanged(seat=0, progress=emission.full.progress)
    assert emission.full.progress.moves == 1


@pytest.mark.parametrize(
    ("text", "rule"), [("QS>1", "build-in-suit"), ("7D>5", "no-such-card"), ("2D>h", "no-foundation-moves")]
)
def test_illegal_move_names_the_rule_and_changes_nothing(text: str, rule: str) -> None:
    room = open_room()
    start_race(room)
    before = state_of(room)
    version = room.version
    with pytest.raises(RoomError) as caught:
        room.move(ANN, text, T0 + 4000)
    assert (caught.value.code, caught.value.rule) == ("illegal-move", rule)
    assert room.version == version
    assert state_of(room) == before


@pytest.mark.parametrize("text", ["zz>>", "4D>9", "deal 2", "XX>1"])
def test_garbage_notation_is_an_invalid_move(text: str) -> None:
    room = open_room()
    start_race(room)
    before = state_of(room)
    with refused("invalid-move"):
        room.move(ANN, text, T0 + 4000)
    assert state_of(room) == before


def test_no_moves_before_the_race() -> None:
    room = open_room()
    with refused("not-racing"):
        room.move(ANN, "4D>2", T0)
    room.start(ANN, T0)
    with refused("not-racing"):
        room.move(ANN, "4D>2", T0)
    with refused("not-racing"):
        room.legal_moves(ANN)
    with refused("not-racing"):
        room.hints(ANN)
    with refused("not-racing"):
        room.undo(ANN, T0)
    with refused("not-racing"):
        room.resign(ANN, T0)


def test_no_moves_after_resigning_or_after_the_race() -> None:
    room = open_room()
    start_race(room)
    room.resign(BOB, T0 + 4000)
    with refused("not-racing"):
        room.move(BOB, "4D>2", T0 + 4000)
    with refused("not-racing"):
        room.resign(BOB, T0 + 4000)
    room.move(ANN, "4D>2", T0 + 4000)  # Ann still races
    room.resign(ANN, T0 + 5000)
    with refused("not-racing"):
        room.move(ANN, "JH>6", T0 + 5000)


def test_a_stranger_cannot_move() -> None:
    room = open_room()
    start_race(room)
    with refused("not-in-room"):
        room.move(CAT, "4D>2", T0 + 4000)


def test_undo_takes_back_the_last_move_but_still_counts_it() -> None:
    room = open_room()
    start_race(room)
    before = room.view(0, T0).racers[0].board
    room.move(ANN, "4D>2", T0 + 4000)
    outcome = room.undo(ANN, T0 + 5000)
    assert log_texts(outcome) == [(0, "undo")]
    [emission] = outcome.emissions
    assert isinstance(emission.full, BoardChanged)
    assert emission.full.progress.moves == 1  # undone moves count
    assert room.view(0, T0).racers[0].board == before


def test_nothing_to_undo_at_the_deal() -> None:
    room = open_room()
    start_race(room)
    with refused("nothing-to-undo"):
        room.undo(ANN, T0 + 4000)


def test_undo_disabled() -> None:
    room = open_room(undo=False)
    start_race(room)
    room.move(ANN, "4D>2", T0 + 4000)
    before = state_of(room)
    with refused("undo-disabled"):
        room.undo(ANN, T0 + 5000)
    assert state_of(room) == before


def test_hints_are_playable_moves() -> None:
    room = open_room()
    start_race(room)
    hints = room.hints(ANN)
    assert hints
    assert all(isinstance(item, HintItem) for item in hints)
    for item in hints:
        step = room.decide(commands.Move(ANN, item.move), T0 + 4000)
        assert step.outcome.move == item.move


def test_hints_disabled() -> None:
    room = open_room(hints=False)
    start_race(room)
    with refused("hints-disabled"):
        room.hints(ANN)


def test_legal_moves_lists_what_move_accepts() -> None:
    room = open_room()
    start_race(room)
    texts = room.legal_moves(ANN)
    assert sorted(texts) == ["4D>2", "JH>6", "deal"]
    before = state_of(room)
    for text in texts:
        step = room.decide(commands.Move(ANN, text), T0 + 4000)
        assert step.outcome.move == text
        assert state_of(room) == before


# -- finishing --------------------------------------------------------------------------------


def test_a_winner_finishes_with_server_measured_time() -> None:
    room, started = antares_race()
    line = winning_line()
    outcomes = play(room, ANN, line, started + 61_500)
    last = outcomes[-1]
    finished = [e for e in events(last) if isinstance(e, RacerFinished)]
    assert finished == [RacerFinished(seat=0, time_ms=61_500, moves=len(line))]
    assert last.refresh == {0}
    assert not last.finished  # Bob still races
    assert room.state is State.RACING
    assert all(not any(isinstance(e, RacerFinished) for e in events(o)) for o in outcomes[:-1])


def test_race_ends_when_every_racer_is_done() -> None:
    room, started = antares_race()
    line = winning_line()
    play(room, ANN, line, started + 50_000)
    outcome = room.resign(BOB, started + 70_000)
    assert outcome.finished
    assert outcome.refresh == {0, 1}
    assert room.state is State.FINISHED
    assert kinds(outcome) == [RacerResigned, StateChanged, RaceOver]
    over = events(outcome)[-1]
    assert isinstance(over, RaceOver)
    assert [(r.place, r.seat, r.finished, r.time_ms, r.moves) for r in over.results] == [
        (1, 0, True, 50_000, len(line)),
        (2, 1, False, None, 0),
    ]
    assert over.reveal is not None
    assert over.reveal.deal == WINNABLE_ANTARES
    assert verify("antares", over.reveal.deal, over.reveal.salt, room.view(None, T0).commitment or "")
    view = room.view(1, started + 80_000)
    assert view.results == over.results
    assert view.reveal == over.reveal
    assert view.clock.finished == started + 70_000


def test_two_finishers_ranked_by_time() -> None:
    room, started = antares_race()
    line = winning_line()
    play(room, BOB, line, started + 40_000)
    last = play(room, ANN, line, started + 45_000)[-1]
    assert last.finished
    over = events(last)[-1]
    assert isinstance(over, RaceOver)
    assert [(r.seat, r.time_ms) for r in over.results] == [(1, 40_000), (0, 45_000)]


def test_time_limit_ends_the_race_and_ranks_by_progress() -> None:
    room, started = antares_race(time_limit=30)
    ends = started + 30_000
    assert room.view(None, started).clock.ends == ends
    assert room.next_deadline() == ends
    play(room, BOB, winning_line()[:25], started + 1000)
    assert room.view(None, started).racers[1].progress.home > 0
    assert room.tick(ends - 1).emissions == []
    outcome = room.tick(ends)
    assert outcome.finished
    assert room.state is State.FINISHED
    assert kinds(outcome) == [StateChanged, RaceOver]
    over = events(outcome)[-1]
    assert isinstance(over, RaceOver)
    assert [(r.place, r.seat, r.finished) for r in over.results] == [(1, 1, False), (2, 0, False)]
    assert over.results[0].moves == 25


# -- grace period -----------------------------------------------------------------------------


def test_a_dropped_racer_loses_the_seat_before_the_race() -> None:
    room = open_room()
    outcome = room.connection(BOB, False, T0 + 10)
    assert events(outcome) == [RacerConnection(seat=1, connected=False)]
    deadline = T0 + 10 + DEFAULT_GRACE_MS
    assert room.next_deadline() == deadline
    assert room.tick(deadline - 1).emissions == []
    outcome = room.tick(deadline)
    assert events(outcome) == [RacerLeft(seat=1)]
    assert room.racers() == {0: ANN}


def test_a_dropped_racer_is_resigned_during_the_race() -> None:
    room = open_room()
    started = start_race(room)
    room.connection(BOB, False, started + 1000)
    outcome = room.tick(started + 1000 + DEFAULT_GRACE_MS)
    assert events(outcome) == [RacerResigned(seat=1, reason="disconnected")]
    assert log_texts(outcome) == [(1, "resign disconnected")]
    bob = room.view(None, T0).racers[1]
    assert bob.resigned == "disconnected"
    assert not bob.connected
    assert room.state is State.RACING


def test_reconnecting_in_time_keeps_the_seat() -> None:
    room = open_room()
    started = start_race(room)
    room.connection(BOB, False, started)
    outcome = room.connection(BOB, True, started + 5000)
    assert events(outcome) == [RacerConnection(seat=1, connected=True)]
    assert room.next_deadline() is None
    assert room.tick(started + DEFAULT_GRACE_MS).emissions == []
    assert room.view(None, T0).racers[1].resigned is None


def test_grace_period_is_configurable() -> None:
    room, _ = create("ROOM", "scorpion", RoomOptions(), ANN, "Ann", T0, timing=RoomTiming(grace_ms=500))
    room.join(BOB, "Bob", T0)
    room.connection(BOB, False, T0)
    assert events(room.tick(T0 + 500)) == [RacerLeft(seat=1)]


def test_countdown_is_configurable_and_its_end_is_in_the_record() -> None:
    room, _ = create("ROOM", "scorpion", RoomOptions(), ANN, "Ann", T0, timing=RoomTiming(countdown_ms=50))
    room.join(BOB, "Bob", T0)
    room.start(ANN, T0 + 10)
    assert room.record.countdown_ends == room.next_deadline() == T0 + 60
    assert room.tick(T0 + 59).emissions == []
    # Restored under other settings, the room keeps the countdown it announced.
    restored = Driven.restore(copy_record(room.record), {}, T0 + 20, RoomTiming(countdown_ms=5000))
    for counting in (room, restored):
        counting.tick(T0 + 60)
        assert counting.state is State.RACING


# -- rematch ------------------------------------------------------------------------------------


def finished_race(room: Driven) -> None:
    started = start_race(room)
    room.move(ANN, "4D>2", started + 100)
    room.resign(ANN, started + 200)
    room.resign(BOB, started + 200)
    assert room.state is State.FINISHED


def test_rematch_only_after_the_race() -> None:
    room = open_room()
    with refused("not-finished"):
        room.rematch(ANN, T0)
    start_race(room)
    with refused("not-finished"):
        room.rematch(ANN, T0 + 4000)


def test_rematch_resets_the_room_for_a_new_race_with_a_new_deal() -> None:
    deals = iter(["617", "618"])
    room, _ = create("ROOM", "scorpion", RoomOptions(), ANN, "Ann", T0, deal_picker=lambda _v: next(deals))
    room.join(BOB, "Bob", T0)
    finished_race(room)
    first = room.view(None, T0).reveal
    outcome = room.rematch(BOB, T0 + 9000)
    assert outcome.save  # race 2 is stored; its logs are new keys (race 1's stay readable)
    assert events(outcome) == [
        Rematched(race=2),
        StateChanged(state="waiting", clock=room.view(None, T0 + 9000).clock, race=2),
    ]
    view = room.view(None, T0 + 9000)
    assert (view.state, view.race, view.commitment, view.reveal, view.results) == ("waiting", 2, None, None, None)
    for racer in view.racers:
        assert racer.board is None
        assert not racer.ready
        assert racer.resigned is None
        assert racer.finished_ms is None
        assert (racer.progress.home, racer.progress.moves) == (0, 0)
    assert room.record.deal is None
    started = start_race(room, T0 + 10_000)
    game = room.game_of(0)
    assert game is not None
    assert str(game.deal) == "618"
    assert game.moves == []
    room.resign(ANN, started + 1)
    room.resign(BOB, started + 1)
    second = room.view(None, T0).reveal
    assert first is not None
    assert second is not None
    assert (first.deal, second.deal) == ("617", "618")
    assert first.salt != second.salt


def test_a_racer_who_left_during_the_race_is_not_in_the_rematch() -> None:
    room = open_room(racers=2)
    started = start_race(room)
    assert events(room.leave(ANN, started + 1)) == [RacerResigned(seat=0, reason="left")]
    assert room.view(None, T0).racers[0].resigned == "left"
    room.resign(BOB, started + 2)
    outcome = room.rematch(BOB, started + 4)
    assert kinds(outcome) == [Rematched, StateChanged, RacerLeft]
    assert events(outcome)[-1] == RacerLeft(seat=0, creator=BOB)
    assert room.racers() == {1: BOB}
    room.start(BOB, started + 5)
    assert room.state is State.COUNTDOWN


def test_a_racer_dropped_during_the_race_leaves_after_the_rematch_unless_back() -> None:
    room = open_room(racers=3)
    started = start_race(room)
    for player in (BOB, CAT):
        room.connection(player, False, started)
    room.tick(started + DEFAULT_GRACE_MS)  # Bob and Cat resigned: disconnected
    room.resign(ANN, started + DEFAULT_GRACE_MS)
    rematch = started + DEFAULT_GRACE_MS + 1
    room.rematch(ANN, rematch)
    assert room.next_deadline() == rematch + DEFAULT_GRACE_MS
    room.join(CAT, "Cat", rematch + 10)  # Cat comes back in time
    assert events(room.tick(rematch + DEFAULT_GRACE_MS)) == [RacerLeft(seat=1)]
    assert room.racers() == {0: ANN, 2: CAT}


@pytest.mark.parametrize("leaves", ["done-then-leaves-during-the-race", "after-the-race"])
def test_a_racer_who_left_when_already_done_is_not_in_the_rematch(leaves: str) -> None:
    room = open_room(racers=3)
    started = start_race(room)
    room.resign(ANN, started + 1)
    if leaves == "done-then-leaves-during-the-race":
        room.leave(ANN, started + 2)
    room.resign(BOB, started + 3)
    room.resign(CAT, started + 3)
    assert room.state is State.FINISHED
    if leaves == "after-the-race":
        room.leave(ANN, started + 4)
    room.rematch(BOB, started + 5)
    assert room.racers() == {1: BOB, 2: CAT}


def test_a_racer_s_moves_in_one_race_are_capped() -> None:
    """Finding 9: nothing limited how long a move log could grow."""
    room = open_room()
    start_race(room)
    for step in range(MAX_LOG_ENTRIES - 1):
        room.move(ANN, "4D>2", T0 + 4000 + step)
        room.undo(ANN, T0 + 4000 + step)
    room.move(ANN, "4D>2", T0 + 8_000_000)  # the last move allowed
    with refused("move-limit"):
        room.move(ANN, "4D>2", T0 + 9_000_000)
    with refused("move-limit"):
        room.undo(ANN, T0 + 9_000_000)
    room.resign(ANN, T0 + 9_000_001)  # resigning is always allowed
