"""Who sees what (server/rooms/views.py): no boards before the race, a racer's own board
during it, every board once done or over, never a face-down card; the deal and its salt
secret until the race ends, behind a commitment published at the countdown.
"""

from __future__ import annotations

from collections.abc import Iterator

from protocol.codec import encode
from protocol.fairness import verify
from protocol.messages import (
    RaceOver,
    RoomOptions,
    Snapshot,
    StateChanged,
    Update,
)
from server.rooms.lifecycle import State
from server.rooms.step import Outcome
from server.rooms.timing import DEFAULT_COUNTDOWN_MS, DEFAULT_GRACE_MS
from tests.rooms import (
    ANN,
    BOB,
    PLAYERS,
    T0,
    antares_race,
    boards,
    events,
    open_room,
    play,
    start_race,
    winning_line,
)
from tests.rooms.driving import Driven, create


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
    now += DEFAULT_COUNTDOWN_MS
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
    room.tick(T0 + DEFAULT_COUNTDOWN_MS)
    assert room.view(None, T0).commitment == change.commitment
    assert room.view(None, T0).reveal is None
    room.resign(ANN, T0 + 4000)
    outcome = room.resign(BOB, T0 + 4000)
    over = events(outcome)[-1]
    assert isinstance(over, RaceOver)
    assert over.reveal is not None
    assert over.reveal.deal == "617"
    assert verify("scorpion", over.reveal.deal, over.reveal.salt, change.commitment)
    assert not verify("scorpion", "618", over.reveal.salt, change.commitment)
    assert room.view(0, T0).reveal == over.reveal


def test_a_winnable_deals_room_says_whether_its_race_deal_is_certified() -> None:
    """Scorpion rooms want winnable deals: a prepared deal is certified, a drawn one is not,
    and the rematch's state follows its own deal. Antares rooms and chosen deals say nothing."""
    certified, _ = create("ROOM", "scorpion", RoomOptions(max_racers=1), ANN, "Ann", T0, next_deal="5")
    random, _ = create("ROOM", "scorpion", RoomOptions(max_racers=1), BOB, "Bob", T0)
    antares, _ = create("ROOM", "antares", RoomOptions(max_racers=1), ANN, "Ann", T0)
    chosen, _ = create("ROOM", "scorpion", RoomOptions(max_racers=1, deal="617"), ANN, "Ann", T0)
    for room, before, after in (
        (certified, None, True),
        (random, None, False),
        (antares, None, None),
        (chosen, None, None),
    ):
        assert room.view(None, T0).certified is before  # no deal drawn yet
        start_race(room)
        assert room.view(None, T0).certified is after
        assert room.view(0, T0).certified is after
    certified.resign(ANN, T0 + 10_000)
    certified.rematch(ANN, T0 + 20_000)  # no prepared deal this time
    assert certified.view(None, T0).certified is None
    start_race(certified, T0 + 30_000)
    assert certified.view(None, T0).certified is False
