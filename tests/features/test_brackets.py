"""Bracket tournaments through the real server (server/features/brackets.py): players
register, the bracket starts by itself, each round is one run a player on the round's secret
deal, the better half goes on, and the last one left wins; runs stay secret until their
round closes, when its players are told (pushed) and its deal can be checked against the
commitment every round publishes from its opening."""

from __future__ import annotations

from functools import partial
from typing import TypeVar

import pytest

from client.lib.connection import RaceClient, ServerError
from protocol.fairness import verify
from protocol.messages import (
    AskBracket,
    AskReplay,
    Brackets,
    BracketStarted,
    BracketView,
    JoinBracket,
    Joined,
    LeaveBracket,
    ListBrackets,
    PlayBracket,
    Resign,
    RoundClosed,
    ServerMessage,
)
from server.clock import now_ms
from server.competition.bracket import Bracket
from tests.end_to_end.conftest import RunningServer, eventually
from tests.end_to_end.test_moderation import admin
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio


async def view(racer: RaceClient, code: str) -> BracketView:
    reply = await racer.request(lambda i: AskBracket(id=i, bracket=code))
    assert isinstance(reply, BracketView)
    return reply


def closed_rounds(racer: RaceClient) -> list[RoundClosed]:
    """Start keeping the ``round_closed`` pushed to ``racer``; the list they go in."""
    return pushed_to(racer, RoundClosed)


M = TypeVar("M", bound=ServerMessage)


def pushed_to(racer: RaceClient, kind: type[M]) -> list[M]:
    """Start keeping the ``kind`` messages pushed to ``racer``; the list they go in."""
    pushed: list[M] = []

    def heard(room: str, message: ServerMessage) -> None:
        if isinstance(message, kind):
            pushed.append(message)

    racer.listen(heard)
    return pushed


async def play(racer: RaceClient, code: str, commitment: str | None = None) -> str:
    """``racer`` plays their run of the open round (whose rooms publish ``commitment``, if
    given) and resigns it; the run's room."""
    joined = await racer.request(lambda i: PlayBracket(id=i, bracket=code))
    assert isinstance(joined, Joined)
    mirror = racer.rooms[joined.room]
    await eventually(lambda: mirror.view().state == "racing", what="the run racing")
    assert mirror.view().bracket == code
    assert mirror.view().options.deal is None
    if commitment is not None:
        assert mirror.view().commitment == commitment
    await racer.request(lambda i: Resign(id=i, room=joined.room))
    return joined.room


async def test_a_bracket_plays_its_rounds_down_to_a_winner(server: RunningServer) -> None:
    code = "FRIDAY"
    await server.hub.brackets.create(Bracket(code, "antares", "Friday", now_ms() + 1500, 8, 5), now_ms())
    racers = {name: await server.connect(name) for name in ("Ann", "Bob", "Cat", "Dan")}
    ids = {racer.player: name for name, racer in racers.items()}
    pushed = {name: closed_rounds(racer) for name, racer in racers.items()}
    started = {name: pushed_to(racer, BracketStarted) for name, racer in racers.items()}
    for racer in racers.values():
        await racer.request(lambda i: JoinBracket(id=i, bracket=code))
    listed = await racers["Ann"].request(lambda i: ListBrackets(id=i))
    assert isinstance(listed, Brackets)
    assert [(b.id, b.state, b.players, b.registered) for b in listed.brackets] == [(code, "registering", 4, True)]

    first = await eventually_async(partial(view, racers["Ann"], code), lambda v: v.bracket.round == 1)
    assert sorted(first.rounds[0].players) == ["Ann", "Bob", "Cat", "Dan"]
    assert first.rounds[0].you == "to-play"
    assert first.bracket.to_play
    assert first.rounds[0].start_by > first.rounds[0].opens
    # Each player was told the bracket started, with the round to play now.
    await eventually(lambda: all(started.values()), what="the start pushed to every player")
    for name, starts in started.items():
        [start] = starts
        assert start.round is not None
        assert (start.bracket.state, start.round.number, start.round.you) == ("playing", 1, "to-play"), name
    # Players by id too, by the same index as their names; the deal committed to, not shown.
    assert [ids[p] for p in first.rounds[0].player_ids or []] == first.rounds[0].players
    commitment = first.rounds[0].commitment
    assert commitment is not None
    assert first.rounds[0].reveal is None
    rooms = {name: await play(racer, code, commitment) for name, racer in list(racers.items())[:3]}
    # Dan has not played: Ann's run stays secret from him, and from her, while the round is open.
    for asker in (racers["Dan"], racers["Ann"]):
        with pytest.raises(ServerError) as secret:
            await asker.request(lambda i: AskReplay(id=i, room=rooms["Ann"], seat=0))
        assert secret.value.code == "not-allowed"
    await play(racers["Dan"], code, commitment)

    second = await eventually_async(partial(view, racers["Ann"], code), lambda v: v.bracket.round == 2)
    closed = second.rounds[0]
    assert closed.results is not None
    assert closed.reveal is not None
    assert closed.commitment == commitment
    assert verify("antares", closed.reveal.deal, closed.reveal.salt, commitment)
    # Every player of the round was told it closed: its results, and the next round if they go on.
    await eventually(lambda: all(pushed.values()), what="round 1's close pushed to its players")
    for name, news in pushed.items():
        [told] = news
        assert (told.round.number, told.round.results, told.round.reveal) == (1, closed.results, closed.reveal)
        assert told.next is not None
        assert told.next.number == 2
        going_on = name in second.rounds[1].players
        assert (told.next.you, told.bracket.to_play) == (("to-play", True) if going_on else (None, False))
    assert closed.rooms is not None
    assert set(rooms.values()) < set(closed.rooms)  # nobody forfeited: every run's room
    assert None not in closed.rooms
    assert len(second.rounds[1].players) == 2  # the better half
    for name in second.rounds[1].players:
        await play(racers[name], code)
    over = await eventually_async(partial(view, racers["Ann"], code), lambda v: v.bracket.state == "over")
    finalists = second.rounds[1].players
    await eventually(lambda: all(len(pushed[name]) == 2 for name in finalists), what="the final's close pushed")
    for name in finalists:
        last = pushed[name][1]
        assert (last.round.number, last.next, last.bracket.state) == (2, None, "over")
        assert last.bracket.winner == over.bracket.winner
    assert over.standings is not None
    assert sorted(over.standings) == ["Ann", "Bob", "Cat", "Dan"]
    assert over.bracket.winner == over.standings[0]
    assert over.bracket.winner in second.rounds[1].players
    # Ids beside the names, for a client to find its player.
    assert over.standing_ids is not None
    assert sorted(over.standing_ids) == sorted(str(player) for player in ids)
    assert over.bracket.winner_id == over.standing_ids[0]


async def test_registration_closes_and_a_bracket_without_enough_players_is_cancelled(server: RunningServer) -> None:
    out = await admin(server, "bracket", "scorpion", "--size", "4", "--round-minutes", "5", "--name", "Tiny")
    code = out.split()[1].rstrip(":")
    ann = await server.connect("Ann")
    await ann.request(lambda i: JoinBracket(id=i, bracket=code))
    await ann.request(lambda i: LeaveBracket(id=i, bracket=code))
    assert (await view(ann, code)).bracket.players == 0
    with pytest.raises(ServerError) as early:
        await ann.request(lambda i: PlayBracket(id=i, bracket=code))
    assert early.value.code == "not-allowed"

    soon = "SOON"
    told = pushed_to(ann, BracketStarted)
    await server.hub.brackets.create(Bracket(soon, "scorpion", "Soon", now_ms() + 300, 4, 5), now_ms())
    await ann.request(lambda i: JoinBracket(id=i, bracket=soon))
    cancelled = await eventually_async(partial(view, ann, soon), lambda v: v.bracket.state == "cancelled")
    await eventually(lambda: told, what="the cancellation pushed")
    assert [(news.bracket.id, news.bracket.state, news.round) for news in told] == [(soon, "cancelled", None)]
    assert cancelled.rounds == []
    with pytest.raises(ServerError) as late:
        await ann.request(lambda i: JoinBracket(id=i, bracket=soon))
    assert late.value.code == "not-allowed"
