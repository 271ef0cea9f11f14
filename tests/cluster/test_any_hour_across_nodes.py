"""Races at any hour across two nodes of one service, on one Redis and on a 3-primary Cluster:
a challenge's run on one node stays secret when the other node is asked, the rival plays on
the other node, the result reaches the challenger's inbox there and is pushed to her there;
async matches pair across nodes; a run on one node races as a ghost on the other; an arena
pairs both nodes' players; a bracket's rounds run for players of both nodes, secret on either
until they close, and each round's close is pushed to its players on both nodes."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial

import pytest
import pytest_asyncio

from protocol.messages import (
    AcceptChallenge,
    Ack,
    ArenaStandings,
    AskArena,
    AskBracket,
    AskInbox,
    AskReplay,
    AsyncMatch,
    BracketView,
    ChallengePlayer,
    ChallengeResult,
    ClientMessage,
    CreateRoom,
    Error,
    Inbox,
    JoinArena,
    JoinBracket,
    Joined,
    PlayBracket,
    RaceGhost,
    Ready,
    Replay,
    Resign,
    RoomOptions,
    RoundClosed,
    ServerMessage,
    Snapshot,
)
from server.app import RaceServer
from server.clock import now_ms
from server.competition.arena import Arena
from server.competition.bracket import Bracket
from tests.cluster.test_service_wide import client
from tests.cluster.test_service_wide import two_plain_nodes as two_plain_nodes
from tests.end_to_end.conftest import RawClient
from tests.end_to_end.test_daily import ask, play, racing
from tests.known_deals import ANTARES_DEAL, winning_line
from tests.polling import eventually, eventually_async

pytestmark = pytest.mark.asyncio


Greet = Callable[[RaceServer, str], Awaitable[RawClient]]


@pytest_asyncio.fixture
async def greet() -> AsyncIterator[Greet]:
    """Connect a client to a node and say hello as a name; every one is closed at the end."""
    clients: list[RawClient] = []

    async def greeted(node: RaceServer, name: str) -> RawClient:
        opened = await client(node, clients)
        await opened.hello(name)
        return opened

    yield greeted
    for opened in clients:
        await opened.close()


async def run(player: RawClient, build: Callable[[int], ClientMessage]) -> tuple[str, str]:
    """Open a one-racer run (a challenge's or a bracket round's) on ``player``'s node and
    resign it once racing: (room, the challenge's or the bracket's id)."""
    joined = await ask(player, build)
    assert isinstance(joined, Joined), joined
    snapshot = await player.wait_for(lambda m: isinstance(m, Snapshot) and m.room == joined.room)
    assert isinstance(snapshot, Snapshot)
    tag = snapshot.view.challenge or snapshot.view.bracket
    assert tag is not None
    await racing(player, joined.room)
    assert isinstance(await ask(player, lambda i: Resign(id=i, room=joined.room)), Ack)
    return joined.room, tag


async def paired(player: RawClient, request: int) -> Joined:
    """The Joined that answers ``player``'s ``join_arena`` request once their race formed."""

    def answers(message: ServerMessage) -> bool:
        return isinstance(message, Joined) and message.id == request

    joined = await player.wait_for(answers, timeout=30)
    assert isinstance(joined, Joined)
    return joined


def closed_rounds(player: RawClient) -> list[RoundClosed]:
    """The ``round_closed`` pushed to ``player`` so far (kept whatever waited since)."""
    return [m for m in player.messages if isinstance(m, RoundClosed)]


async def inbox(player: RawClient) -> Inbox:
    reply = await ask(player, lambda i: AskInbox(id=i))
    assert isinstance(reply, Inbox), reply
    return reply


async def test_a_challenge_is_secret_on_every_node_until_its_rival_plays_on_another(
    two_plain_nodes: tuple[RaceServer, RaceServer], greet: Greet
) -> None:
    a, b = two_plain_nodes
    ann, bob = await greet(a, "Ann"), await greet(b, "Bob")
    ann_room, code = await run(ann, partial(ChallengePlayer, variant="antares"))  # an open link, on A

    refused = await ask(bob, lambda i: AskReplay(id=i, room=ann_room, seat=0))  # asked of node B
    assert isinstance(refused, Error), refused
    assert refused.code == "not-allowed"

    await run(bob, partial(AcceptChallenge, challenge=code))  # Bob's run, on B
    told = await ann.wait_for(lambda m: isinstance(m, ChallengeResult))  # recorded on B, pushed on A
    assert isinstance(told, ChallengeResult)
    assert (told.challenge.id, told.challenge.state, told.challenge.side) == (code, "over", 0)

    def over(reply: Inbox) -> bool:
        return bool(reply.challenges) and reply.challenges[0].state == "over"

    [line] = (await eventually_async(partial(inbox, ann), over)).challenges  # Ann asks A
    assert (line.id, line.opponent, line.side) == (code, "Bob", 0)
    assert isinstance(await ask(bob, lambda i: AskReplay(id=i, room=ann_room, seat=0)), Replay)


async def test_an_async_match_pairs_players_of_different_nodes(
    two_plain_nodes: tuple[RaceServer, RaceServer], greet: Greet
) -> None:
    a, b = two_plain_nodes
    cat, dan = await greet(a, "Cat"), await greet(b, "Dan")
    _, waiting = await run(cat, partial(AsyncMatch, variant="scorpion"))  # on A, nobody waits

    async def matched() -> str:
        return (await run(dan, partial(AsyncMatch, variant="scorpion")))[1]

    assert await eventually_async(matched, lambda code: code == waiting)  # on B: Cat's deal


async def test_a_run_on_one_node_races_as_a_ghost_on_the_other(
    two_plain_nodes: tuple[RaceServer, RaceServer], greet: Greet
) -> None:
    a, b = two_plain_nodes
    ann, bob = await greet(a, "Ann"), await greet(b, "Bob")
    options = RoomOptions(max_racers=1, deal=str(ANTARES_DEAL))
    created = await ask(ann, lambda i: CreateRoom(id=i, variant="antares", options=options))  # on A
    assert isinstance(created, Joined), created
    await ask(ann, lambda i: Ready(id=i, room=created.room))
    await racing(ann, created.room)
    await play(ann, created.room, winning_line())

    async def ghost() -> ServerMessage:  # asked of node B, by the room link, then by the deal
        return await ask(bob, lambda i: RaceGhost(id=i, room=created.room))

    assert isinstance(await eventually_async(ghost, lambda reply: isinstance(reply, Joined)), Joined)

    async def kept() -> ServerMessage:
        return await ask(bob, lambda i: RaceGhost(id=i, variant="antares", deal=str(ANTARES_DEAL), rank=1))

    assert isinstance(await eventually_async(kept, lambda reply: isinstance(reply, Joined)), Joined)


async def test_an_arena_pairs_players_of_different_nodes_and_both_nodes_show_the_standings(
    two_plain_nodes: tuple[RaceServer, RaceServer], greet: Greet
) -> None:
    a, b = two_plain_nodes
    now = now_ms()
    arena = Arena("ARENA2", "scorpion", "Across", now - 1000, now + 600_000)
    assert a.ctx is not None
    await a.ctx.arenas.create(arena, now)
    ann, bob = await greet(a, "Ann"), await greet(b, "Bob")
    requests = []
    for player in (ann, bob):
        request = await player.send(lambda i: JoinArena(id=i, arena=arena.id))
        assert isinstance(await player.reply(request), Ack)
        requests.append(request)
    joined = [await paired(player, request) for player, request in zip((ann, bob), requests, strict=True)]
    assert len({j.room for j in joined}) == 1  # one race for both nodes' players

    async def standings(asker: RawClient) -> ServerMessage:
        return await ask(asker, lambda i: AskArena(id=i, arena=arena.id))

    for asker in (ann, bob):
        board = await eventually_async(
            partial(standings, asker), lambda s: isinstance(s, ArenaStandings) and len(s.lines) == 2
        )
        assert isinstance(board, ArenaStandings)


async def test_a_bracket_runs_its_rounds_for_players_of_both_nodes(
    two_plain_nodes: tuple[RaceServer, RaceServer], greet: Greet
) -> None:
    a, b = two_plain_nodes
    code = "ACROSS"
    assert a.ctx is not None
    await a.ctx.brackets.create(Bracket(code, "scorpion", "Across", now_ms() + 1500, 4, 5), now_ms())
    players = []
    for n, node in enumerate((a, b, a, b)):
        player = await greet(node, f"P{n}")
        assert isinstance(await ask(player, lambda i: JoinBracket(id=i, bracket=code)), Ack)
        players.append(player)

    async def bracket(asker: RawClient) -> ServerMessage:
        return await ask(asker, lambda i: AskBracket(id=i, bracket=code))

    def round_open(number: int) -> Callable[[ServerMessage], bool]:
        return lambda reply: isinstance(reply, BracketView) and reply.bracket.round == number

    await eventually_async(partial(bracket, players[1]), round_open(1))
    rooms = [(await run(player, partial(PlayBracket, bracket=code)))[0] for player in players[:3]]
    secret = await ask(players[1], lambda i: AskReplay(id=i, room=rooms[0], seat=0))  # A's run, asked of B
    assert isinstance(secret, Error), secret
    assert secret.code == "not-allowed"
    await run(players[3], partial(PlayBracket, bracket=code))
    second = await eventually_async(partial(bracket, players[0]), round_open(2))
    assert isinstance(second, BracketView)
    assert second.rounds[0].results is not None
    for player in players:  # closed by the matcher's node, told on each player's own
        [told] = await eventually(partial(closed_rounds, player), what="round 1's close pushed")
        assert told.round.results == second.rounds[0].results
    assert isinstance(await ask(players[1], lambda i: AskReplay(id=i, room=rooms[0], seat=0)), Replay)
