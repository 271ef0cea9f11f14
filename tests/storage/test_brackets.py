"""Brackets in a real Redis (server/storage/brackets.py): changes are atomic, so players
registering at once never overfill a bracket; brackets are listed from a time on."""

from __future__ import annotations

import asyncio

import msgspec
import pytest

from server.competition.bracket import Bracket, may_register
from server.storage.brackets import BracketStore
from server.storage.connection import Storage

pytestmark = pytest.mark.asyncio

T0 = 1_800_000_000_000


async def test_players_registering_at_once_never_overfill_a_bracket(store: Storage) -> None:
    brackets = BracketStore(store)
    await brackets.create(Bracket("BR", "scorpion", "Friday", T0, 4, 10), T0 - 1000)

    async def register(player: str) -> None:
        def adding(bracket: Bracket) -> Bracket | None:
            if may_register(bracket, player, T0 - 1) is not None:
                return None
            return msgspec.structs.replace(bracket, names={**bracket.names, player: player.upper()})

        await brackets.change("BR", adding)

    await asyncio.gather(*(register(f"p{n}") for n in range(10)))
    stored = await brackets.get("BR")
    assert stored is not None
    assert len(stored.names) == 4
    assert await brackets.change("NONE", lambda b: b) is None


async def test_brackets_are_listed_from_a_time_on(store: Storage) -> None:
    brackets = BracketStore(store)
    for code, starts in (("LATE", T0 + 60_000), ("EARLY", T0)):
        await brackets.create(Bracket(code, "antares", code, starts, 8, 5), T0)
    assert [b.id for b in await brackets.recent(T0)] == ["EARLY", "LATE"]
    assert [b.id for b in await brackets.recent(T0 + 1)] == ["LATE"]
