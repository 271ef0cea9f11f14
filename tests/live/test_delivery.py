"""The delivery plan of a step (server/live/delivery.py), pure: given a room just after a
step was applied, which frame goes to whom. No sockets: the plan is read off the value."""

from __future__ import annotations

from protocol.messages import (
    Ack,
    BoardChanged,
    ProgressChanged,
    RacerReady,
    RacerResigned,
    RoomEvent,
    Snapshot,
    Update,
)
from server.connections.limits import Offences, TokenBucket
from server.connections.link import ClientLink
from server.live.delivery import (
    Delivery,
    Frame,
    ToLink,
    ToRacers,
    ToSeats,
    ToSpectators,
    delivery_of,
    resync_delivery,
)
from server.rooms import commands
from tests.rooms import ANN, BOB, T0, boards, open_room, start_race
from tests.rooms.driving import Driven


def applied(room: Driven, command: commands.Command, now: int, link: ClientLink | None = None) -> Delivery:
    """Decide and apply ``command`` as the runner does, and plan its delivery (acking ``link``'s request 7)."""
    step = room.decide(command, now)
    room.room.apply(step)
    return delivery_of(room.room, step, now, None if link is None else (link, 7))


def event_of(frame: Frame) -> RoomEvent:
    assert isinstance(frame.message, Update)
    [event] = frame.message.events
    return event


def a_move(room: Driven, seat: int) -> str:
    game = room.room.game_of(seat)
    assert game is not None
    return game.move_text(game.legal_moves()[0])


def test_a_move_shows_the_board_to_its_seat_and_progress_to_the_other_racers() -> None:
    room = open_room(spectator_delay=2.5)
    started = start_race(room)
    link = ClientLink(None, TokenBucket(50, 100), Offences(200, 10), ANN, "Ann")
    delivery = applied(room, commands.Move(ANN, a_move(room, 0)), started + 1000, link)

    ack, full, redacted = delivery.frames
    assert ack.to == (ToLink(link),)  # the ack first, to the requesting connection alone
    assert isinstance(ack.message, Ack)
    assert (ack.message.id, ack.message.version) == (7, room.version)
    assert isinstance(event_of(full), BoardChanged)
    assert full.to == (ToRacers(but=frozenset({1})), ToSpectators(2.5))  # Bob races: not his
    assert isinstance(event_of(redacted), ProgressChanged)
    assert redacted.to == (ToSeats(frozenset({1})),)
    assert delivery.members is None  # a move changes no seat's holder: connections kept


def test_a_racer_leaving_a_finished_race_is_let_go_by_its_connections() -> None:
    room = open_room()
    started = start_race(room)
    applied(room, commands.Resign(ANN), started + 1000)
    applied(room, commands.Resign(BOB), started + 2000)
    delivery = applied(room, commands.Leave(ANN), started + 3000)
    assert delivery.members == {1: BOB}  # Ann's seat stays for the results, not her connections


def test_an_event_without_a_hidden_form_goes_to_everyone() -> None:
    room = open_room()  # private: spectators without a delay
    delivery = applied(room, commands.SetReady(BOB, True), T0)

    [frame] = delivery.frames
    assert isinstance(event_of(frame), RacerReady)
    assert frame.to == (ToRacers(), ToSpectators(0.0))


def test_a_resignation_refreshes_the_resigned_seat_with_its_own_view() -> None:
    room = open_room(racers=3)
    started = start_race(room)
    delivery = applied(room, commands.Resign(ANN), started + 1000)

    resigned, snapshot = delivery.frames
    assert isinstance(event_of(resigned), RacerResigned)
    assert resigned.to == (ToRacers(), ToSpectators(0.0))
    assert snapshot.to == (ToSeats(frozenset({0})),)
    assert isinstance(snapshot.message, Snapshot)
    seen = boards(snapshot.message.view)
    assert seen[0] is not None
    assert seen[1] is not None  # done racing: the others' boards show


def test_a_resync_snapshots_each_followed_seat_and_the_spectators_after_the_delay() -> None:
    room = open_room(spectator_delay=4.0)
    started = start_race(room)
    delivery = resync_delivery(room.room, {1}, started + 5_000)

    racer, spectators = delivery.frames
    assert racer.to == (ToSeats(frozenset({1})),)
    assert isinstance(racer.message, Snapshot)
    seen = boards(racer.message.view)
    assert seen[1] is not None
    assert seen[0] is None  # still racing: only their own board
    assert spectators.to == (ToSpectators(4.0),)
    # Both on the room's clock, as told: five seconds into the race.
    for frame in delivery.frames:
        assert isinstance(frame.message, Snapshot)
        assert frame.message.view.clock.now == started + 5_000
    assert delivery.members == {0: ANN, 1: BOB}  # the seats' holders as storage has them
