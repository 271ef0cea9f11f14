"""Async challenges through the real server (server/features/challenges.py): the challenger
plays now, the rival later on the same secret deal; nothing of either run shows by any request
before both ended; the results and rating changes reach both inboxes, and are pushed to both
players when the second run ends or the window closes; the deal's commitment is published
from the start. And async matches."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import msgspec
import pytest

from client.lib.connection import RaceClient, ServerError
from protocol.fairness import verify
from protocol.messages import (
    AcceptChallenge,
    AskInbox,
    AskRaceLog,
    AskReplay,
    AsyncMatch,
    ChallengeLine,
    ChallengePlayer,
    ChallengeResult,
    ChallengeWaiting,
    ClientMessage,
    Error,
    Inbox,
    Joined,
    RaceGhost,
    Rematch,
    Replay,
    Resign,
    ServerMessage,
    Snapshot,
    Spectate,
    Update,
)
from server.clock import now_ms
from server.competition.challenges import Challenge, Run, Side
from server.features.challenges import announce_closed_windows
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

    # Cat's run is offered once recorded (just after its end): Dan gets Cat's deal. A try of
    # Dan's before that waited itself, and is in his inbox too.
    assert await eventually_async(matched, lambda code: code == first)
    [line] = [line for line in await inbox(dan) if line.id == first]
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


def pushed_results(
    racer: RaceClient, kind: type[ChallengeResult | ChallengeWaiting] = ChallengeResult
) -> list[ChallengeLine]:
    """Start keeping the challenge lines pushed to ``racer`` in ``kind`` messages; the list
    they go in."""
    pushed: list[ChallengeLine] = []

    def heard(room: str, message: ServerMessage) -> None:
        if isinstance(message, kind):
            pushed.append(message.challenge)

    racer.listen(heard)
    return pushed


async def test_each_run_says_its_side_and_whether_the_challenge_is_rated(server: RunningServer) -> None:
    ann, bob = await server.connect("Ann"), await server.connect("Bob")
    assert bob.player is not None
    ann_room, code = await play_run(ann, partial(ChallengePlayer, variant="antares", player=bob.player, rated=False))
    bob_room, _ = await play_run(bob, partial(AcceptChallenge, challenge=code))
    ann_view, bob_view = ann.rooms[ann_room].view(), bob.rooms[bob_room].view()
    assert (ann_view.challenge, ann_view.challenge_side, ann_view.challenge_rated) == (code, 0, False)
    assert (bob_view.challenge, bob_view.challenge_side, bob_view.challenge_rated) == (code, 1, False)

    cat = await server.connect("Cat")
    rated_room, _ = await play_run(cat, partial(AsyncMatch, variant="scorpion"))  # always rated
    assert (cat.rooms[rated_room].view().challenge_side, cat.rooms[rated_room].view().challenge_rated) == (0, True)


async def test_both_players_are_told_the_result_when_the_second_run_ends_and_can_check_the_deal(
    server: RunningServer,
) -> None:
    ann, bob = await server.connect("Ann"), await server.connect("Bob")
    assert bob.player is not None
    to_ann, to_bob = pushed_results(ann), pushed_results(bob)
    waits_ann, waits_bob = pushed_results(ann, ChallengeWaiting), pushed_results(bob, ChallengeWaiting)
    ann_room, code = await play_run(ann, partial(ChallengePlayer, variant="antares", player=bob.player))
    [waiting] = await inbox(bob)
    # Bob, named, was told when it was made (not when Ann's run ended: when would say how
    # fast), with what his inbox says.
    await eventually(lambda: waits_bob, what="the challenge pushed to Bob")
    assert waits_bob == [waiting]
    assert waiting.state == "open"
    assert waiting.results is None
    assert waiting.rooms is None
    assert waits_ann == []
    # The commitment is published from the start, as the run's room published it: the deal is not.
    assert waiting.commitment is not None
    assert waiting.commitment == ann.rooms[ann_room].view().commitment
    assert waiting.reveal is None
    assert to_ann == []
    assert to_bob == []

    bob_room, _ = await play_run(bob, partial(AcceptChallenge, challenge=code))
    assert bob.rooms[bob_room].view().commitment == waiting.commitment  # the same deal
    await eventually(lambda: to_ann and to_bob, what="the result pushed to both players")
    for pushed, side in ((to_ann, 0), (to_bob, 1)):
        [line] = pushed
        assert (line.id, line.state, line.side, line.rooms) == (code, "over", side, [ann_room, bob_room])
        assert all(r.rating_change is not None for r in line.results or [])  # rated: once both moved
        assert line.reveal is not None
        assert line.commitment == waiting.commitment
        assert verify(line.variant, line.reveal.deal, line.reveal.salt, line.commitment)
        assert line == (await inbox(ann if side == 0 else bob))[0]  # what the inbox says now


async def test_the_players_are_told_when_a_window_closes_before_both_runs_ended(server: RunningServer) -> None:
    ann, bob = await server.connect("Ann"), await server.connect("Bob")
    assert ann.player is not None
    assert bob.player is not None
    to_ann, to_bob = pushed_results(ann), pushed_results(bob)
    now = now_ms()
    lapsed = Challenge(
        id="LAPSED1",
        variant="scorpion",
        deal="617",
        salt="ab" * 16,
        rated=True,
        created=now - 7_200_000,
        expires=now - 1,
        challenger=Side(ann.player, "Ann"),
        invited=bob.player,
        invited_name="Bob",
        runs={0: Run("ANNRUN01", None, 12, 3, 0)},  # Ann's run ended; Bob never played
    )
    await server.hub.challenges.create(lapsed, now)

    assert await announce_closed_windows(server.hub) == 2
    await eventually(lambda: to_ann and to_bob, what="the expiry pushed to both players")
    for pushed in (to_ann, to_bob):
        [line] = pushed
        assert (line.id, line.state, line.results) == ("LAPSED1", "expired", None)
        assert line.reveal is not None
        assert line.commitment is not None
        assert verify(line.variant, line.reveal.deal, line.reveal.salt, line.commitment)
    assert await announce_closed_windows(server.hub) == 0  # told once, whichever node asks again


async def test_the_named_player_is_told_when_the_challenge_is_made_not_when_its_run_ends(
    server: RunningServer,
) -> None:
    """When the news came would otherwise say how fast the challenger's run was."""
    ann, bob = await server.connect("Ann"), await server.connect("Bob")
    assert bob.player is not None
    waits = pushed_results(bob, ChallengeWaiting)
    joined = await ann.request(lambda i: ChallengePlayer(id=i, variant="antares", player=bob.player))
    assert isinstance(joined, Joined)
    await eventually(lambda: waits, what="the challenge pushed to Bob")
    assert ann.rooms[joined.room].view().state != "finished"  # Ann's run goes on
    assert len(waits) == 1
