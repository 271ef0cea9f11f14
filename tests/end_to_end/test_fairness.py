"""Fairness a player can check: the deal was fixed before the start, and the race log
replays through the engine to the boards everyone saw."""

from __future__ import annotations

import random
from functools import partial

import pytest

from protocol.fairness import verify
from protocol.messages import (
    Ack,
    AskLegalMoves,
    AskRaceLog,
    LegalMoves,
    PlayMove,
    RaceLog,
    Resign,
    ServerMessage,
    StateChanged,
    Undo,
    Update,
)
from server.games import Autoplay, Options, variant_class
from tests.end_to_end.conftest import RunningServer, board_lists, eventually, open_room, ready_and_race

pytestmark = pytest.mark.asyncio


def final_line(entries: list[str]) -> list[str]:
    """The line of play a move log ends with: undone moves taken out, resignations (which
    move no card) left out. A log that is already the final line comes back unchanged."""
    line: list[str] = []
    for entry in entries:
        if entry == "undo":
            line.pop()
        elif not entry.startswith("resign"):
            line.append(entry)
    return line


async def test_the_race_log_matches_the_commitment_and_replays_to_the_final_boards(server: RunningServer) -> None:
    race = await open_room(server, "scorpion")
    published: list[str | None] = []

    def note(room: str, message: ServerMessage) -> None:
        if isinstance(message, Update):
            published.extend(e.commitment for e in message.events if isinstance(e, StateChanged))

    race.racers[0].listen(note)
    await ready_and_race(race)
    rng = random.Random(99)
    lines: list[list[str]] = [[], []]
    for turn in range(12):
        for seat, racer in enumerate(race.racers):
            if turn % 5 == 4 and lines[seat]:
                await racer.request(lambda i: Undo(id=i, room=race.code))
                lines[seat].pop()
                continue
            legal = await racer.request(lambda i: AskLegalMoves(id=i, room=race.code))
            assert isinstance(legal, LegalMoves)
            if legal.moves:
                choice = rng.choice(legal.moves)
                ack = await racer.request(partial(PlayMove, room=race.code, move=choice))
                assert isinstance(ack, Ack)
                assert ack.move is not None
                lines[seat].append(ack.move)
    for racer in race.racers:
        await racer.request(lambda i: Resign(id=i, room=race.code))
    await eventually(lambda: race.mirror(0).view().results, what="results")
    view = race.mirror(0).view()

    log = await race.racers[1].request(lambda i: AskRaceLog(id=i, room=race.code))
    assert isinstance(log, RaceLog)
    # The deal was fixed at the countdown: the same commitment then, at the start, and in the log.
    assert published == [log.commitment, log.commitment, log.commitment]  # countdown, racing, finished
    assert view.commitment == log.commitment
    assert verify("scorpion", log.deal, log.salt, log.commitment)
    assert view.reveal is not None
    assert (view.reveal.deal, view.reveal.salt) == (log.deal, log.salt)
    assert not verify("scorpion", str(int(log.deal) + 1), log.salt, log.commitment)

    assert view.results is not None
    homes = {result.seat: result.home for result in view.results}
    game_class = variant_class(log.variant)
    options = Options(autoplay=Autoplay(log.options.autoplay))
    assert [(r.seat, r.name) for r in log.racers] == [(0, "Ann"), (1, "Bob")]
    for entry in log.racers:
        line = final_line(entry.moves)
        assert line == lines[entry.seat]
        replayed = game_class.replay(log.deal, options, line)
        assert board_lists(replayed.public_piles()) == view.racers[entry.seat].board
        assert replayed.progress().home == homes[entry.seat]
