"""No frame gives away what a player may not know: face-down and stock cards, the deal and
salt before the race ends, a rival's cards during the race.

Every frame that every client (two racers and a spectator) receives during a whole Scorpion
race is kept and checked afterwards against engine replicas of both boards, which are
checked in turn against the server's own engines.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

import pytest

from protocol.messages import (
    Ack,
    AskHint,
    AskLegalMoves,
    BoardChanged,
    CreateRoom,
    Hints,
    Joined,
    JoinRoom,
    LegalMoves,
    PlayMove,
    RaceOver,
    Ready,
    Resign,
    ServerMessage,
    Snapshot,
    Spectate,
    StateChanged,
    Update,
)
from protocol.mirror import RoomMirror
from server.games import FullView, Game, Scorpion
from tests.end_to_end.conftest import RawClient, ServerFactory, board_lists

pytestmark = pytest.mark.asyncio

#: A deal number long and odd enough that its digits appear in no frame by chance.
DEAL = "73918264501837265"
#: Moves each racer plays at most before resigning (random play rarely wins Scorpion).
MOVES = 40


@dataclass(frozen=True)
class Step:
    """A racer's board after the deal or one of their moves: what the public form must be,
    and the whole position behind it."""

    public: list[list[int | None]]
    full: FullView


def step_of(game: Game) -> Step:
    return Step(board_lists(game.public_piles()), game.full_view())


def assert_nothing_hidden_shown(board: list[list[int | None]], step: Step) -> None:
    """Every face-down position (stock included) is nil; every face-up card is the true card."""
    assert len(board) == len(step.full.piles)
    for pile, cards, hidden in zip(board, step.full.piles, step.full.hidden, strict=True):
        assert len(pile) == len(cards)
        assert all(card is None for card in pile[:hidden])
        assert pile[hidden:] == list(cards[hidden:])


def events(message: ServerMessage | None) -> list[object]:
    return list(message.events) if isinstance(message, Update) else []


def is_state(state: str) -> Callable[[ServerMessage], bool]:
    return lambda m: any(isinstance(e, StateChanged) and e.state == state for e in events(m))


async def play_race(racers: list[RawClient], code: str, games: list[Game], rng: random.Random) -> None:
    """Both racers play random legal moves (a stock deal among them) until one wins or is
    stuck or has played :data:`MOVES`; then everyone still racing resigns."""
    racing = [0, 1]
    for turn in range(MOVES):
        for seat in list(racing):
            client, game = racers[seat], games[seat]
            legal = await client.request(lambda i: AskLegalMoves(id=i, room=code))
            assert isinstance(legal, LegalMoves)
            for text in legal.moves:
                game.parse_move(text)  # names only face-up cards: reads in the racer's position
            if turn % 10 == 3:
                hints = await client.request(lambda i: AskHint(id=i, room=code))
                assert isinstance(hints, Hints)
                for item in hints.hints:
                    game.parse_move(item.move)
            if not legal.moves:
                racing.remove(seat)
                continue
            choice = "deal" if "deal" in legal.moves and turn == 4 + seat else rng.choice(legal.moves)
            ack = await client.request(partial(PlayMove, room=code, move=choice))
            assert isinstance(ack, Ack)
            assert ack.move is not None
            game.apply(game.parse_move(ack.move))
            if game.is_won():
                return
        if len(racing) < 2:
            break
    for seat in racing:
        await racers[seat].request(lambda i: Resign(id=i, room=code))


async def test_no_frame_shows_hidden_cards_the_deal_or_a_rivals_board(start_server: ServerFactory) -> None:
    async with start_server(deal=DEAL) as srv:
        ann, bob, sam = await srv.raw("Ann"), await srv.raw("Bob"), await srv.raw("Sam")
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
        assert isinstance(created, Joined)
        code = created.room
        await bob.request(lambda i: JoinRoom(id=i, room=code))
        await sam.request(lambda i: Spectate(id=i, room=code))
        for racer in (ann, bob):
            await racer.request(lambda i: Ready(id=i, room=code))
        for racer in (ann, bob):
            await racer.wait_for(is_state("racing"))

        games = [Scorpion.new(DEAL), Scorpion.new(DEAL)]
        history = [[step_of(game)] for game in games]
        replicas = [game.copy() for game in games]
        await play_race([ann, bob], code, replicas, random.Random(4))
        for client in (ann, bob, sam):
            await client.wait_for(lambda m: any(isinstance(e, RaceOver) for e in events(m)))
        await asyncio.sleep(0.2)  # the snapshots that follow the end
        room = srv.hub.rooms[code].room
        for seat, replica in enumerate(replicas):
            game = room.game_of(seat)
            assert game is not None
            assert replica.full_view() == game.full_view()  # the replicas are the server's boards
            for move in replica.moves:
                games[seat].push(move)
                history[seat].append(step_of(games[seat]))
    assert any(move.is_deal for replica in replicas for move in replica.moves)

    # The versions at which each board changed, from the spectator, who sees every change.
    changed: dict[int, list[int]] = {0: [], 1: []}
    for message in sam.messages:
        for event in events(message):
            if isinstance(event, BoardChanged):
                assert isinstance(message, Update)
                changed[event.seat].append(message.version)
    assert [len(changed[seat]) for seat in (0, 1)] == [len(history[seat]) for seat in (0, 1)]

    def step_at(seat: int, version: int) -> Step:
        return history[seat][sum(1 for v in changed[seat] if v <= version) - 1]

    for client, me in ((ann, 0), (bob, 1), (sam, None)):
        assert all(isinstance(frame, bytes) for frame in client.frames)
        end = next(k for k, m in enumerate(client.messages) if any(isinstance(e, RaceOver) for e in events(m)))
        over = next(e for e in events(client.messages[end]) if isinstance(e, RaceOver))
        assert over.reveal is not None
        assert over.reveal.deal == DEAL
        secrets = (DEAL.encode(), over.reveal.salt.encode())
        assert all(secret in client.frames[end] for secret in secrets)  # the search would find them
        for frame in client.frames[:end]:
            assert isinstance(frame, bytes)
            assert not any(secret in frame for secret in secrets)

        mirror: RoomMirror | None = None
        for message in client.messages:
            if mirror is not None and me is not None:
                view = mirror.view()
                mine = view.racers[me]
                if view.state == "racing" and mine.resigned is None and mine.finished_ms is None:
                    # Still racing: nothing of the rival's board may arrive.
                    rival = 1 - me
                    assert not any(isinstance(e, BoardChanged) and e.seat == rival for e in events(message))
                    if isinstance(message, Snapshot) and message.room == code:
                        assert message.view.racers[rival].board is None
            if isinstance(message, Snapshot) and message.room == code:
                mirror = RoomMirror(message)
                for seated in message.view.racers:
                    if seated.board is not None:
                        assert_nothing_hidden_shown(seated.board, step_at(seated.seat, message.version))
            elif isinstance(message, Update) and mirror is not None:
                assert mirror.apply(message)
                for event in message.events:
                    if isinstance(event, BoardChanged):
                        board = mirror.board(event.seat)
                        assert board is not None
                        assert_nothing_hidden_shown(board, step_at(event.seat, message.version))
        assert mirror is not None
        assert mirror.view().state == "finished"
