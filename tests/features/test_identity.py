"""Identity's log lines in a storage outage: each client's return and drop fails to be stored,
and a flood of them writes a few lines, one kind of failure not hiding another."""

from __future__ import annotations

import logging

import pytest

from server.features import identity
from server.ops.log_limits import LogLimiter
from server.storage.connection import StoreUnavailable
from tests.end_to_end.conftest import RunningServer, eventually, open_room

pytestmark = pytest.mark.asyncio


async def outage(*args: object) -> None:
    raise StoreUnavailable("storage unavailable: a test's outage")


async def test_an_outage_flood_of_returns_and_drops_writes_a_few_lines(
    server: RunningServer, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # A limiter of this test's own: another test's lines in this process hold back none of these.
    monkeypatch.setattr(identity, "_log", LogLimiter(identity.logger, clock=lambda: 0.0))  # time stands still
    caplog.set_level(logging.WARNING, logger="server.identity")
    race = await open_room(server, "antares")
    bob = race.racers[1]
    assert bob.player is not None
    assert bob.resume is not None
    guests = [await server.raw(f"Guest {n}") for n in range(100)]
    ctx = server.hub
    # The room cannot store a racer's return or drop.
    monkeypatch.setattr(ctx.rooms[race.code], "run", outage)
    for _ in range(50):  # Bob's second device comes back, and goes, 50 times
        again = await server.raw()
        await again.hello("Bob", resume=bob.resume)
        await again.close()
        await eventually(lambda: len(ctx.by_player.get(bob.player or "", ())) == 1, what="the device gone")
    # Nor can a closed connection be counted.
    monkeypatch.setattr(ctx.cluster, "connected", outage)
    for guest in guests:
        await guest.close()
    for racer in race.racers:
        await racer.close()
    await eventually(lambda: not ctx.links, what="every connection gone")

    lines = [r for r in caplog.records if r.name == "server.identity"]
    returns = [r for r in lines if "return not stored yet" in r.getMessage()]
    closes = [r for r in lines if "closed connection still counted" in r.getMessage()]
    drops = [r for r in lines if "drop not stored" in r.getMessage()]
    for kind in (returns, closes, drops):
        assert 1 <= len(kind) <= 2
        assert kind[0].levelno == logging.WARNING
    assert len(lines) == len(returns) + len(closes) + len(drops)
