"""The sans-I/O room: seats, lifecycle, moves, hidden information, timers, restore.

Every command gets an explicit time (ms from ``T0``) and the deal is fixed, so each
test is an exact replay of a race. No sockets, no storage: what the network layer would
do with an :class:`Outcome` is read off the outcome itself.
"""

from __future__ import annotations

from collections.abc import Iterator

import msgspec
import pytest

from protocol.codec import encode
from protocol.fairness import verify
from protocol.messages import (
    BoardChanged,
    HintItem,
    ProgressChanged,
    RaceOver,
    RacerConnection,
    RacerFinished,
    RacerJoined,
    RacerLeft,
    RacerReady,
    RacerResigned,
    Rematched,
    RoomEvent,
    RoomOptions,
    RoomView,
    Snapshot,
    StateChanged,
    Update,
)
from server.games import Antares, Autoplay, Options, Scorpion
from server.rooms import commands
from server.rooms.draft import MAX_LOG_ENTRIES
from server.rooms.errors import RoomError
from server.rooms.lifecycle import COUNTDOWN_MS, State
from server.rooms.record import decode_record, encode_record
from server.rooms.room import DEFAULT_GRACE_MS
from server.rooms.step import Outcome
from tests.rooms import PLAYERS, T0, WINNABLE_ANTARES, open_room, play, start_race, winning_line
from tests.rooms.driving import Driven, create, log_texts

ANN, BOB, CAT = PLAYERS[:3]


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
    started = T0 + COUNTDOWN_MS
    room.tick(started)
    room.resign(ANN, started)
    room.resign(BOB, started)
    with refused("race-over"):
        room.join(CAT, "Cat", started + 1)
    room.rematch(ANN, started + 2)
    room.join(CAT, "Cat", started + 3)
    assert room.racers() == {0: ANN, 1: BOB, 2: CAT}


def test_no_joining_once_the_race_has_started() -> None:
    room = open_room(racers=3, seated=2)
    room.start(ANN, T0)
    with refused("race-in-progress"):
        room.join(CAT, "Cat", T0)
    room.tick(T0 + COUNTDOWN_MS)
    with refused("race-in-progress"):
        room.join(CAT, "Cat", T0 + COUNTDOWN_MS)


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
    assert change.clock.countdown_ends == T0 + 20 + COUNTDOWN_MS
    assert room.next_deadline() == T0 + 20 + COUNTDOWN_MS


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
    assert room.tick(T0 + COUNTDOWN_MS).emissions == []


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
        room.ready(ANN, False, T0 + COUNTDOWN_MS)


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
    outcome = room.tick(T0 + COUNTDOWN_MS - 1)
    assert outcome.emissions == []
    assert room.version == version
    assert room.state is State.COUNTDOWN


def test_race_starts_when_countdown_ends_with_the_same_deal_for_all() -> None:
    room = open_room(racers=3)
    room.start(ANN, T0)
    started = T0 + COUNTDOWN_MS
    outcome = room.tick(started)
    assert room.state is State.RACING
    change, *board_events = outcome.emissions
    assert change.full == StateChanged(
        state="racing", clock=room.view(None, started).clock, race=1, commitment=room.record.commitment
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


# -- hidden information ------------------------------------------------------------------


def test_no_view_has_boards_before_the_race() -> None:
    room = open_room()
    for seat in (None, 0, 1):
        assert all(board is None for board in boards(room.view(seat, T0)).values())
    room.start(ANN, T0)
    for seat in (None, 0, 1):
        assert all(board is None for board in boards(room.view(seat, T0)).values())


def test_a_racer_sees_only_their_own_board_while_racing() -> None:
    room = open_room(racers=3)
    start_race(room)
    for seat in (0, 1, 2):
        shown = {number for number, board in boards(room.view(seat, T0)).items() if board is not None}
        assert shown == {seat}
    assert all(board is not None for board in boards(room.view(None, T0)).values())


def test_a_racer_who_is_done_sees_every_board() -> None:
    room = open_room(racers=3)
    start_race(room)
    room.resign(BOB, T0 + 5000)
    assert all(board is not None for board in boards(room.view(1, T0)).values())
    assert {n for n, board in boards(room.view(0, T0)).items() if board is not None} == {0}


def test_a_racer_who_finished_sees_every_board() -> None:
    room, started = antares_race()
    play(room, ANN, winning_line(), started + 1000)
    assert room.state is State.RACING
    assert all(board is not None for board in boards(room.view(0, T0)).values())
    assert {n for n, board in boards(room.view(1, T0)).items() if board is not None} == {1}


def test_everyone_sees_every_board_after_the_race() -> None:
    room = open_room()
    start_race(room)
    room.resign(ANN, T0 + 4000)
    room.resign(BOB, T0 + 4000)
    assert room.state is State.FINISHED
    for seat in (None, 0, 1):
        assert all(board is not None for board in boards(room.view(seat, T0)).values())


def test_spectators_never_see_a_face_down_card() -> None:
    room = open_room()
    start_race(room)
    game = room.game_of(0)
    assert game is not None
    room.move(ANN, game.move_text(game.legal_moves()[0]), T0 + 4000)
    for racer in room.view(None, T0).racers:
        game = room.game_of(racer.seat)
        assert game is not None
        assert racer.board is not None
        full = game.full_view()
        assert sum(full.hidden) > 0  # Scorpion 617 has face-down cards and a stock
        for pile, cards, hidden in zip(racer.board, full.piles, full.hidden, strict=True):
            assert pile == [None] * hidden + list(cards[hidden:])


def drive_secret_race(room: Driven) -> Iterator[tuple[bytes, bool]]:
    """Every frame anyone could receive during a whole race (each event and each view,
    encoded), with whether the race is over when it is sent."""
    now = T0

    def frames(outcome: Outcome) -> Iterator[tuple[bytes, bool]]:
        over = room.state is State.FINISHED
        for emission in outcome.emissions:
            for event in (emission.full, emission.redacted):
                if event is not None:
                    update = Update(room=room.code, base=emission.version - 1, version=emission.version, events=[event])
                    yield encode(update), over
        for seat in (None, *room.racers()):
            yield encode(Snapshot(room.code, room.version, room.view(seat, now))), over

    yield from frames(room.set_spectators(2))
    yield from frames(room.ready(ANN, True, now))
    yield from frames(room.ready(BOB, True, now))
    now += COUNTDOWN_MS
    yield from frames(room.tick(now))
    for step in range(12):
        now += 700
        player = PLAYERS[step % 2]
        seat = room.seat_of(player)
        assert seat is not None
        game = room.game_of(seat)
        assert game is not None
        yield from frames(room.move(player, game.move_text(game.legal_moves()[-1]), now))
        yield " ".join(room.legal_moves(player)).encode(), False
        yield b"".join(hint.move.encode() + hint.reason.encode() for hint in room.hints(player)), False
    yield from frames(room.undo(ANN, now))
    yield from frames(room.connection(BOB, False, now))
    yield from frames(room.resign(ANN, now + 1))
    yield from frames(room.tick(now + DEFAULT_GRACE_MS))
    assert room.state is State.FINISHED


def test_the_deal_and_salt_stay_secret_until_the_race_is_over() -> None:
    deal = "31415926535"  # long enough that its digits cannot turn up by chance
    room = open_room(picks=deal)
    seen_before: list[bytes] = []
    seen_after: list[bytes] = []
    salt = None
    for frame, over in drive_secret_race(room):
        salt = salt or room.record.salt
        (seen_after if over else seen_before).append(frame)
    assert salt is not None
    before = b"\n".join(seen_before)
    assert deal.encode() not in before
    assert salt.encode() not in before
    after = b"\n".join(seen_after)
    assert deal.encode() in after  # the search does find them
    assert salt.encode() in after


def test_commitment_is_published_at_the_countdown_and_revealed_after_the_race() -> None:
    room = open_room()
    assert room.view(None, T0).commitment is None
    room.ready(ANN, True, T0)
    change = events(room.ready(BOB, True, T0))[-1]
    assert isinstance(change, StateChanged)
    assert change.commitment is not None
    for seat in (None, 0, 1):
        assert room.view(seat, T0).commitment == change.commitment
        assert room.view(seat, T0).reveal is None
    room.tick(T0 + COUNTDOWN_MS)
    assert room.view(None, T0).commitment == change.commitment
    assert room.view(None, T0).reveal is None
    room.resign(ANN, T0 + 4000)
    outcome = room.resign(BOB, T0 + 4000)
    over = events(outcome)[-1]
    assert isinstance(over, RaceOver)
    assert over.reveal.deal == "617"
    assert verify("scorpion", over.reveal.deal, over.reveal.salt, change.commitment)
    assert not verify("scorpion", "618", over.reveal.salt, change.commitment)
    assert room.view(0, T0).reveal == over.reveal


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
    room, _ = create("ROOM", "scorpion", RoomOptions(), ANN, "Ann", T0, grace_ms=500)
    room.join(BOB, "Bob", T0)
    room.connection(BOB, False, T0)
    assert events(room.tick(T0 + 500)) == [RacerLeft(seat=1)]


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


# -- restore --------------------------------------------------------------------------------------


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
    assert room.state is State.WAITING
    room.ready("bob", True, T0 + 2)
    assert room.record.deal == "24"
    assert room.record.commitment == first
    room.tick(T0 + 2 + COUNTDOWN_MS)
    assert room.state is State.RACING
    assert room.record.next_deal is None  # used up by the race


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
