"""Helpers of the end-to-end tests, which run a real race server in this process (the
``start_server``, ``server`` and ``slow_countdown_server`` fixtures of tests/conftest.py) and
talk to it over real websockets: :class:`RawClient` (a bare client that keeps every frame it
receives, and can send anything), :func:`eventually`, :func:`start_race` (two racers from a
new room to the first move), and ways to set up accounts and daily entries behind the
server's back.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import msgspec

from client.lib.connection import RaceClient
from protocol.messages import CreateRoom, Joined, JoinRoom, Ready, RoomOptions, RoomView, ServerMessage, Update, Variant
from protocol.mirror import RoomMirror
from server.clock import now_ms
from server.competition.daily import day_start_ms, utc_date
from server.storage.connection import Storage
from server.storage.held import HeldEntries, Released
from server.storage.keys import Keys
from tests.in_process_server import RawClient as RawClient
from tests.in_process_server import RunningServer as RunningServer
from tests.in_process_server import ServerFactory as ServerFactory
from tests.polling import COUNTDOWN as COUNTDOWN
from tests.polling import LONG_COUNTDOWN as LONG_COUNTDOWN
from tests.polling import PATIENCE as PATIENCE
from tests.polling import eventually as eventually
from tests.polling import eventually_async


def board_lists(piles: Any) -> list[list[int | None]]:
    """A board (engine public piles or a wire board) as lists, for comparison."""
    return [list(pile) for pile in piles]


def without_clock(view: RoomView) -> RoomView:
    """A view without its clock (``clock.now`` is the time the view was made)."""
    return msgspec.structs.replace(view, clock=msgspec.structs.replace(view.clock, now=0))


async def registered_before_today(storage: Storage, player: str) -> None:
    """Date ``player``'s account back to yesterday: today's daily deal is played by accounts
    registered before the day began (server/features/daily.py), and tests register on the day."""
    key = Keys(storage.prefix).account(player)
    assert await storage.redis.exists(key), f"{player} is no account"
    await storage.redis.hset(key, "created", day_start_ms(utc_date(now_ms())) - 1)


#: Seconds between a test's moves of a ranked daily attempt: above the machine speed the
#: anti-cheat check refuses outright (server/competition/move_timing.py). Tests skip them on
#: the rooms' clock (:class:`tests.doubles.clock.AheadClock`) rather than wait them out.
PERSON_PACE = 0.16


async def cleared_by_a_moderator(storage: Storage, game: str, player: str) -> None:
    """Clear ``player``'s ranked daily entry of today once the anti-cheat check has held it:
    a test replays the day's solution, which it holds as studied, as ``admin clear-flag`` would."""
    held, date = HeldEntries(storage), utc_date(now_ms())

    async def release() -> Released:
        return await held.release(game, date, player)

    await eventually_async(release, lambda released: released is Released.RELEASED)


# -- a race between two RaceClients ------------------------------------------------------


@dataclass
class Race:
    """Two racers in room ``code``, seat 0 and seat 1, racing."""

    code: str
    racers: tuple[RaceClient, RaceClient]

    def mirror(self, seat: int) -> RoomMirror:
        return self.racers[seat].rooms[self.code]


async def open_room(srv: RunningServer, variant: Variant, options: RoomOptions | None = None) -> Race:
    """Ann creates a room and Bob joins it (nobody ready yet)."""
    ann = await srv.connect("Ann")
    created = await ann.request(lambda i: CreateRoom(id=i, variant=variant, options=options or RoomOptions()))
    assert isinstance(created, Joined)
    assert created.seat == 0
    bob = await srv.connect("Bob")
    joined = await bob.request(lambda i: JoinRoom(id=i, room=created.room))
    assert isinstance(joined, Joined)
    assert joined.seat == 1
    return Race(created.room, (ann, bob))


async def ready_and_race(race: Race) -> None:
    """Both racers say ready; return once both see their own board dealt (after the countdown)."""
    for racer in race.racers:
        await racer.request(lambda i: Ready(id=i, room=race.code))
    await eventually(
        lambda: all(
            race.code in racer.rooms
            and racer.rooms[race.code].view().state == "racing"
            and racer.rooms[race.code].board(seat) is not None
            for seat, racer in enumerate(race.racers)
        ),
        what="both seats racing",
    )


async def start_race(srv: RunningServer, variant: Variant, options: RoomOptions | None = None) -> Race:
    race = await open_room(srv, variant, options)
    await ready_and_race(race)
    return race


def updates_of(messages: list[ServerMessage | None]) -> list[Update]:
    return [m for m in messages if isinstance(m, Update)]
