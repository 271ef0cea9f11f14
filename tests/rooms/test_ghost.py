"""Ghost races (server/rooms/ghost.py and the room that plays one): a recorded run replayed
on its own timing beside a racer, shown as progress only until the racer is done, finished
at once when the racer is, and rebuilt from the logs like any race."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from protocol.messages import BoardChanged, ProgressChanged, RaceOver, RacerReady, RoomOptions
from server.games import Antares, Autoplay, Options
from server.rooms.entries import entry_text
from server.rooms.ghost import GhostRun, due, next_due, run_of
from server.rooms.lifecycle import State
from server.rooms.room import Room
from tests.rooms import ANN, T0, WINNABLE_ANTARES, refused, start_race, winning_line
from tests.rooms.driving import Driven, create, log_texts

#: The ghost plays a move every 500 ms: the winning line, then its win.
GAP = 500


def winning_run(gap: int = GAP, name: str = "Bob") -> GhostRun:
    game = Antares.new(WINNABLE_ANTARES, Options(autoplay=Autoplay.SAFE))
    texts = []
    for move in winning_line():
        texts.append(game.move_text(move))
        game.push(move)
    at = [gap * (i + 1) for i in range(len(texts))]
    return GhostRun(name=name, entries=texts, at=at, ends=at[-1], finished_ms=at[-1], source="OLD/1/0")


def ghost_room(run: GhostRun | None = None) -> Driven:
    """A ghost race on the winnable Antares deal, waiting for its racer."""
    options = RoomOptions(max_racers=1, deal=WINNABLE_ANTARES, autoplay="safe")
    return create("GHOST", "antares", options, ANN, "Ann", T0, ghost=run or winning_run())[0]


def started_ghost_room(run: GhostRun | None = None) -> tuple[Driven, int]:
    """A ghost race on the winnable Antares deal, started; the room and the start time."""
    room = ghost_room(run)
    return room, start_race(room)


def test_the_ghost_sits_ready_and_the_race_starts_when_its_racer_is_ready() -> None:
    room = ghost_room()
    view = room.view(0, T0)
    assert [(r.seat, r.name, r.ghost, r.ready) for r in view.racers] == [
        (0, "Ann", False, False),
        (1, "Bob", True, True),
    ]
    assert room.racers() == {0: ANN}  # the ghost is nobody's seat
    room.ready(ANN, True, T0)
    assert room.state is State.COUNTDOWN


def test_the_ghost_plays_each_entry_at_its_time_and_the_racer_sees_only_its_progress() -> None:
    room, started = started_ghost_room()
    assert room.next_deadline() == started + GAP
    assert room.tick(started + GAP - 1).emissions == []
    outcome = room.tick(started + 2 * GAP)  # two entries are due
    assert [seat for seat, _ in log_texts(outcome)] == [1, 1]
    [first, second] = outcome.emissions
    assert isinstance(first.full, BoardChanged)
    assert isinstance(first.redacted, ProgressChanged)
    assert first.owner == 1  # the racer, still racing, gets the redacted form
    assert second.full.progress.moves == 2  # type: ignore[union-attr]
    assert room.view(0, started).racers[1].board is None
    assert room.view(None, started).racers[1].board is not None  # spectators see every board
    assert room.next_deadline() == started + 3 * GAP


def test_the_ghost_finishes_in_its_recorded_time_and_the_race_waits_for_the_racer() -> None:
    run = winning_run()
    room, started = started_ghost_room(run)
    outcome = room.tick(started + run.ends + 5_000)  # late: a slow server
    ghost = room.view(None, started).racers[1]
    assert ghost.finished_ms == run.finished_ms
    assert not any(isinstance(e.full, RaceOver) for e in outcome.emissions)  # the racer still races
    over = room.resign(ANN, started + run.ends + 6_000)
    assert any(isinstance(e.full, RaceOver) for e in over.emissions)
    [first, second] = room.results()
    assert (first.seat, first.ghost, first.time_ms) == (1, True, run.finished_ms)
    assert (second.seat, second.finished) == (0, False)


def test_when_the_racer_is_done_the_ghost_plays_the_rest_at_once_with_its_times() -> None:
    run = winning_run()
    room, started = started_ghost_room(run)
    room.tick(started + GAP)
    game = room.game_of(0)
    assert game is not None
    before = len(room.record.seats)
    for move in winning_line():  # the racer wins faster than the ghost
        room.move(ANN, game.move_text(move), started + 2 * GAP)
    assert room.state is State.FINISHED
    assert len(room.record.seats) == before
    first, second = room.results()
    assert (first.seat, first.time_ms) == (0, 2 * GAP)
    assert (second.seat, second.ghost, second.time_ms) == (1, True, run.finished_ms)


def test_a_run_that_stops_unfinished_stops_the_ghost_at_its_end() -> None:
    full = winning_run()
    run = GhostRun(name="Bob", entries=full.entries[:3], at=full.at[:3], ends=10_000)
    room, started = started_ghost_room(run)
    room.tick(started + 3 * GAP)
    assert room.next_deadline() == started + 10_000
    room.tick(started + 10_000)
    assert room.view(None, started).racers[1].resigned == "stopped"
    assert room.state is State.RACING


def test_a_ghost_race_restores_from_its_logs_where_it_was() -> None:
    room, started = started_ghost_room()
    logs: dict[int, list[str]] = {}
    for outcome in (room.tick(started + GAP), room.tick(started + 3 * GAP)):
        for seat, text in log_texts(outcome):
            logs.setdefault(seat, []).append(text)
    restored = Driven.restore(room.record, logs, started + 3 * GAP + 1)
    assert restored.view(None, started).racers[1].progress.moves == 3
    assert restored.next_deadline() == started + 4 * GAP  # the racer's grace is later
    assert restored.view(None, started).racers[1].connected  # a ghost never drops


def test_the_ghost_leaves_with_its_racer_and_races_again_after_a_rematch() -> None:
    room, started = started_ghost_room()
    room.resign(ANN, started + 1)
    assert room.state is State.FINISHED
    rematched = room.rematch(ANN, started + 2)
    assert RacerReady(seat=1, ready=True) in [e.full for e in rematched.emissions]  # for every copy
    racers = room.view(0, started + 2).racers
    assert [(r.seat, r.ready, r.progress.moves) for r in racers] == [(0, False, 0), (1, True, 0)]
    room.leave(ANN, started + 3)
    assert room.is_empty()


def test_a_ghost_needs_the_deal_of_its_run_and_a_run_that_replays() -> None:
    with refused("not-allowed"):
        Room.create("G", "antares", RoomOptions(max_racers=1), ANN, "Ann", T0, ghost=winning_run())
    broken = GhostRun(name="Bob", entries=["undo"], at=[1], ends=1)
    with refused("invalid-options"):
        Room.create("G", "antares", RoomOptions(max_racers=1, deal=WINNABLE_ANTARES), ANN, "Ann", T0, ghost=broken)


def test_a_run_takes_its_times_from_the_race_start() -> None:
    run = run_of("Bob", ["a", "b", "c"], [T0 + 5, None, T0 + 9], T0, T0 + 20, None, "X/1/0")
    assert (run.at, run.ends, run.finished_ms) == ([5, 5, 9], 20, None)
    won = run_of("Bob", ["a"], [T0 + 5], T0, T0 + 20, 5, "X/1/0")
    assert won.ends == 5


@given(st.lists(st.integers(0, 10_000), max_size=30).map(sorted), st.integers(0, 30), st.integers(0, 12_000))
def test_due_entries_are_those_whose_time_has_come_in_order(at: list[int], played: int, elapsed: int) -> None:
    played = min(played, len(at))
    run = GhostRun(name="B", entries=[f"m{i}" for i in range(len(at))], at=at, ends=10_000)
    entries = due(run, played, elapsed)
    assert [entry_text(e) for e in entries] == [f"m{i}" for i in range(played, len(at)) if at[i] <= elapsed]
    assert next_due(run, played) == (at[played] if played < len(at) else 10_000)
