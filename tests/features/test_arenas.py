"""Arena tournaments through the real server (server/features/arenas.py): players who join a
live arena are paired, race, score by the arena's rules and join again for the next race;
the standings show the leaders and where they race; an arena not running takes nobody."""

from __future__ import annotations

from functools import partial

import msgspec
import pytest

from client.lib.connection import ServerError
from protocol.messages import (
    Ack,
    Arenas,
    ArenaStandings,
    AskArena,
    JoinArena,
    LeaveArena,
    ListArenas,
    Rematch,
    Resign,
)
from server.clock import now_ms
from server.competition.arena import Arena
from server.features.arenas import line_of
from tests.end_to_end.conftest import PATIENCE, RunningServer, ServerFactory, eventually
from tests.end_to_end.test_moderation import admin
from tests.end_to_end.test_quick_match import GATHER, SHORT_WAIT, InLine
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio


async def open_arena(srv: RunningServer, starts_in: int = -1000, minutes: int = 10) -> Arena:
    now = now_ms()
    arena = Arena("ARENA1", "antares", "Evening arena", now + starts_in, now + starts_in + minutes * 60_000)
    await srv.hub.arenas.create(arena, now)
    return arena


async def join(player: InLine, arena: str) -> InLine:
    """``player`` joins ``arena``'s line again; the new request's place to wait for its race."""
    request = await player.client.send(lambda i: JoinArena(id=i, arena=arena))
    return InLine(player.client, request, player.heard)


async def waiting(srv: RunningServer, name: str, arena: str) -> InLine:
    client = await srv.connect(name)
    heard: list = []  # type: ignore[type-arg]
    client.listen(lambda room, message: heard.append(message))
    return await join(InLine(client, 0, heard), arena)


def in_line(player: InLine) -> bool:
    """Whether the server acknowledged ``player``'s latest ``join_arena``."""
    return any(isinstance(m, Ack) and m.id == player.request for m in player.heard)


async def paired(players: list[InLine]) -> str:
    joined = [await eventually(p.joined, timeout=GATHER + PATIENCE, what="paired") for p in players]
    assert len({j.room for j in joined}) == 1
    return joined[0].room


async def test_players_are_paired_score_by_place_and_rejoin_for_the_next_race(start_server: ServerFactory) -> None:
    async with start_server(quick_match_wait=SHORT_WAIT) as srv:
        arena = await open_arena(srv)
        ann, bob = await waiting(srv, "Ann", arena.id), await waiting(srv, "Bob", arena.id)
        room = await paired([ann, bob])
        mirror = ann.client.rooms[room]
        assert (mirror.view().arena, mirror.view().arena_name) == (arena.id, "Evening arena")  # named, for display
        assert mirror.view().options.spectator_delay == 15.0  # one deal for all: watchers are late
        await eventually(lambda: mirror.view().state == "racing", what="racing")

        async def standings(client: InLine) -> ArenaStandings:
            reply = await client.client.request(lambda i: AskArena(id=i, arena=arena.id))
            assert isinstance(reply, ArenaStandings)
            return reply

        with pytest.raises(ServerError) as twice:  # one race at a time in an arena
            await ann.client.request(lambda i: JoinArena(id=i, arena=arena.id))
        assert twice.value.code == "not-allowed"
        live = await eventually_async(partial(standings, ann), lambda s: bool(s.lines))
        assert {line.room for line in live.lines} == {room}  # follow the leaders in their race
        await bob.client.request(lambda i: Resign(id=i, room=room))
        bob_next = await join(bob, arena.id)  # done racing: free at once, before Ann is
        await eventually(
            lambda: any(isinstance(m, Ack) and m.id == bob_next.request for m in bob.heard), what="Bob in line"
        )
        await ann.client.request(lambda i: Resign(id=i, room=room))  # Ann places first on progress or seat

        def scored(reply: ArenaStandings) -> bool:
            return sum(line.races for line in reply.lines) == 2

        board = await eventually_async(partial(standings, bob), scored)
        assert [line.points for line in board.lines] == [2, 0]
        assert board.me is not None
        assert board.me.player == bob.client.player
        assert all(line.room is None for line in board.lines)
        assert board.arena.players == 2

        with pytest.raises(ServerError) as arranged:  # the arena pairs: no rematch of friends
            await ann.client.request(lambda i: Rematch(id=i, room=room))
        assert arranged.value.code == "not-allowed"
        again = [await join(ann, arena.id), bob_next]  # race on
        assert await paired(again) != room
        listed = await ann.client.request(lambda i: ListArenas(id=i))
        assert isinstance(listed, Arenas)
        assert [(a.id, a.state) for a in listed.arenas] == [(arena.id, "live")]


async def test_an_arena_not_running_takes_nobody_and_leaving_takes_you_out(server: RunningServer) -> None:
    later = await open_arena(server, starts_in=3_600_000)
    ann = await server.connect("Ann")
    with pytest.raises(ServerError) as early:
        await ann.request(lambda i: JoinArena(id=i, arena=later.id))
    assert early.value.code == "not-allowed"
    with pytest.raises(ServerError) as unknown:
        await ann.request(lambda i: AskArena(id=i, arena="NOSUCH"))
    assert unknown.value.code == "no-such-race"
    with pytest.raises(ServerError) as not_in:
        await ann.request(lambda i: LeaveArena(id=i, arena=later.id))
    assert not_in.value.code == "not-in-queue"


async def test_an_operator_schedules_arenas_that_players_then_see(server: RunningServer) -> None:
    out = await admin(server, "arena", "scorpion", "--minutes", "20", "--repeat", "3", "--name", "Hourly")
    assert out.count("arena ") == 3
    ann = await server.connect("Ann")
    listed = await ann.request(lambda i: ListArenas(id=i))
    assert isinstance(listed, Arenas)
    assert [(a.name, a.state, a.ends - a.starts) for a in listed.arenas] == [
        ("Hourly", "live", 20 * 60_000),
        ("Hourly", "upcoming", 20 * 60_000),
        ("Hourly", "upcoming", 20 * 60_000),
    ]
    assert "no UTC time" in await admin(server, "arena", "antares", "--start", "tonight")


async def test_the_line_empties_when_the_arena_ends(server: RunningServer) -> None:
    arena = await open_arena(server, starts_in=-1000, minutes=0)
    soon = msgspec.structs.replace(arena, id="SHORT", ends=now_ms() + 2500)
    await server.hub.arenas.create(soon, now_ms())
    await waiting(server, "Ann", soon.id)
    line = line_of(soon.id)
    await eventually_async(partial(server.hub.line.waiting, line), lambda entries: len(entries) == 1)
    await eventually_async(partial(server.hub.line.waiting, line), lambda entries: entries == [])
