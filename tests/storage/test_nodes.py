"""Room leases in Redis: an expired lease is taken back only while nobody was granted one since."""

from __future__ import annotations

import pytest

from server.storage.connection import Storage
from server.storage.keys import Keys
from server.storage.nodes import NodeStore

pytestmark = pytest.mark.asyncio


async def test_an_expired_lease_is_renewed_until_another_node_was_granted_the_room(store: Storage) -> None:
    nodes, keys = NodeStore(store), Keys(store.prefix)
    await store.redis.set(keys.room("ROOM"), b"record")
    a = await nodes.claim("ROOM", "node-a", 60_000)
    assert a.lease is not None
    assert await nodes.renew({"ROOM": a.lease}, 60_000) == {"ROOM": True}
    # Node A was starved past its lease, and nobody claimed the room meanwhile: still A's.
    await store.redis.delete(keys.room_owner("ROOM"))
    assert await nodes.renew({"ROOM": a.lease}, 60_000) == {"ROOM": True}
    assert await store.redis.get(keys.room_owner("ROOM")) == a.lease.encode()
    # Expired again; node B claims the room and gives it up (a drain): A has lost it for good.
    await store.redis.delete(keys.room_owner("ROOM"))
    b = await nodes.claim("ROOM", "node-b", 60_000)
    assert b.lease is not None
    await nodes.release("ROOM", b.lease)
    assert await nodes.renew({"ROOM": a.lease}, 60_000) == {"ROOM": False}
    assert await store.redis.get(keys.room_owner("ROOM")) is None


async def test_many_rooms_renewed_at_once_each_get_their_own_answer(store: Storage) -> None:
    """One renewal for all of a node's rooms: a room another node took is lost, the rest kept."""
    nodes, keys = NodeStore(store), Keys(store.prefix)
    leases: dict[str, str] = {}
    for code in ("ROOMA", "ROOMB", "ROOMC"):
        await store.redis.set(keys.room(code), b"record")
        claim = await nodes.claim(code, "node-a", 60_000)
        assert claim.lease is not None
        leases[code] = claim.lease
    await store.redis.delete(keys.room_owner("ROOMB"))
    assert (await nodes.claim("ROOMB", "node-b", 60_000)).lease is not None
    await store.redis.pexpire(keys.room_owner("ROOMC"), 1_000)
    assert await nodes.renew(leases, 60_000) == {"ROOMA": True, "ROOMB": False, "ROOMC": True}
    assert await store.redis.pttl(keys.room_owner("ROOMC")) > 50_000
    assert await store.redis.get(keys.room_owner("ROOMB")) != leases["ROOMB"].encode()


async def test_a_node_with_more_rooms_than_one_renewal_script_takes_renews_them_all(store: Storage) -> None:
    nodes, keys = NodeStore(store), Keys(store.prefix)
    codes = [f"R{number}" for number in range(1_100)]
    await store.send_all("rooms", [("SET", keys.room(code), b"record") for code in codes])
    leases = {}
    for code in codes:
        claim = await nodes.claim(code, "node-a", 60_000)
        assert claim.lease is not None
        leases[code] = claim.lease
    renewed = await nodes.renew(leases, 60_000)
    assert sorted(code for code, kept in renewed.items() if kept) == sorted(codes)
