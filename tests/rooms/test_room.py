"""The sans-I/O room (server/rooms/room.py): creating, seats, ready and the countdown, and
the contract that a decided step changes nothing until it is applied.

Every command gets an explicit time (ms from ``T0``) and the deal is fixed, so each
test is an exact replay of a race. No sockets, no storage: what the network layer would
do with an :class:`Outcome` is read off the outcome itself.
"""

from __future__ import annotations

import pytest

from protocol.messages import (
    BoardChanged,
    ProgressChanged,
    RacerConnection,
    RacerJoined,
    RacerLeft,
    RacerReady,
    RoomOptions,
    StateChanged,
)
from server.games import Antares, Autoplay, Options, Scorpion
from server.rooms import commands
from server.rooms.lifecycle import State
from server.rooms.step import Outcome
from server.rooms.timing import DEFAULT_COUNTDOWN_MS
from tests.rooms import (
    ANN,
    BOB,
    CAT,
    T0,
    events,
    kinds,
    open_room,
    play,
    practice,
    refused,
    start_race,
    state_of,
    winning_line,
)
from tests.rooms.driving import Driven, create

# -- creating ------------------------------------------------------------------------


def test_creator_is_seated_in_seat_zero() -> None:
    room, outcome = create("ROOM", "scorpion", RoomOptions(), ANN, "Ann", T0)
    assert room.racers() == {0: ANN}
    assert outcome.save
    [joined] = events(outcome)
    assert isinstance(joined, RacerJoined)
    assert (joined.racer.seat, joined.racer.player, joined.racer.name) == (0, ANN, "Ann")
    view = room.view(None, T0)
    assert (view.state, view.creator, view.variant, view.race) == ("waiting", ANN, "scorpion", 1)


@pytest.mark.parametrize(("public", "delay"), [(False, 0.0), (True, 15.0)])
def test_spectator_delay_defaults_by_visibility(public: bool, delay: float) -> None:
    room, _ = create("ROOM", "scorpion", RoomOptions(public=public), ANN, "Ann", T0)
    assert room.spectator_delay == delay
    assert room.view(None, T0).options.spectator_delay == delay


def test_chosen_spectator_delay_is_kept() -> None:
    room, _ = create("ROOM", "scorpion", RoomOptions(public=True, spectator_delay=2.5), ANN, "Ann", T0)
    assert room.spectator_delay == 2.5


def test_practice_room_plays_its_chosen_deal() -> None:
    room, _ = practice("617")
    game = room.game_of(0)
    assert game is not None
    assert str(game.deal) == "617"
    assert game.full_view() == Antares.new(617, Options(autoplay=Autoplay.SAFE)).full_view()


def test_only_practice_rooms_choose_their_deal() -> None:
    with refused("not-allowed"):
        create("ROOM", "scorpion", RoomOptions(max_racers=2, deal="617"), ANN, "Ann", T0)


@pytest.mark.parametrize("deal", ["x", "-3", "1" * 21])
def test_bad_deal_number_is_invalid_options(deal: str) -> None:
    with refused("invalid-options"):
        create("ROOM", "scorpion", RoomOptions(max_racers=1, deal=deal), ANN, "Ann", T0)


# -- seats, ready, start ----------------------------------------------------------------


def test_join_takes_the_next_free_seat() -> None:
    room = open_room(racers=3, seated=1)
    outcome = room.join(BOB, "Bob", T0)
    [joined] = events(outcome)
    assert isinstance(joined, RacerJoined)
    assert joined.racer.seat == 1
    assert room.racers() == {0: ANN, 1: BOB}


def test_full_room_refuses_another_racer() -> None:
    room = open_room(racers=2)
    with refused("room-full"):
        room.join(CAT, "Cat", T0)
    assert room.racers() == {0: ANN, 1: BOB}


def test_no_joining_a_finished_race() -> None:
    room = open_room(racers=3, seated=2)
    room.start(ANN, T0)
    started = T0 + DEFAULT_COUNTDOWN_MS
    room.tick(started)
    room.resign(ANN, started)
    room.resign(BOB, started)
    with refused("race-over"):
        room.join(CAT, "Cat", started + 1)
    room.rematch(ANN, started + 2)
    room.join(CAT, "Cat", started + 3)
    assert room.racers() == {0: ANN, 1: BOB, 2: CAT}


def test_a_room_kept_as_of_its_finish_still_holds_that_race_after_a_rematch() -> None:
    room = open_room(racers=2)
    room.start(ANN, T0)
    started = T0 + DEFAULT_COUNTDOWN_MS
    room.tick(started)
    room.move(ANN, room.legal_moves(ANN)[0], started + 5)
    room.resign(ANN, started + 10)
    room.resign(BOB, started + 10)
    finished = room.as_of_now()
    results, race = finished.results(), finished.record.race
    room.rematch(ANN, started + 20)
    room.start(ANN, started + 20)
    room.tick(started + 20 + DEFAULT_COUNTDOWN_MS)
    room.move(ANN, room.legal_moves(ANN)[0], started + 30 + DEFAULT_COUNTDOWN_MS)
    assert room.record.race == race + 1
    assert (finished.state, finished.record.race, finished.results()) == (State.FINISHED, race, results)


def test_no_joining_once_the_race_has_started() -> None:
    room = open_room(racers=3, seated=2)
    room.start(ANN, T0)
    with refused("race-in-progress"):
        room.join(CAT, "Cat", T0)
    room.tick(T0 + DEFAULT_COUNTDOWN_MS)
    with refused("race-in-progress"):
        room.join(CAT, "Cat", T0 + DEFAULT_COUNTDOWN_MS)


def test_joining_again_is_a_reconnect_not_a_second_seat() -> None:
    room = open_room()
    room.connection(BOB, False, T0)
    outcome = room.join(BOB, "Bob", T0 + 5)
    assert events(outcome) == [RacerConnection(seat=1, connected=True)]
    assert room.racers() == {0: ANN, 1: BOB}


def test_countdown_starts_by_itself_when_the_room_is_full_and_all_ready() -> None:
    room = open_room(racers=3, seated=2)
    room.ready(ANN, True, T0)
    room.ready(BOB, True, T0)
    assert room.state is State.WAITING  # not full yet
    room.join(CAT, "Cat", T0 + 10)
    assert room.state is State.WAITING  # Cat is not ready
    outcome = room.ready(CAT, True, T0 + 20)
    assert kinds(outcome) == [RacerReady, StateChanged]
    change = events(outcome)[1]
    assert isinstance(change, StateChanged)
    assert change.state == "countdown"
    assert change.clock.countdown_ends == T0 + 20 + DEFAULT_COUNTDOWN_MS
    assert room.next_deadline() == T0 + 20 + DEFAULT_COUNTDOWN_MS


def test_creator_can_start_with_fewer_racers_ready_or_not() -> None:
    room = open_room(racers=4, seated=2)
    outcome = room.start(ANN, T0)
    assert room.state is State.COUNTDOWN
    assert kinds(outcome) == [StateChanged]


def test_only_the_creator_may_start() -> None:
    room = open_room(racers=3, seated=2)
    with refused("not-allowed"):
        room.start(BOB, T0)
    with refused("not-in-room"):
        room.start(CAT, T0)
    assert room.state is State.WAITING


def test_start_twice_is_refused() -> None:
    room = open_room()
    room.start(ANN, T0)
    with refused("not-waiting"):
        room.start(ANN, T0 + 1)


def countdown_cancelled(room: Driven, outcome: Outcome) -> None:
    assert room.state is State.WAITING
    assert isinstance(events(outcome)[-1], StateChanged)
    assert events(outcome)[-1] == StateChanged(state="waiting", clock=room.view(None, T0 + 1).clock, race=1)
    r = room.record
    assert (r.deal, r.salt, r.commitment, r.countdown_ends) == (None, None, None, None)
    view = room.view(None, T0 + 1)
    assert view.commitment is None
    assert room.next_deadline() is None


def test_unready_during_countdown_cancels_it() -> None:
    room = open_room()
    room.ready(ANN, True, T0)
    room.ready(BOB, True, T0)
    outcome = room.ready(BOB, False, T0 + 1)
    assert kinds(outcome) == [RacerReady, StateChanged]
    countdown_cancelled(room, outcome)
    assert room.tick(T0 + DEFAULT_COUNTDOWN_MS).emissions == []


def test_leaving_during_countdown_cancels_it() -> None:
    room = open_room(racers=3, seated=3)
    room.start(ANN, T0)
    outcome = room.leave(CAT, T0 + 1)
    assert kinds(outcome) == [RacerLeft, StateChanged]
    countdown_cancelled(room, outcome)
    assert room.racers() == {0: ANN, 1: BOB}


def test_creator_leaving_hands_the_room_to_the_next_racer() -> None:
    room = open_room(racers=3)
    outcome = room.leave(ANN, T0)
    assert events(outcome) == [RacerLeft(seat=0, creator=BOB)]
    assert room.view(None, T0).creator == BOB
    assert events(room.leave(CAT, T0)) == [RacerLeft(seat=2)]  # not the creator: no change
    with refused("not-in-room"):
        room.start(ANN, T0)
    room.start(BOB, T0)
    assert room.state is State.COUNTDOWN


def test_last_racer_leaving_empties_the_room() -> None:
    room = open_room(racers=2, seated=1)
    room.leave(ANN, T0)
    assert room.is_empty()


def test_ready_is_refused_once_racing() -> None:
    room = open_room()
    start_race(room)
    with refused("not-waiting"):
        room.ready(ANN, False, T0 + DEFAULT_COUNTDOWN_MS)


def test_ready_twice_changes_nothing() -> None:
    room = open_room(racers=3)
    room.ready(ANN, True, T0)
    version = room.version
    assert room.ready(ANN, True, T0).emissions == []
    assert room.version == version


# -- the countdown and the start -----------------------------------------------------------


def test_tick_before_countdown_ends_does_nothing() -> None:
    room = open_room()
    room.start(ANN, T0)
    version = room.version
    outcome = room.tick(T0 + DEFAULT_COUNTDOWN_MS - 1)
    assert outcome.emissions == []
    assert room.version == version
    assert room.state is State.COUNTDOWN


def test_race_starts_when_countdown_ends_with_the_same_deal_for_all() -> None:
    room = open_room(racers=3)
    room.start(ANN, T0)
    started = T0 + DEFAULT_COUNTDOWN_MS
    outcome = room.tick(started)
    assert room.state is State.RACING
    change, *board_events = outcome.emissions
    assert change.full == StateChanged(
        state="racing",
        clock=room.view(None, started).clock,
        race=1,
        commitment=room.record.commitment,
        certified=False,  # a Scorpion room wants winnable deals, and this one was drawn at random
    )
    assert room.view(None, started).clock.started == started
    expected = Scorpion.new(617)
    for seat, emission in enumerate(board_events):
        game = room.game_of(seat)
        assert game is not None
        assert game.full_view() == expected.full_view()
        board = emission.full
        assert isinstance(board, BoardChanged)
        assert board.seat == seat
        assert [(p.pile, p.keep, tuple(p.add)) for p in board.patches] == [
            (i, 0, pile) for i, pile in enumerate(game.public_piles())
        ]
        assert emission.redacted == ProgressChanged(seat=seat, progress=board.progress)
        assert emission.owner == seat
    assert [e.version for e in outcome.emissions] == list(range(room.version - 3, room.version + 1))


def test_a_cancelled_countdown_keeps_the_prepared_deal_and_salt() -> None:
    """A daily attempt (or a certified winnable race) keeps its deal through a cancelled
    countdown: the next countdown deals the same cards under the same commitment."""
    room, _ = create(
        "ROOM",
        "scorpion",
        RoomOptions(),
        ANN,
        "Ann",
        T0,
        deal_picker=lambda _v: "617",
        next_deal="24",
        next_salt="ab" * 16,
    )
    room.join(BOB, "Bob", T0)
    room.ready("ann", True, T0)
    room.ready("bob", True, T0)
    first = room.record.commitment
    assert room.record.deal == "24"
    room.ready("bob", False, T0 + 1)  # cancels the countdown
    assert room.state == State.WAITING  # not `is`: mypy would keep that narrowing past the calls below
    room.ready("bob", True, T0 + 2)
    assert room.record.deal == "24"
    assert room.record.commitment == first
    room.tick(T0 + 2 + DEFAULT_COUNTDOWN_MS)
    assert room.state is State.RACING
    assert room.record.next_deal is None  # used up by the race


# -- decided, not applied (a step storage could not take) ----------------------------------------


def test_a_move_decided_but_not_applied_leaves_the_room_as_it_was() -> None:
    room = open_room()
    start_race(room)
    room.move(ANN, "4D>2", T0 + 4000)
    before = state_of(room)
    version = room.version
    step = room.decide(commands.Move(ANN, "deal"), T0 + 5000)
    assert step.version == version + 1
    assert room.version == version
    assert state_of(room) == before
    assert room.view(0, T0).racers[0].progress.moves == 1
    again = room.move(ANN, "deal", T0 + 6000)  # the same move is accepted again, at the same version
    assert [e.version for e in again.emissions] == [version + 1]


def test_a_winning_move_decided_but_not_applied_does_not_finish_the_race() -> None:
    room, started = practice()
    line = winning_line()
    play(room, ANN, line[:-1], started + 1000)
    before = state_of(room)
    game = room.game_of(0)
    assert game is not None
    step = room.decide(commands.Move(ANN, game.move_text(line[-1])), started + 2000)
    assert step.outcome.finished
    assert step.record.state == "finished"
    assert room.state is State.RACING
    assert state_of(room) == before
    [again] = play(room, ANN, line[-1:], started + 3000)
    assert again.finished
    assert room.view(0, T0).racers[0].finished_ms == 3000


def test_an_undo_decided_but_not_applied_leaves_the_board() -> None:
    room = open_room()
    start_race(room)
    room.move(ANN, "JH>6", T0 + 4000)
    room.move(ANN, "deal", T0 + 4000)
    before = state_of(room)
    step = room.decide(commands.TakeBack(ANN), T0 + 5000)
    assert step.outcome.log
    assert state_of(room) == before
    room.undo(ANN, T0 + 6000)  # and the undo can be done for good
    assert "deal" in room.legal_moves(ANN)


def test_a_resign_that_would_end_the_race_decided_but_not_applied() -> None:
    room = open_room()
    start_race(room)
    room.resign(BOB, T0 + 4000)
    before = state_of(room)
    step = room.decide(commands.Resign(ANN), T0 + 5000)
    assert step.outcome.finished
    assert room.state is State.RACING
    assert state_of(room) == before
    room.move(ANN, "4D>2", T0 + 6000)


def test_a_step_applies_only_to_the_room_it_was_decided_on() -> None:
    room = open_room()
    start_race(room)
    first = room.decide(commands.Move(ANN, "4D>2"), T0 + 4000)
    room.apply(first)
    with pytest.raises(ValueError, match="decided at version"):
        room.apply(first)


def test_the_racing_seats_are_the_racers_still_racing() -> None:
    room = open_room(racers=3)
    assert room.racing_seats() == frozenset()  # waiting: nobody races yet
    started = start_race(room)
    assert room.racing_seats() == frozenset({0, 1, 2})
    room.resign(BOB, started + 1000)
    assert room.racing_seats() == frozenset({0, 2}) == {seat for seat in room.racers() if room.is_racing(seat)}
