"""Async challenges through the real server (server/features/challenges.py): the challenger
plays now, the rival later on the same secret deal; nothing of either run shows by any request
before both ended; the results and rating changes reach both inboxes. And async matches."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import msgspec
import pytest

from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    AcceptChallenge,
    AskInbox,
    AskRaceLog,
    AskReplay,
    AsyncMatch,
    ChallengeLine,
    ChallengePlayer,
    ClientMessage,
    Error,
    Inbox,
    Joined,
    RaceGhost,
    Rematch,
    Replay,
    Resign,
    Snapshot,
    Spectate,
    Update,
)
from tests.end_to_end.conftest import RunningServer, eventually
from tests.polling import eventually_async

pytestmark = pytest.mark.asyncio


async def play_run(racer: RaceClient, build: Callable[[int], ClientMessage]) -> tuple[str, str]:
    """Open a challenge run with ``build``, wait for its race, resign it: (room, challenge id)."""
    joined = await racer.request(build)
    assert isinstance(joined, Joined)
    mirror = racer.rooms[joined.room]
    await eventually(lambda: mirror.view().state == "racing", what="the run racing")
    challenge = mirror.view().challenge
    assert challenge is not None
    assert mirror.view().options.deal is None  # the deal stays secret
    await racer.request(lambda i: Resign(id=i, room=joined.room))
    await eventually(lambda: mirror.view().results, what="the run over")
    assert mirror.view().reveal is None
    return joined.room, challenge


async def inbox(racer: RaceClient) -> list[ChallengeLine]:
    reply = await racer.request(lambda i: AskInbox(id=i))
    assert isinstance(reply, Inbox)
    return reply.challenges


async def refused(racer: RaceClient, build: Callable[[int], ClientMessage]) -> str:
    with pytest.raises(ServerError) as error:
        await racer.request(build)
    return error.value.code


async def test_a_challenge_is_played_apart_and_shown_to_nobody_until_both_have_played(server: RunningServer) -> None:
    ann, bob, eve = await server.connect("Ann"), await server.connect("Bob"), await server.connect("Eve")
    assert bob.player is not None
    ann_room, code = await play_run(ann, partial(ChallengePlayer, variant="antares", player=bob.player))
    [sent] = await inbox(ann)
    assert (sent.state, sent.opponent, sent.side) == ("open", "Bob", 0)  # the invited player, named
    [waiting] = await inbox(bob)
    assert (waiting.id, waiting.state, waiting.side, waiting.challenger) == (code, "open", None, "Ann")
    assert waiting.reveal is None

    # Nobody studies Ann's run before the challenge is over: not Bob, not Eve, by any request.
    for racer in (bob, eve):
        for build in (
            partial(AskReplay, room=ann_room, seat=0),
            partial(AskRaceLog, room=ann_room),
            partial(RaceGhost, room=ann_room),
            partial(Spectate, room=ann_room),
        ):
            assert await refused(racer, build) == "not-allowed"
    assert await refused(eve, partial(AcceptChallenge, challenge=code)) == "not-allowed"  # Bob's
    assert await refused(ann, partial(Rematch, room=ann_room)) == "not-allowed"  # one attempt

    bob_room, same = await play_run(bob, partial(AcceptChallenge, challenge=code.lower()))
    assert same == code

    def over(lines: list[ChallengeLine]) -> bool:  # the rating changes come just after the runs
        results = lines[0].results if lines and lines[0].state == "over" else None
        return results is not None and all(r.rating_change is not None for r in results)

    for racer, side in ((ann, 0), (bob, 1)):
        [line] = await eventually_async(partial(inbox, racer), over)
        assert (line.side, line.played, line.rooms) == (side, True, [ann_room, bob_room])
        assert line.reveal is not None
        results = line.results or []
        assert sorted(r.name for r in results) == ["Ann", "Bob"]
        assert all(r.rating_change is not None for r in results)  # rated by default
    replay = await eve.request(lambda i: AskReplay(id=i, room=ann_room, seat=0))
    assert isinstance(replay, Replay)


async def test_an_async_match_plays_a_waiting_challengers_deal_or_waits_itself(server: RunningServer) -> None:
    cat, dan = await server.connect("Cat"), await server.connect("Dan")
    _, first = await play_run(cat, partial(AsyncMatch, variant="scorpion"))  # nobody waits: Cat's run waits
    [line] = await inbox(cat)
    assert (line.id, line.state, line.side) == (first, "open", 0)

    async def matched() -> str | None:
        _, code = await play_run(dan, partial(AsyncMatch, variant="scorpion"))
        return code

    # Cat's run is offered once recorded (just after its end): Dan gets Cat's deal.
    assert await eventually_async(matched, lambda code: code == first)
    [line] = await inbox(dan)
    assert (line.id, line.side, line.challenger, line.opponent) == (first, 1, "Cat", "Dan")


async def test_a_challenge_needs_a_rival_and_a_real_id(server: RunningServer) -> None:
    ann = await server.connect("Ann")
    assert ann.player is not None
    assert await refused(ann, partial(ChallengePlayer, variant="antares", player=ann.player)) == "not-allowed"
    assert await refused(ann, partial(AcceptChallenge, challenge="NOSUCH")) == "no-such-race"


#: A value for each field a request with a room may require besides it.
SAMPLES: dict[str, object] = {"seat": 0, "move": "QS>5"}


def with_id(request: ClientMessage) -> Callable[[int], ClientMessage]:
    return lambda i: msgspec.structs.replace(request, id=i)


def room_requests(room: str) -> list[ClientMessage]:
    """One request of every type that names a room, for ``room``."""
    built = []
    for kind in ClientMessage.__args__:
        info = msgspec.inspect.type_info(kind)
        assert isinstance(info, msgspec.inspect.StructType)
        names = {field.name for field in info.fields}
        if "room" in names:
            wanted = {f.name: SAMPLES[f.name] for f in info.fields if f.required and f.name not in ("id", "room")}
            built.append(kind(id=0, room=room, **wanted))
    return built


async def test_no_request_of_any_type_shows_a_challengers_run_before_the_end(server: RunningServer) -> None:
    ann = await server.connect("Ann")
    ann_room, code = await play_run(ann, partial(ChallengePlayer, variant="antares"))
    bob = await server.raw("Bob")
    tried = room_requests(ann_room)
    assert len(tried) >= 15
    for request in tried:
        reply = await bob.request(with_id(request))
        assert isinstance(reply, Error), (request, reply)
    assert not [m for m in bob.messages if isinstance(m, (Snapshot, Update)) and m.room == ann_room]
    mine = await bob.request(lambda i: AskInbox(id=i))
    assert isinstance(mine, Inbox)
    assert mine.challenges == []  # an open challenge is in nobody's inbox but its challenger's
    before = len(bob.frames)
    taken = await bob.request(lambda i: AcceptChallenge(id=i, challenge=code))
    assert isinstance(taken, Joined)
    await bob.wait_for(lambda m: isinstance(m, Snapshot) and m.room == taken.room)
    assert not [f for f in bob.frames[before:] if isinstance(f, bytes) and ann_room.encode() in f]  # Bob's own run
