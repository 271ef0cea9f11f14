"""RoomMirror: snapshots plus updates rebuild exactly what the room holds.

A spectator's mirror is fed every event in its full form; a racer's mirror gets what
the room channel sends a racer (the redacted form of a rival's board while the racer
races, the full form otherwise, and a fresh snapshot when the room asks to refresh
them). After every command each mirror must equal the room's own view. Every update
goes through the wire codec on the way, as it would to a client.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import msgspec

from protocol.codec import decode_server, encode
from protocol.messages import (
    BoardChanged,
    Clock,
    Patch,
    Progress,
    ProgressChanged,
    RacerReady,
    RoomView,
    Snapshot,
    Update,
)
from protocol.mirror import RoomMirror
from server.games import Move
from server.rooms.lifecycle import State
from server.rooms.step import Emission, Outcome
from server.rooms.timing import DEFAULT_COUNTDOWN_MS, DEFAULT_GRACE_MS
from tests.rooms import ANN, BOB, CAT, PLAYERS, T0, WINNABLE_ANTARES, open_room, winning_line
from tests.rooms.driving import Driven


def comparable(view: RoomView) -> RoomView:
    """``view`` without what legitimately differs between a mirror and the room: the
    clock's ``now`` (a mirror's clock is the one its last state change carried)."""
    return msgspec.structs.replace(view, clock=msgspec.structs.replace(view.clock, now=0))


def text_in(room: Driven, seat: int, move: Move) -> str:
    """``move`` written in the notation, in the position of ``seat``'s board."""
    game = room.room.game_of(seat)
    assert game is not None
    return game.move_text(move)


def wire(update: Update) -> Update:
    decoded = decode_server(encode(update))
    assert isinstance(decoded, Update)
    return decoded


class Audience:
    """A spectator mirror and one mirror per racer, fed as the room channel feeds clients."""

    def __init__(self, room: Driven, now: int) -> None:
        self.room = room
        self.now = now
        self.spectator = RoomMirror(self._snapshot(None))
        self.racers: dict[int, RoomMirror] = {}
        self.steps = 0

    def _snapshot(self, seat: int | None) -> Snapshot:
        return Snapshot(room=self.room.code, version=self.room.version, view=self.room.view(seat, self.now))

    def _form(self, emission: Emission, seat: int) -> Update:
        # The rule of RoomChannel._send, decided after the command has run.
        hide = emission.redacted is not None and seat != emission.owner and self.room.is_racing(seat)
        event = emission.redacted if hide and emission.redacted is not None else emission.full
        return Update(room=self.room.code, base=emission.version - 1, version=emission.version, events=[event])

    def run(self, now: int, command: Callable[[], Outcome]) -> Outcome:
        """Run ``command`` at ``now``, deliver its outcome, check every mirror."""
        self.now = now
        outcome = command()
        for emission in outcome.emissions:
            full = Update(
                room=self.room.code, base=emission.version - 1, version=emission.version, events=[emission.full]
            )
            assert self.spectator.apply(wire(full))
            for seat, mirror in self.racers.items():
                assert mirror.apply(wire(self._form(emission, seat)))
        for seat in outcome.refresh:
            if seat in self.racers:
                self.racers[seat].reset(self._snapshot(seat))
        for seat in self.room.racers():
            if seat not in self.racers:  # a new racer starts from a snapshot
                self.racers[seat] = RoomMirror(self._snapshot(seat))
        for seat in set(self.racers) - set(self.room.racers()):
            del self.racers[seat]
        self.check()
        self.steps += 1
        return outcome

    def check(self) -> None:
        assert self.spectator.version == self.room.version
        assert comparable(self.spectator.view()) == comparable(self.room.view(None, self.now))
        for seat, mirror in self.racers.items():
            assert mirror.version == self.room.version
            mine, theirs = mirror.view(), self.room.view(seat, self.now)
            assert [(r.seat, r.board, r.progress) for r in mine.racers] == [
                (r.seat, r.board, r.progress) for r in theirs.racers
            ]
            assert comparable(mine) == comparable(theirs)


def test_a_whole_scorpion_race_with_a_rematch() -> None:
    room = open_room(racers=3, seated=1)
    crowd = Audience(room, T0)
    now = T0
    crowd.run(now, lambda: room.join(BOB, "Bob", now))
    crowd.run(now, lambda: room.set_spectators(3))
    crowd.run(now, lambda: room.ready(BOB, True, now))
    crowd.run(now, lambda: room.start(ANN, now))
    crowd.run(now + 1, lambda: room.ready(BOB, False, now + 1))  # cancels the countdown
    crowd.run(now + 2, lambda: room.join(CAT, "Cat", now + 2))
    for player in PLAYERS[:3]:
        crowd.run(now + 3, partial(room.ready, player, True, now + 3))
    now += 3 + DEFAULT_COUNTDOWN_MS
    assert room.next_deadline() == now  # the countdown
    crowd.run(now, lambda: room.tick(now))
    assert room.state is State.RACING
    for step in range(30):
        now += 400
        if step == 12:
            crowd.run(now, partial(room.resign, CAT, now))
        if step == 20:
            crowd.run(now, partial(room.connection, BOB, False, now))
        player = PLAYERS[step % 3]
        seat = room.seat_of(player)
        assert seat is not None
        if not room.is_racing(seat):
            continue
        legal = room.legal_moves(player)
        if step % 7 == 6 or not legal:
            crowd.run(now, partial(room.undo, player, now))
        else:
            text = legal[step * 5 % len(legal)]
            crowd.run(now, partial(room.move, player, text, now))
    assert not crowd.run(now, lambda: room.resign(ANN, now)).finished  # Bob is still in
    assert crowd.run(now + DEFAULT_GRACE_MS, lambda: room.tick(now + DEFAULT_GRACE_MS)).finished  # Bob dropped
    now += DEFAULT_GRACE_MS
    crowd.run(now, lambda: room.join(BOB, "Bob", now))  # back, after the race
    crowd.run(now, lambda: room.rematch(CAT, now))
    crowd.run(now, lambda: room.start(ANN, now))
    now += DEFAULT_COUNTDOWN_MS
    crowd.run(now, lambda: room.tick(now))
    crowd.run(now + 10, lambda: room.move(BOB, room.legal_moves(BOB)[0], now + 10))
    assert crowd.steps > 40


def test_a_winning_antares_race_seen_by_everyone() -> None:
    room = open_room("antares", WINNABLE_ANTARES, racers=2, autoplay="safe")
    crowd = Audience(room, T0)
    crowd.run(T0, lambda: room.ready(ANN, True, T0))
    crowd.run(T0, lambda: room.ready(BOB, True, T0))
    started = T0 + DEFAULT_COUNTDOWN_MS
    crowd.run(started, lambda: room.tick(started))
    line = winning_line()
    for i, move in enumerate(line):
        now = started + 1000 * (i + 1)
        crowd.run(now, partial(room.move, ANN, text_in(room, 0, move), now))
        if i < 10:
            crowd.run(now, partial(room.move, BOB, text_in(room, 1, move), now))
    assert room.view(0, T0).racers[0].finished_ms is not None
    end = started + 1000 * (len(line) + 1)
    outcome = crowd.run(end, lambda: room.resign(BOB, end))
    assert outcome.finished
    assert crowd.spectator.view().results == room.view(None, end).results
    assert crowd.spectator.view().reveal is not None


def test_mirrors_learn_the_new_creator() -> None:
    room = open_room(racers=3)
    mirror = RoomMirror(Snapshot(room=room.code, version=room.version, view=room.view(None, T0)))
    for emission in room.leave(ANN, T0).emissions:
        update = Update(room=room.code, base=emission.version - 1, version=emission.version, events=[emission.full])
        assert mirror.apply(update)
    assert room.view(None, T0).creator == BOB
    assert mirror.view().creator == BOB


def snapshot_mirror() -> tuple[Driven, RoomMirror]:
    room = open_room(racers=3, seated=2)
    return room, RoomMirror(Snapshot(room=room.code, version=room.version, view=room.view(None, T0)))


def test_apply_refuses_a_gap_and_changes_nothing() -> None:
    room, mirror = snapshot_mirror()
    before = mirror.view()
    gap = Update(room=room.code, base=room.version + 1, version=room.version + 2, events=[RacerReady(0, True)])
    assert mirror.apply(gap) is False
    assert mirror.version == room.version
    assert mirror.view() == before


def test_apply_ignores_an_update_already_applied() -> None:
    room, mirror = snapshot_mirror()
    update = Update(room=room.code, base=room.version, version=room.version + 1, events=[RacerReady(0, True)])
    assert mirror.apply(update)
    after = mirror.view()
    old = Update(room=room.code, base=room.version - 1, version=room.version, events=[RacerReady(1, True)])
    assert mirror.apply(old) is True
    assert mirror.apply(update) is True
    assert mirror.view() == after
    assert mirror.version == room.version + 1


def test_reset_starts_over_from_a_snapshot() -> None:
    room, mirror = snapshot_mirror()
    room.join(CAT, "Cat", T0)
    assert mirror.apply(Update(room=room.code, base=room.version + 5, version=room.version + 6, events=[])) is False
    mirror.reset(Snapshot(room=room.code, version=room.version, view=room.view(None, T0)))
    assert mirror.version == room.version
    assert [r.player for r in mirror.view().racers] == [ANN, BOB, CAT]


def test_patches_on_a_board_not_yet_seen_start_from_empty_piles() -> None:
    room, mirror = snapshot_mirror()
    patch = [Patch(0, 0, [None, 5]), Patch(2, 0, [7])]
    progress = Progress(home=0, ordered=0, moves=0)
    update = Update(
        room=room.code, base=room.version, version=room.version + 1, events=[BoardChanged(1, patch, progress)]
    )
    assert mirror.apply(update)
    board = mirror.board(1)
    assert board is not None
    assert board[:3] == [[None, 5], [], [7]]
    assert len(board) == len(room.view(None, T0).piles)
    assert mirror.board(0) is None
    assert mirror.board(7) is None


def test_progress_changes_without_a_board() -> None:
    room, mirror = snapshot_mirror()
    progress = Progress(home=4, ordered=2, moves=9)
    update = Update(room=room.code, base=room.version, version=room.version + 1, events=[ProgressChanged(1, progress)])
    assert mirror.apply(update)
    assert mirror.view().racers[1].progress == progress
    assert mirror.board(1) is None
    assert mirror.view().clock == Clock(now=T0)
