"""Spectators: a mirror that follows both boards exactly, late arrivals, the spectator delay."""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial

import pytest

from client.lib.connection import RaceClient
from protocol.messages import (
    Ack,
    AskSnapshot,
    BoardChanged,
    CreateRoom,
    Joined,
    JoinRoom,
    PlayMove,
    Ready,
    Resign,
    RoomOptions,
    RoomView,
    ServerMessage,
    Snapshot,
    Spectate,
    Undo,
    Update,
)
from server.games import Game
from tests.end_to_end.conftest import (
    RunningServer,
    ServerFactory,
    board_lists,
    eventually,
    open_room,
    ready_and_race,
    without_clock,
)
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line

pytestmark = pytest.mark.asyncio


@dataclass(frozen=True)
class Expected:
    """A racer's board and progress as the engine replica has it."""

    board: list[list[int | None]]
    home: int
    ordered: int


def expected_of(game: Game) -> Expected:
    progress = game.progress()
    return Expected(board_lists(game.public_piles()), progress.home, progress.ordered)


async def test_a_spectator_follows_both_boards_and_a_late_spectator_sees_the_same(start_server: ServerFactory) -> None:
    line = winning_line()
    async with start_server(deal=str(ANTARES_DEAL)) as srv:
        race = await open_room(srv, "antares")
        bob = race.racers[1]
        sam = await srv.connect("Sam")
        joined = await sam.request(lambda i: Spectate(id=i, room=race.code))
        assert isinstance(joined, Joined)
        assert joined.role == "spectator"
        seen: dict[int, RoomView] = {}  # Sam's view at each version, as Sam held it
        changes: list[tuple[int, RoomView]] = []  # after each board change: its seat, Sam's view

        def record(room: str, message: ServerMessage) -> None:
            if room == race.code and isinstance(message, Update | Snapshot):
                mirror = sam.rooms[room]
                seen[mirror.version] = mirror.view()
            if room == race.code and isinstance(message, Update):
                changes.extend((e.seat, seen[message.version]) for e in message.events if isinstance(e, BoardChanged))

        sam.listen(record)
        await ready_and_race(race)

        replicas = {0: new_antares(), 1: new_antares()}
        # Each racer's board after the deal and after each of their moves and undos.
        history = {seat: [expected_of(replicas[seat])] for seat in (0, 1)}

        async def play(seat: int, text: str | None) -> None:
            """Seat plays ``text``, or undoes its last move when it is None."""
            racer, replica = race.racers[seat], replicas[seat]
            if text is None:
                ack = await racer.request(lambda i: Undo(id=i, room=race.code))
                replica.undo()
            else:
                ack = await racer.request(lambda i: PlayMove(id=i, room=race.code, move=text))
                assert isinstance(ack, Ack)
                assert ack.move is not None
                replica.apply(replica.parse_move(ack.move))
            history[seat].append(expected_of(replica))

        for k in range(20):
            await play(0, line[k])
            if k < 12:
                await play(1, line[k])
        for text in (None, None, line[10], line[11], line[12]):
            await play(1, text)

        # A late spectator's snapshot is what the first spectator's mirror held at that version.
        lea = await srv.connect("Lea")
        snapshots: list[Snapshot] = []
        lea.listen(lambda room, message: snapshots.append(message) if isinstance(message, Snapshot) else None)
        await lea.request(lambda i: Spectate(id=i, room=race.code))
        await eventually(lambda: snapshots, what="the late spectator's snapshot")
        late = snapshots[0]
        await eventually(lambda: sam.rooms[race.code].version >= late.version, what="Sam at the same version")
        assert without_clock(late.view) == without_clock(seen[late.version])
        assert all(racer.board is not None for racer in late.view.racers)

        for text in line[20:]:
            await play(0, text)
        await bob.request(lambda i: Resign(id=i, room=race.code))
        await eventually(lambda: sam.rooms[race.code].view().results, what="Sam seeing the results")
        await eventually(lambda: lea.rooms[race.code].view().results, what="Lea seeing the results")

        # After every board change, both boards Sam holds are the engines' public boards: the
        # one that changed after its racer's next action, the other as it last was.
        done = {0: -1, 1: -1}
        for seat, view in changes:
            done[seat] += 1
            for racer in view.racers:
                if racer.board is None:  # the deal reaches seat 1 just after seat 0
                    assert (racer.seat, done[racer.seat]) == (1, -1)
                    continue
                expected = history[racer.seat][done[racer.seat]]
                assert racer.board == expected.board, (seat, done)
                assert (racer.progress.home, racer.progress.ordered) == (expected.home, expected.ordered)
        assert {seat: count + 1 for seat, count in done.items()} == {seat: len(history[seat]) for seat in (0, 1)}
        assert sorted(seen) == list(range(min(seen), max(seen) + 1))  # no version skipped

        # The mirrors end where the server is: a fresh snapshot, and the room's own public view.
        # (Once the count with Lea is in: it goes out up to a second after she came, as a step.)
        await eventually(lambda: sam.rooms[race.code].view().spectators == 2, what="Lea counted")
        mirror = sam.rooms[race.code]
        held, version = mirror.view(), mirror.version
        fresh = await sam.request(lambda i: AskSnapshot(id=i, room=race.code))
        assert isinstance(fresh, Snapshot)
        assert fresh.version == version
        assert without_clock(fresh.view) == without_clock(held)
        room = srv.hub.rooms[race.code].room
        assert room.version == version
        assert without_clock(room.view(None, 0)) == without_clock(held)
        assert without_clock(lea.rooms[race.code].view()) == without_clock(held)
        assert held.racers[0].board == history[0][-1].board
        assert held.racers[1].board == history[1][-1].board


async def _timed(srv: RunningServer, name: str, times: dict[int, float]) -> RaceClient:
    """A client that notes when each room version reaches it in an update."""
    client = await srv.connect(name)

    def note(room: str, message: ServerMessage) -> None:
        if isinstance(message, Update):
            times.setdefault(message.version, time.monotonic())

    client.listen(note)
    return client


async def test_spectators_of_a_public_room_see_updates_after_its_delay(server: RunningServer) -> None:
    ann_times: dict[int, float] = {}
    sam_times: dict[int, float] = {}
    ann = await _timed(server, "Ann", ann_times)
    options = RoomOptions(public=True, spectator_delay=0.5, max_racers=3)
    created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion", options=options))
    assert isinstance(created, Joined)
    code = created.room
    sam = await _timed(server, "Sam", sam_times)
    bob = await server.connect("Bob")
    await bob.request(lambda i: JoinRoom(id=i, room=code))
    await sam.request(lambda i: Spectate(id=i, room=code))
    # Joining within the delay, Sam sees the room as it was: Bob not in it yet.
    arrived = await eventually(lambda: sam.rooms.get(code), what="Sam's snapshot")
    assert [racer.name for racer in arrived.view().racers] == ["Ann"]
    for ready in (True, False, True):
        await bob.request(partial(Ready, room=code, ready=ready))
        await eventually(lambda: ann.rooms[code].version in ann_times)
    final = ann.rooms[code].version
    await eventually(lambda: sam.rooms[code].version == final, timeout=3.0, what="Sam catching up")

    lags = [sam_times[version] - ann_times[version] for version in sam_times if version in ann_times]
    assert len(lags) >= 5  # Bob joining, Sam arriving, three ready changes
    assert all(0.45 <= lag <= 0.9 for lag in lags), lags
    assert [racer.name for racer in sam.rooms[code].view().racers] == ["Ann", "Bob"]
    assert sam.rooms[code].view().racers[1].ready
    assert sam.rooms[code].view().spectators == 1
