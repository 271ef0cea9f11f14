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
