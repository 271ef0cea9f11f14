"""A room read back from Redis: its record and its current race's move logs, replayed.

One road for every load: a room another node ran (a takeover), a room after a restart, and
a live room resynchronised after a write whose outcome is unknown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from server.clock import now_ms
from server.rooms.draft import DealPicker
from server.rooms.entries import parse_entry
from server.rooms.record import RoomRecord, decode_record
from server.rooms.room import Room
from server.rooms.timing import RoomTiming
from server.storage.connection import StoreUnavailable
from server.storage.rooms import RoomStorePort

#: Reads of a room during one load before giving up on its changing under us.
READS: Final = 5


async def load_room(
    store: RoomStorePort,
    code: str,
    deal_picker: DealPicker,
    timing: Callable[[RoomRecord], RoomTiming],
    present: frozenset[int] = frozenset(),
    spectators: int = 0,
    now: Callable[[], int] = now_ms,
) -> Room | None:
    """Room ``code`` as Redis holds it, rebuilt at ``now()`` (see :meth:`Room.restore` for
    ``present`` and ``spectators``); None if Redis has no such room. ``timing`` gives a room's
    durations from its record (a daily attempt's grace period is longer). The record and the logs are
    two reads, and a write whose reply was lost may land between them: they are read again
    until the version is the same before and after the logs (:class:`StoreUnavailable` if it
    keeps changing, or Redis is away)."""
    for _ in range(READS):
        stored = await store.load(code)
        if stored is None:
            return None
        record = decode_record(stored.record)
        record.version = max(record.version, stored.version)
        logs = await store.logs(code, record.race)
        again = await store.load(code)
        if again is not None and again.version == stored.version:
            break
    else:
        raise StoreUnavailable(f"room {code} kept changing in storage while it was loaded")
    entries = {seat: [parse_entry(text) for text in texts] for seat, texts in logs.items()}
    return Room.restore(record, entries, now(), deal_picker, timing(record), present, spectators)
