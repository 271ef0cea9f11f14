"""The client library against a real server: room copies rebuilt from diffs stay equal
to what the server shows each viewer; reconnection, resume and resync."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Callable

import pytest
from websockets.asyncio.server import ServerConnection, serve
from websockets.exceptions import ConnectionClosed

from client.lib.connection import RaceClient
from protocol.codec import decode_client, encode
from protocol.errors import CloseCode
from protocol.messages import (
    PROTOCOL_VERSION,
    AccountInfo,
    Ack,
    ChangePassword,
    CreateRoom,
    Joined,
    JoinRoom,
    ListRooms,
    Lobby,
    Logout,
    Ready,
    Register,
    Resign,
    RoomOptions,
    ServerMessage,
    Snapshot,
    Spectate,
    Welcome,
)
from protocol.mirror import RoomMirror
from tests.client.conftest import (
    PATIENCE,
    Running,
    Serve,
    eventually,
    playing,
    without_now,
)
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line
from tests.polling import LONG_COUNTDOWN

pytestmark = pytest.mark.asyncio


def showing_boards(seats: list[int]) -> Callable[[RoomMirror], bool]:
    """A predicate for ``wait_room``: the copy shows the boards of ``seats``."""
    return lambda mirror: all(mirror.board(seat) is not None for seat in seats)


async def open_room(srv: Running, options: RoomOptions, *names: str) -> tuple[str, list[RaceClient]]:
    """The first named player creates an Antares room; the others join it."""
    clients = [await srv.connect(name) for name in names]
    created = await clients[0].request(lambda i: CreateRoom(id=i, variant="antares", options=options))
    assert isinstance(created, Joined)
    for client in clients[1:]:
        await client.request(lambda i: JoinRoom(id=i, room=created.room))
    return created.room, clients


async def test_every_diff_of_a_race_keeps_each_copy_equal_to_the_servers_view(serve: Serve) -> None:
    async with serve(deal=str(ANTARES_DEAL)) as srv:
        code, (ann, bob) = await open_room(srv, RoomOptions(spectator_delay=0), "Ann", "Bob")
        sam = await srv.connect("Sam")
        await sam.request(lambda i: Spectate(id=i, room=code))
        viewers = {0: ann, 1: bob, None: sam}

        async def check(version: int) -> None:
            for seat, client in viewers.items():
                mirror = await client.wait_room(code, lambda m: m.version >= version)
                assert mirror.version == version
                assert without_now(mirror.view()) == without_now(srv.view(code, seat)), f"seat {seat}"

        for client in (ann, bob):
            await client.request(lambda i: Ready(id=i, room=code))
        for seat, client in viewers.items():
            shown = [0, 1] if seat is None else [seat]
            await client.wait_room(code, showing_boards(shown), 10)
        await check(srv.hub.rooms[code].room.version)
        assert ann.rooms[code].board(0) == [list(pile) for pile in new_antares().public_piles()]
        assert ann.rooms[code].board(1) is None  # a rival's board stays hidden during the race

        # Bob plays two moves and resigns; Ann plays a whole winning line. Every copy follows.
        line = winning_line()
        for text in line[:2]:
            ack = await bob.request(playing(code, text))
            assert isinstance(ack, Ack)
            assert ack.version is not None
            await check(ack.version)
        resigned = await bob.request(lambda i: Resign(id=i, room=code))
        assert isinstance(resigned, Ack)
        assert resigned.version is not None
        await check(resigned.version)
        assert bob.rooms[code].board(0) is not None  # done racing, Bob sees Ann's board
        for text in line:
            ack = await ann.request(playing(code, text))
            assert isinstance(ack, Ack)
            assert ack.version is not None
            await check(ack.version)

        view = ann.rooms[code].view()
        assert view.state == "finished"
        assert view.results is not None
        assert [(r.name, r.finished) for r in view.results] == [("Ann", True), ("Bob", False)]
        assert view.racers[0].progress.home == 52


async def test_a_dropped_connection_comes_back_by_itself_with_its_seat_and_its_spectating(serve: Serve) -> None:
    ups: dict[str, list[bool]] = {"Ann": [], "Sam": []}
    async with serve(close_clients=False) as first:
        port, prefix = first.server.port, first.prefix
        ann = await first.connect("Ann", reconnect=True)
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(max_racers=3)))
        assert isinstance(created, Joined)
        code = created.room
        bob = await first.connect("Bob")
        await bob.request(lambda i: JoinRoom(id=i, room=code))
        bob_token = bob.resume
        sam = await first.connect("Sam", reconnect=True)
        await sam.request(lambda i: Spectate(id=i, room=code))
        for name, client in (("Ann", ann), ("Sam", sam)):
            client.listen_connection(ups[name].append)
        await bob.close()
    # The server is gone (it said goodbye): both clients noticed, and keep trying.
    await eventually(lambda: ups["Ann"] == [False] and ups["Sam"] == [False], what="the drop noticed")
    assert ann.goodbye is not None
    assert not ann.connected.is_set()

    async with serve(port=port, prefix=prefix) as second:
        await eventually(lambda: ups["Ann"] == [False, True] and ups["Sam"] == [False, True], what="reconnected")
        assert ann.roles[code] == "racer"
        assert sam.roles[code] == "spectator"
        # Bob comes back too and says ready: both copies follow the live room again.
        bob = await second.connect("Bob", resume=bob_token)
        await bob.request(lambda i: Ready(id=i, room=code))
        for client, seat in ((ann, 0), (sam, None)):
            mirror = await client.wait_room(code, lambda m: m.view().racers[1].ready, timeout=5)
            assert without_now(mirror.view()) == without_now(second.view(code, seat))
        assert [r.connected for r in ann.rooms[code].view().racers] == [True, True]
        for client in (ann, sam):
            await client.close()


async def test_a_version_gap_is_repaired_with_a_fresh_snapshot(serve: Serve) -> None:
    async with serve() as srv:
        ann = await srv.connect("Ann")
        snapshots: list[Snapshot] = []

        def keep(room: str, message: ServerMessage) -> None:
            if isinstance(message, Snapshot):
                snapshots.append(message)

        ann.listen(keep)
        created = await ann.request(lambda i: CreateRoom(id=i, variant="scorpion", options=RoomOptions(max_racers=3)))
        assert isinstance(created, Joined)
        code = created.room
        stale = await eventually(lambda: snapshots[-1] if snapshots else None, what="the first snapshot")
        for name in ("Bob", "Cid"):
            other = await srv.connect(name)
            await other.request(lambda i: JoinRoom(id=i, room=code))
        await ann.wait_room(code, lambda m: len(m.view().racers) == 3)

        # Ann's copy goes back to an old version, as if she had missed the joins: the next
        # update does not follow on from it, so the client asks for a snapshot.
        ann.rooms[code].reset(stale)
        ack = await ann.request(lambda i: Ready(id=i, room=code))
        assert isinstance(ack, Ack)
        mirror = await ann.wait_room(code, lambda m: m.version == ack.version)
        assert snapshots[-1].id is not None  # the answer to the client's own snapshot request
        assert without_now(mirror.view()) == without_now(srv.view(code, 0))
        assert [r.name for r in mirror.view().racers] == ["Ann", "Bob", "Cid"]


async def test_requests_dropped_for_going_too_fast_are_sent_again(serve: Serve) -> None:
    async with serve(rate=20.0, burst=2.0) as srv:
        ann = await srv.connect("Ann")
        replies = await asyncio.gather(*(ann.request(lambda i: ListRooms(id=i)) for _ in range(8)))
        assert all(isinstance(reply, Lobby) for reply in replies)


async def test_a_quick_match_puts_two_waiting_players_in_one_room_that_counts_down(serve: Serve) -> None:
    async with serve(countdown=LONG_COUNTDOWN) as srv:
        ann, bob = await srv.connect("Ann"), await srv.connect("Bob")
        first = await ann.quick_match("antares")
        second = await bob.quick_match("antares")
        a, b = await asyncio.wait_for(asyncio.gather(first.joined, second.joined), PATIENCE)
        assert a.room == b.room
        assert {a.seat, b.seat} == {0, 1}
        for client in (ann, bob):
            mirror = await client.wait_room(a.room, lambda m: m.view().state == "countdown")
            assert sorted(racer.name for racer in mirror.view().racers) == ["Ann", "Bob"]
        assert await ann.leave_queue(first) is False  # too late: the race has formed


async def test_leaving_the_quick_match_line_before_a_race_forms(serve: Serve) -> None:
    async with serve() as srv:
        ann = await srv.connect("Ann")
        ticket = await ann.quick_match("scorpion")
        assert ("scorpion", ann.player) in srv.hub.queued  # waiting on this node
        assert await ann.leave_queue(ticket) is True
        assert ("scorpion", ann.player) not in srv.hub.queued
        assert ticket.joined.cancelled()


async def test_the_account_reply_token_resumes_the_account_and_a_logout_is_not_reconnected(serve: Serve) -> None:
    ups: list[bool] = []
    async with serve(close_clients=False) as first:
        port, prefix = first.server.port, first.prefix
        ann = await first.connect("Ann", reconnect=True)
        assert not ann.account
        registered = await ann.request(lambda i: Register(id=i, name="Ann", password="lib-secret-1"), timeout=30)
        assert isinstance(registered, AccountInfo)
        # A new password revokes every older token: the client holds the one it was given.
        changed = await ann.request(
            lambda i: ChangePassword(id=i, password="lib-secret-1", new_password="lib-secret-2"), timeout=30
        )
        assert isinstance(changed, AccountInfo)
        assert (ann.resume, ann.account, ann.player) == (changed.resume, True, registered.player)
        ann.listen_connection(ups.append)
    await eventually(lambda: ups == [False], what="the drop noticed")

    async with serve(port=port, prefix=prefix):
        await eventually(lambda: ups == [False, True], what="reconnected")
        assert ann.account  # resumed as the account, not turned into a new guest
        assert ann.player == registered.player
        assert isinstance(await ann.request(lambda i: Logout(id=i)), Ack)
        await eventually(lambda: ups == [False, True, False], what="the logout's close")
        assert ann.ended is not None
        assert ann.ended.code == CloseCode.LOGGED_OUT
        assert ann.ended.logged_out
        # Decided as the listeners were told: the session is over, no reconnection is under way.
        assert ann._reconnecting is not None
        assert ann._reconnecting.done()  # the earlier one, finished
        assert not ann.connected.is_set()
        await ann.close()


async def test_a_drop_during_a_send_raises_once_and_logs_nothing() -> None:
    """The connection drops while a request is still being sent: the request raises
    ConnectionError, and its reply's future (failed by the drop too) is not left for asyncio
    to log as an exception never retrieved."""
    stalled = asyncio.Event()

    async def handler(connection: ServerConnection) -> None:
        hello = decode_client(await connection.recv(decode=False))
        await connection.send(
            encode(Welcome(id=hello.id, player="p1", name="Ann", resume="t", protocol=PROTOCOL_VERSION))
        )
        connection.transport.pause_reading()  # the client's big frame fills the buffers
        await stalled.wait()
        connection.transport.abort()

    reported: list[str] = []
    gc.collect()  # what earlier tests left is theirs to report, not this one's
    loop = asyncio.get_running_loop()
    loop.set_exception_handler(lambda _loop, context: reported.append(f"{context['message']}: {context}"))
    try:
        async with serve(handler, "127.0.0.1", 0, max_size=None) as server:
            port = next(iter(server.sockets)).getsockname()[1]
            client = await RaceClient.connect(f"ws://127.0.0.1:{port}", "Ann", reconnect=False)
            # Larger than both sockets' buffers: the send waits for the server to read.
            big = asyncio.ensure_future(client.request(lambda i: Register(id=i, name="x" * (32 << 20), password="p")))
            await asyncio.sleep(0.5)
            assert not big.done()
            stalled.set()
            with pytest.raises(ConnectionError, match="before the request was sent"):
                await big
            await client.close()
        del big
        gc.collect()
        await asyncio.sleep(0)
    finally:
        loop.set_exception_handler(None)
    assert reported == []


async def test_a_send_that_finds_the_connection_closed_marks_it_down_at_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Before the reader has run to notice a drop, a send already failed: the request raises,
    and the client counts the connection down, so a caller that retries at once waits for the
    next connection instead of spinning on the closed one."""
    held = asyncio.Event()

    async def handler(connection: ServerConnection) -> None:
        hello = decode_client(await connection.recv(decode=False))
        await connection.send(
            encode(Welcome(id=hello.id, player="p1", name="Ann", resume="t", protocol=PROTOCOL_VERSION))
        )
        await held.wait()

    async with serve(handler, "127.0.0.1", 0) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        client = await RaceClient.connect(f"ws://127.0.0.1:{port}", "Ann", reconnect=False)
        socket = client._socket
        assert socket is not None

        async def closed(_: object) -> None:
            raise ConnectionClosed(None, None)

        monkeypatch.setattr(socket, "send", closed)
        try:
            with pytest.raises(ConnectionError, match="before the request was sent"):
                await client.request(lambda i: Register(id=i, name="Ann", password="a password"))
            assert not client.connected.is_set()
        finally:
            held.set()
            await client.close()
