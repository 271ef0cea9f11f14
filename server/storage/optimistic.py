"""Change one stored msgpack value atomically: read it under WATCH, decide, write it back, and
try again if another writer came first (an optimistic transaction on one key, so one Cluster
slot). What the challenges and brackets are stored with."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final, TypeVar

import msgspec
from redis.exceptions import WatchError

from server.storage.connection import Storage, StoreUnavailable, as_bytes

_TRIES: Final = 16
T = TypeVar("T")
_encoder = msgspec.msgpack.Encoder()


async def change_stored(
    storage: Storage, key: str, decoder: msgspec.msgpack.Decoder[T], change: Callable[[T], T | None], what: str
) -> T | None:
    """Apply ``change`` to the value stored at ``key`` and store its result (None: nothing
    to store), keeping the key's expiry; the value as stored after, or None if there is none.
    :class:`StoreUnavailable` if Redis fails, or other writers keep coming first."""
    with storage.guard(what):
        for _ in range(_TRIES):
            async with storage.transaction(key) as pipe:
                await pipe.watch(key)
                raw = await pipe.get(key)
                if raw is None:
                    return None
                current = decoder.decode(as_bytes(raw))
                changed = change(current)
                if changed is None:
                    return current
                pipe.multi()  # type: ignore[no-untyped-call]
                pipe.set(key, _encoder.encode(changed), keepttl=True)
                try:
                    await pipe.execute()
                except WatchError:
                    continue
                return changed
    raise StoreUnavailable(f"storage busy: could not {what}")
