"""Bad input: every kind of broken, early, misplaced or excessive request gets its error code,
the connection survives what it should survive, and nobody else notices a bad actor."""

from __future__ import annotations

import asyncio
import contextlib
from functools import partial

import msgspec
import pytest
from websockets.exceptions import ConnectionClosed

from client.lib.connection import RaceClient, ServerError
from protocol.messages import (
    PROTOCOL_VERSION,
    Ack,
    CreateRoom,
    Error,
    Hello,
    Joined,
    JoinRoom,
    ListRooms,
    Lobby,
    PlayMove,
    Ready,
    Resign,
    RoomOptions,
    Start,
    Undo,
    Welcome,
)
from server.games import Game, IllegalMove, Move
from server.net.edge import HARD_FRAME_LIMIT
from tests.end_to_end.conftest import (
    RawClient,
    RunningServer,
    ServerFactory,
    board_lists,
    eventually,
)
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line

pytestmark = pytest.mark.asyncio


def frame(**fields: object) -> bytes:
    """A MessagePack map, whatever its fields (to send what no client library would)."""
    return msgspec.msgpack.encode(fields)


async def still_serves(client: RawClient) -> None:
    """The connection is open and answers a request."""
    assert isinstance(await client.request(lambda i: ListRooms(id=i)), Lobby)


# -- frames ------------------------------------------------------------------------------


async def test_a_frame_over_16_kib_is_refused_and_the_connection_stays_open(server: RunningServer) -> None:
    client = await server.raw("Ann")
    await client.send_raw(frame(type="list_rooms", id=5, pad="x" * 16 * 1024))
    error = await client.error(None)
    assert error.code == "frame-too-large"
    await still_serves(client)


async def test_a_frame_over_the_hard_limit_closes_the_connection_with_1009(server: RunningServer) -> None:
    client = await server.raw("Ann")
    with contextlib.suppress(ConnectionClosed):
        await client.send_raw(b"\x00" * (HARD_FRAME_LIMIT + 1))
    assert await client.closed() == 1009


async def test_malformed_messagepack_is_a_bad_frame(server: RunningServer) -> None:
    client = await server.raw("Ann")
    await client.send_raw(b"\xc1\x00garbage")
    assert (await client.error(None)).code == "bad-frame"
    await still_serves(client)


async def test_wrong_field_types_are_an_invalid_message_naming_the_request(server: RunningServer) -> None:
    client = await server.raw("Ann")
    await client.send_raw(frame(type="join", id=7, room=5))
    error = await client.error(7)
    assert error.code == "invalid-message"
    await still_serves(client)


async def test_an_unknown_message_type_is_named_as_such(server: RunningServer) -> None:
    client = await server.raw("Ann")
    await client.send_raw(frame(type="teleport", id=8, to="the moon"))
    error = await client.error(8)
    assert error.code == "unknown-type"
    await still_serves(client)


async def test_a_text_frame_is_a_bad_frame(server: RunningServer) -> None:
    client = await server.raw("Ann")
    await client.send_raw('{"type": "list_rooms", "id": 1}')
    assert (await client.error(None)).code == "bad-frame"
    await still_serves(client)


# -- hello ----------------------------------------------------------------------------------


async def test_requests_before_hello_are_refused(server: RunningServer) -> None:
    client = await server.raw()
    for build in (lambda i: ListRooms(id=i), lambda i: CreateRoom(id=i, variant="scorpion")):
        request_id = await client.send(build)
        assert (await client.error(request_id)).code == "hello-first"
    await client.hello("Ann")
    await still_serves(client)


async def test_an_unsupported_protocol_version_is_refused(server: RunningServer) -> None:
    client = await server.raw()
    request_id = await client.send(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION + 1, name="Ann"))
    assert (await client.error(request_id)).code == "unsupported-protocol"
    welcome = await client.hello("Ann")  # the same connection may try again
    assert welcome.protocol == PROTOCOL_VERSION


@pytest.mark.parametrize("name", ["Ann\x07", "Tab\tBed", "A" * 25, "   "])
async def test_an_invalid_name_is_refused(server: RunningServer, name: str) -> None:
    client = await server.raw()
    request_id = await client.send(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION, name=name))
    assert (await client.error(request_id)).code == "invalid-name"
    assert (await client.hello("  Ann  ")).name == "Ann"


async def test_an_invalid_resume_token_is_refused(server: RunningServer) -> None:
    ann = await server.raw()
    token = (await ann.hello("Ann")).resume
    player, _, signature = token.partition(".")
    forged = f"{player}.{signature[::-1]}"
    for bad in (forged, "not a token", f"{'f' * 16}.{signature}"):
        client = await server.raw()
        request_id = await client.send(partial(Hello, protocol=PROTOCOL_VERSION, name="Eve", resume=bad))
        assert (await client.error(request_id)).code == "invalid-token"


# -- rooms and races --------------------------------------------------------------------------


async def test_moves_in_a_room_one_is_not_racing_in_are_refused(server: RunningServer) -> None:
    ann = await server.connect("Ann")
    created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
    assert isinstance(created, Joined)
    eve = await server.raw("Eve")
    for build in (
        lambda i: PlayMove(id=i, room=created.room, move="deal"),
        lambda i: Undo(id=i, room=created.room),
        lambda i: Resign(id=i, room=created.room),
        lambda i: Ready(id=i, room=created.room),
    ):
        request_id = await eve.send(build)
        assert (await eve.error(request_id)).code == "not-in-room"
    request_id = await eve.send(lambda i: PlayMove(id=i, room="NOSUCHRM", move="deal"))
    assert (await eve.error(request_id)).code == "no-such-room"
    assert [racer.name for racer in ann.rooms[created.room].view().racers] == ["Ann"]


async def test_moves_before_the_start_are_refused(slow_countdown_server: RunningServer) -> None:
    server = slow_countdown_server  # a move is tried during the countdown
    ann = await server.connect("Ann")
    created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
    assert isinstance(created, Joined)
    code = created.room
    with pytest.raises(ServerError) as waiting:
        await ann.request(lambda i: PlayMove(id=i, room=code, move="deal"))
    assert waiting.value.code == "not-racing"
    await ann.request(lambda i: Start(id=i, room=code))
    assert ann.rooms[code].view().state == "countdown"
    with pytest.raises(ServerError) as countdown:
        await ann.request(lambda i: PlayMove(id=i, room=code, move="deal"))
    assert countdown.value.code == "not-racing"


async def practice(server: RunningServer, name: str) -> tuple[RaceClient, str]:
    """A practice room (one racer) on Antares deal 24, raced once the countdown is over."""
    client = await server.connect(name)
    options = RoomOptions(max_racers=1, deal=str(ANTARES_DEAL))
    created = await client.request(lambda i: CreateRoom(id=i, variant="antares", options=options))
    assert isinstance(created, Joined)
    await client.request(lambda i: Start(id=i, room=created.room))
    await eventually(lambda: client.rooms[created.room].board(0), what="the deal")
    return client, created.room


async def test_moves_after_the_end_are_refused(server: RunningServer) -> None:
    ann, code = await practice(server, "Ann")
    await ann.request(lambda i: Resign(id=i, room=code))
    await eventually(lambda: ann.rooms[code].view().state == "finished", what="the end")
    for build in (lambda i: PlayMove(id=i, room=code, move=winning_line()[0]), lambda i: Undo(id=i, room=code)):
        with pytest.raises(ServerError) as refused:
            await ann.request(build)
        assert refused.value.code == "not-racing"


def an_illegal_move(game: Game) -> tuple[str, str]:
    """A readable move that breaks a rule here, and the rule it breaks."""
    for source, pile in enumerate(game.piles):
        if not pile:
            continue
        for target in range(len(game.piles)):
            move = Move(source, 1, target)
            try:
                game.check(move)
            except IllegalMove as error:
                if error.rule not in ("same-pile", "pointless"):
                    return game.move_text(move), error.rule
    raise AssertionError("no illegal move found")


async def test_an_illegal_move_is_refused_with_its_rule_and_changes_nothing(server: RunningServer) -> None:
    ann, code = await practice(server, "Ann")
    replica = new_antares()
    text, rule = an_illegal_move(replica)
    before = ann.rooms[code].board(0)
    with pytest.raises(ServerError) as illegal:
        await ann.request(lambda i: PlayMove(id=i, room=code, move=text))
    assert (illegal.value.code, illegal.value.rule) == ("illegal-move", rule)
    with pytest.raises(ServerError) as unreadable:
        await ann.request(lambda i: PlayMove(id=i, room=code, move="sideways"))
    assert unreadable.value.code == "invalid-move"
    with pytest.raises(ServerError) as nothing:
        await ann.request(lambda i: Undo(id=i, room=code))
    assert nothing.value.code == "nothing-to-undo"
    assert ann.rooms[code].board(0) == before == board_lists(replica.public_piles())
    assert ann.rooms[code].view().racers[0].progress.moves == 0
    ack = await ann.request(lambda i: PlayMove(id=i, room=code, move=winning_line()[0]))
    assert isinstance(ack, Ack)


# -- limits ---------------------------------------------------------------------------------------


async def test_a_player_may_race_in_at_most_five_rooms(server: RunningServer) -> None:
    ann = await server.connect("Ann")
    for _ in range(5):
        assert isinstance(await ann.request(lambda i: CreateRoom(id=i, variant="scorpion")), Joined)
    with pytest.raises(ServerError) as created:
        await ann.request(lambda i: CreateRoom(id=i, variant="scorpion"))
    assert created.value.code == "too-many-rooms"
    bob = await server.connect("Bob")
    other = await bob.request(lambda i: CreateRoom(id=i, variant="antares"))
    assert isinstance(other, Joined)
    with pytest.raises(ServerError) as joined:
        await ann.request(lambda i: JoinRoom(id=i, room=other.room))
    assert joined.value.code == "too-many-rooms"
    assert len(ann.rooms) == 5


async def test_a_player_may_have_at_most_five_connections(server: RunningServer) -> None:
    first = await server.connect("Ann")
    others = [await server.connect("Ann", resume=first.resume) for _ in range(4)]
    assert {client.player for client in others} == {first.player}
    with pytest.raises(ServerError) as refused:
        await server.connect("Ann", resume=first.resume)
    assert refused.value.code == "too-many-connections"
    await others[0].close()
    await eventually(lambda: len(server.hub.links) == 4, what="the closed connections gone")
    again = await server.connect("Ann", resume=first.resume)
    assert again.player == first.player


async def test_a_burst_over_the_rate_limit_gets_rate_limited_errors_and_the_connection_lives(
    start_server: ServerFactory,
) -> None:
    # A token back a second: however slowly a busy machine serves the burst, it is still one.
    async with start_server(rate=1, burst=100) as server:
        client = await server.raw("Ann")
        sent = [await client.send(lambda i: ListRooms(id=i)) for _ in range(150)]
        replies = [await client.reply(request_id) for request_id in sent]
        limited = [r for r in replies if isinstance(r, Error)]
        assert all(r.code == "rate-limited" for r in limited)
        served = [r for r in replies if isinstance(r, Lobby)]
        assert len(served) + len(limited) == len(sent)
        assert 0 < len(limited) <= 51
        assert len(served) >= 99  # the burst of 100, less the hello
        assert client.is_open
        await asyncio.sleep(1.1)  # a token back
        await still_serves(client)


async def test_an_abusive_connection_is_closed_with_1008(server: RunningServer) -> None:
    client = await server.raw("Ann")
    bystander = await server.raw("Bob")
    with contextlib.suppress(ConnectionClosed):
        for _ in range(260):
            await client.send_raw(b"\xc1")
    assert await client.closed() == 1008
    errors = [m for m in client.messages if isinstance(m, Error)]
    assert len(errors) > 200
    await still_serves(bystander)


async def test_a_bad_actor_does_not_affect_the_other_racer(start_server: ServerFactory) -> None:
    line = winning_line()
    async with start_server(deal=str(ANTARES_DEAL)) as srv:
        bob = await srv.connect("Bob")
        created = await bob.request(lambda i: CreateRoom(id=i, variant="antares"))
        assert isinstance(created, Joined)
        code = created.room
        mallory = await srv.raw("Mallory")
        assert isinstance(await mallory.request(lambda i: JoinRoom(id=i, room=code)), Joined)
        for racer in (bob, mallory):
            await racer.request(lambda i: Ready(id=i, room=code))
        await eventually(lambda: bob.rooms[code].board(0), what="Bob's deal")
        replica = new_antares()
        for text in line[:5]:
            await bob.request(partial(PlayMove, room=code, move=text))
            replica.apply(replica.parse_move(text))
        bob_board = bob.rooms[code].board(0)
        assert bob_board == board_lists(replica.public_piles())
        version = bob.rooms[code].version

        # Mallory plays on her own board, then tries an illegal move, undoes, asks to start
        # again, says hello again, and floods the server until it closes her connection.
        hers = new_antares()
        for text in line[:3]:
            await mallory.request(partial(PlayMove, room=code, move=text))
            hers.apply(hers.parse_move(text))
        await mallory.send(lambda i: PlayMove(id=i, room=code, move=an_illegal_move(hers)[0]))
        await mallory.send(lambda i: Undo(id=i, room=code))
        await mallory.send(lambda i: Start(id=i, room=code))
        await mallory.send(lambda i: Hello(id=i, protocol=PROTOCOL_VERSION, name="Bob"))
        with contextlib.suppress(ConnectionClosed):
            for _ in range(260):
                await mallory.send_raw(b"\xc1")
        assert await mallory.closed() == 1008
        await eventually(lambda: not bob.rooms[code].view().racers[1].connected, what="Mallory gone")

        assert bob.rooms[code].board(0) == bob_board  # nothing Mallory did touched Bob's board
        assert bob.rooms[code].view().racers[1].progress.moves == 3  # Bob heard of her moves, not their cards
        assert bob.rooms[code].board(1) is None
        assert bob.rooms[code].version > version
        for text in line[5:]:
            ack = await bob.request(partial(PlayMove, room=code, move=text))
            assert isinstance(ack, Ack)
            replica.apply(replica.parse_move(text))
        await eventually(lambda: bob.rooms[code].view().racers[0].finished_ms, what="Bob finished")
        view = bob.rooms[code].view()
        assert view.racers[0].board == board_lists(replica.public_piles())
        assert view.racers[0].progress.won
        assert not any(isinstance(m, Welcome) for m in mallory.messages[1:])  # no second hello
