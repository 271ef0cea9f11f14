"""Anti-cheat flags in Redis: newest first, the evidence kept, one flag per race; the admin
log, its lines of every version."""

from __future__ import annotations

import asyncio
import json

import msgspec
import pytest

from server.storage.connection import Storage
from server.storage.keys import Keys
from server.storage.moderation import AdminAction, Flag, ModerationStore

pytestmark = pytest.mark.asyncio


def flag(race: int, flagged: int = 1) -> Flag:
    return Flag(
        "antares",
        "2026-12-04",
        "ann",
        "ROOM",
        race,
        ["line: 20 of 20"],
        [200, 210],
        flagged,
        0.9,
        {"line": 1.0},
        "flagged",
        5,
    )


async def test_a_race_is_flagged_once_however_often_it_is_recorded(store: Storage) -> None:
    moderation = ModerationStore(store)
    assert await moderation.flag(flag(1))
    assert not await moderation.flag(flag(1, flagged=2))  # a retry: same race, a later time
    assert await moderation.flag(flag(12))  # race 1 is no prefix of race 12
    assert [f.race for f in await moderation.flags()] == [12, 1]
    assert (await moderation.flags())[1] == flag(1)


async def test_flags_written_before_the_score_read_as_noted(store: Storage) -> None:
    moderation = ModerationStore(store)
    old = {"game": "antares", "date": "2026-12-01", "player": "bob", "room": "R", "race": 1}
    old |= {"reasons": ["fast"], "gaps_ms": [5, 5], "flagged": 7}
    await store.redis.lpush(f"{store.prefix}flags", msgspec.json.encode(old))
    [read] = await moderation.flags()
    assert (read.verdict, read.score, read.parts, read.first_move_ms) == ("noted", 0.0, {}, None)


async def test_admin_actions_keep_the_os_user_and_host_and_old_lines_still_read(store: Storage) -> None:
    moderation = ModerationStore(store)
    key = Keys(store.prefix).admin_log()
    await store.redis.lpush(key, json.dumps({"who": "bob", "when": 1, "action": "ban", "target": "p1", "detail": "x"}))
    await moderation.log_action(AdminAction("alice", 2, "unban", "p1", os_user="root", host="box"))
    # A line of a later version, with a field this one does not know.
    later = {"who": "cleo", "when": 3, "action": "ban", "target": "p2", "os_user": "cleo", "host": "box", "new": 1}
    await store.redis.lpush(key, json.dumps(later))
    assert await moderation.actions() == [
        AdminAction("cleo", 3, "ban", "p2", os_user="cleo", host="box"),
        AdminAction("alice", 2, "unban", "p1", os_user="root", host="box"),
        AdminAction("bob", 1, "ban", "p1", "x"),
    ]


async def test_a_race_is_listed_once_in_each_racers_races_however_often_recorded(store: Storage) -> None:
    moderation = ModerationStore(store)
    await moderation.add_races(["ann", "bob"], "ROOM", 1)
    await moderation.add_races(["ann"], "ROOM", 2)
    await asyncio.gather(moderation.add_races(["ann", "bob"], "ROOM", 1), moderation.add_races(["ann"], "ROOM", 1))
    # Recorded again (a retry, another node's), concurrently too: neither repeated nor moved up.
    assert await moderation.races("ann") == [("ROOM", 2), ("ROOM", 1)]
    assert await moderation.races("bob") == [("ROOM", 1)]
