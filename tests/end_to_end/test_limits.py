"""What keeps one client from hurting the others: coalesced spectator counts, slow consumers
closed, room creation limited, public rooms capped per address, race logs kept by race
number, costly answers charged."""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Callable
from functools import partial

import pytest
from websockets.asyncio.client import connect

from client.lib.connection import ServerError
from protocol.codec import encode
from protocol.messages import (
    PROTOCOL_VERSION,
    Ack,
    AskRaceLog,
    AskReplay,
    AskSnapshot,
    CreateRoom,
    Error,
    Hello,
    Joined,
    Leave,
    RaceLog,
    Rematch,
    Replay,
    Resign,
    RoomOptions,
    Snapshot,
    Spectate,
    SpectatorsChanged,
    Update,
    Variant,
)
from server.ops.metrics import CLOSES
from tests.end_to_end.conftest import RawClient, ServerFactory, start_race
from tests.polling import eventually

pytestmark = pytest.mark.asyncio


async def test_spectator_joins_send_a_count_at_most_once_a_second(start_server: ServerFactory) -> None:
    """Finding 6: each join used to broadcast a count to every spectator (quadratic)."""
    async with start_server() as srv:
        host = await srv.raw("Host")
        created = await host.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=2)))
        assert isinstance(created, Joined)
        watchers = [await srv.raw(f"W{n}") for n in range(150)]
        await asyncio.gather(*(w.request(lambda i: Spectate(id=i, room=created.room)) for w in watchers))
        await eventually(
            lambda: any(
                isinstance(e, SpectatorsChanged) and e.count == 150
                for m in host.messages
                if isinstance(m, Update)
                for e in m.events
            ),
            what="the final count",
        )
        counts = [
            e
            for w in watchers
            for m in w.messages
            if isinstance(m, Update)
            for e in m.events
            if isinstance(e, SpectatorsChanged)
        ]
        # Each spectator gets at most a few coalesced counts, never one per join.
        assert len(counts) <= 150 * 4
        assert (
            max(
                sum(isinstance(e, SpectatorsChanged) for m in w.messages if isinstance(m, Update) for e in m.events)
                for w in watchers
            )
            <= 4
        )


async def test_a_client_that_stops_reading_is_closed_as_a_slow_consumer(start_server: ServerFactory) -> None:
    """Finding 5: a spectator that never reads grew the server's buffers without bound."""
    async with start_server(write_buffer_cap=64 * 1024, rate=100_000, burst=100_000) as srv:
        race = await start_race(srv, "antares")  # boards make its snapshots a kilobyte or two
        host = race.racers[0]
        created = Joined(id=0, room=race.code, role="racer")
        # A tiny receive buffer that is never read: the server's writes pile up on its side.
        slow_closes = CLOSES.labels("slow")._value.get()
        # A receive buffer of 4 KiB, set before connecting so the TCP window stays small.
        raw = socket.socket()
        raw.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        raw.setblocking(False)
        await asyncio.get_running_loop().sock_connect(raw, ("127.0.0.1", srv.server.port))
        slow = await connect(srv.url, sock=raw, compression=None, max_queue=1)
        await slow.send(encode(Hello(id=1, protocol=PROTOCOL_VERSION, name="Slow")))
        await slow.send(encode(Spectate(id=2, room=created.room)))
        await asyncio.sleep(0.2)
        slow.transport.pause_reading()  # from now on it reads nothing

        def slow_link_dropped() -> bool:
            return not any(not link.dropped for link in srv.hub.links if link.name == "Slow")

        request, closed = 3, False
        for _ in range(2000):  # bounded: 40,000 requests at most
            for _ in range(20):
                await slow.send(encode(AskSnapshot(id=request, room=created.room)))
                request += 1
            await asyncio.sleep(0.005)
            if slow_link_dropped():
                closed = True
                break
        assert closed, "the slow consumer was never closed"
        assert CLOSES.labels("slow")._value.get() > slow_closes
        slow.transport.resume_reading()
        await asyncio.wait_for(slow.wait_closed(), 10)
        # The close frame (4008) waits behind the backlog; the server drops the connection
        # either way, so the client may see it or an abnormal close.
        assert slow.close_code is not None
        # Everyone else is served as before.
        assert isinstance(await host.request(lambda i: AskSnapshot(id=i, room=created.room)), Snapshot)


async def test_room_creation_is_limited_per_hour(start_server: ServerFactory) -> None:
    """Finding 11: finished practice rooms could be made without limit."""
    async with start_server(rooms_per_hour=3) as srv:
        ann = await srv.raw("Ann")
        for _ in range(3):
            created = await ann.request(
                lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=1))
            )
            assert isinstance(created, Joined)
            await ann.request(partial(Leave, room=created.room))
        refused = await ann.request(lambda i: CreateRoom(id=i, variant="antares", options=RoomOptions(max_racers=1)))
        assert isinstance(refused, Error)
        assert refused.code == "creation-limit"


async def test_public_rooms_are_capped_per_address_until_one_finishes_or_closes(start_server: ServerFactory) -> None:
    """Finding 8 (issue 29): one address made 500 public rooms in 3 s. Every client of the
    test comes from 127.0.0.1, so they all count for the same address, whoever they are."""
    async with start_server() as srv:
        cap = srv.hub.config.public_rooms_per_address
        assert cap == 10
        race = await start_race(srv, "antares", RoomOptions(public=True))  # Ann's room counts
        hosts: dict[str, RawClient] = {}
        for player in range(3):
            host = await srv.raw(f"Host {player}")
            for _ in range(min(4, cap - 1 - len(hosts))):
                created = await host.request(partial(CreateRoom, variant="scorpion", options=RoomOptions(public=True)))
                assert isinstance(created, Joined)
                hosts[created.room] = host
        assert len(hosts) == cap - 1

        def public(variant: Variant = "scorpion") -> Callable[[int], CreateRoom]:
            return partial(CreateRoom, variant=variant, options=RoomOptions(public=True))

        late = await srv.raw("Late")
        refused = await late.request(public())
        assert isinstance(refused, Error)
        assert refused.code == "address-limit"
        assert f"at most {cap} unfinished public rooms" in refused.message
        # Private rooms are listed nowhere, and not counted.
        assert isinstance(await late.request(partial(CreateRoom, variant="scorpion")), Joined)

        # A finished race frees its place...
        for racer in race.racers:
            await racer.request(partial(Resign, room=race.code))
        await eventually(lambda: race.mirror(0).view().state == "finished", what="the race over")
        assert isinstance(await late.request(public("antares")), Joined)
        full = await late.request(public("antares"))
        assert isinstance(full, Error)
        assert full.code == "address-limit"
        # ... and so does a room closed when its last racer leaves.
        code, host = next(iter(hosts.items()))
        assert isinstance(await host.request(partial(Leave, room=code)), Ack)
        assert isinstance(await late.request(public("antares")), Joined)


async def test_a_race_log_stays_available_after_a_rematch(start_server: ServerFactory) -> None:
    """Finding 10: a rematch deleted the race log before the others fetched it."""
    async with start_server() as srv:
        race = await start_race(srv, "antares")
        ann, bob = race.racers
        await ann.request(lambda i: Resign(id=i, room=race.code))
        await bob.request(lambda i: Resign(id=i, room=race.code))
        await eventually(lambda: ann.rooms[race.code].view().state == "finished", what="race over")
        await bob.request(lambda i: Rematch(id=i, room=race.code))
        for ask in (
            lambda i: AskRaceLog(id=i, room=race.code),
            lambda i: AskRaceLog(id=i, room=race.code, race=1),
        ):
            log = await ann.request(ask)
            assert isinstance(log, RaceLog)
            assert log.race == 1
            assert [r.moves[-1] for r in log.racers] == ["resign resigned", "resign resigned"]
        replay = await ann.request(lambda i: AskReplay(id=i, room=race.code, seat=0, race=1))
        assert isinstance(replay, Replay)
        assert replay.race == 1
        with pytest.raises(ServerError) as missing:
            await ann.request(lambda i: AskRaceLog(id=i, room=race.code, race=7))
        assert missing.value.code == "no-such-race"


async def test_answers_of_a_long_log_are_charged_to_the_rate_limit(start_server: ServerFactory) -> None:
    """Finding 9: replays of a long game, under the request rate, stalled other rooms."""
    async with start_server(rate=5, burst=10) as srv:
        race = await start_race(srv, "antares")
        ann, bob = race.racers
        await ann.request(lambda i: Resign(id=i, room=race.code))
        await bob.request(lambda i: Resign(id=i, room=race.code))
        await eventually(lambda: ann.rooms[race.code].view().state == "finished", what="race over")
        flooder = await RawClient.open(srv.url)
        await flooder.hello("Flood")
        ids = [await flooder.send(lambda i: AskRaceLog(id=i, room=race.code)) for _ in range(12)]
        replies = [await flooder.reply(i) for i in ids]
        assert any(isinstance(r, Error) and r.code == "rate-limited" for r in replies)


async def test_a_finished_public_room_raced_again_counts_again_for_the_address(start_server: ServerFactory) -> None:
    async with start_server(public_rooms_per_address=1) as srv:
        race = await start_race(srv, "antares", RoomOptions(public=True))
        for racer in race.racers:
            await racer.request(partial(Resign, room=race.code))
        await eventually(lambda: race.mirror(0).view().state == "finished", what="the race over")
        cy = await srv.raw("Cy")
        created = await cy.request(partial(CreateRoom, variant="scorpion", options=RoomOptions(public=True)))
        assert isinstance(created, Joined)  # the finished room's place was free
        ann = race.racers[0]
        with pytest.raises(ServerError) as refused:
            await ann.request(partial(Rematch, room=race.code))
        assert refused.value.code == "address-limit"
        assert isinstance(await cy.request(partial(Leave, room=created.room)), Ack)
        await ann.request(partial(Rematch, room=race.code))
