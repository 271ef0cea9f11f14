"""What a finished race leaves behind: ratings (before it is stored, so its results show
them), statistics and daily boards (after it is stored, retried until Redis takes them).

Ratings are computed where the race result is made: :meth:`RaceRecorder.rate` completes the
finishing step with every racer's new rating before the step is stored, atomically and once
per race (:func:`~server.storage.ratings.rate_race_once`). Bots are never rated, and
practice rooms with a chosen deal never count toward statistics, best times or ratings.
Only accounts appear on boards: guests are rated (an account they register keeps the
rating) but kept off the rating board, and a ranked daily entry is an account's that is no
bot. Every finished race is remembered in its racers' recent races (for moderators), and a
ranked daily entry's move times are checked for anti-cheat signals
(:mod:`server.competition.move_timing`), which flag it for moderators and do nothing else.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

from server.clock import now_ms
from server.competition.move_timing import gaps, signals
from server.rooms.lifecycle import State
from server.rooms.room import Room
from server.rooms.step import Step
from server.storage.accounts import AccountStore
from server.storage.boards import Leaderboards
from server.storage.connection import Storage, StoreUnavailable
from server.storage.deals import DealStore
from server.storage.moderation import Flag, ModerationStore
from server.storage.ratings import rate_race_once
from server.storage.rooms import RoomStore

logger = logging.getLogger("server.results")

_RETRY_FIRST, _RETRY_MAX = 0.5, 30.0
_TRIES: Final = 12
#: Finished races recorded at once; the others wait their turn. Recording is background work
#: of a few round trips: unbounded, a burst of races ending (a saturated server) took every
#: pooled Redis connection, and players' own requests timed out waiting for one.
RECORDING_AT_ONCE: Final = 8


def counts(room: Room) -> bool:
    """Whether the room's races count toward statistics and ratings (not a chosen-deal practice)."""
    return room.record.options.deal is None


class RaceRecorder:
    """Records finished races in the boards and statistics of ``storage``."""

    def __init__(self, storage: Storage, boards: Leaderboards) -> None:
        self._storage = storage
        self._boards = boards
        self._accounts = AccountStore(storage)
        self._moderation = ModerationStore(storage)
        self._deals = DealStore(storage)
        self._rooms = RoomStore(storage)
        self._recording = asyncio.Semaphore(RECORDING_AT_ONCE)

    async def rate(self, room: Room, step: Step) -> None:
        """Add ratings to ``step``, which finishes ``room``'s race, if the race is rated: two or
        more racers who are not bots, not a daily challenge, not a practice."""
        record = step.record
        if record.daily is not None or not counts(room):
            return
        results = [r for r in step.outcome.results if not record.seats_by(r.seat).bot]
        if len(results) < 2:
            return
        players = [record.seats_by(r.seat).player for r in results]
        generations = await self._accounts.generations(players)
        accounts = {player for player, generation in zip(players, generations, strict=True) if generation}
        rated = await rate_race_once(
            self._storage,
            record.variant,
            f"{record.code}:{record.race}",
            players,
            [r.place for r in results],
            shown=accounts,
        )
        room.rate(
            step,
            {
                r.seat: (after.rating, after.rating - before.rating)
                for r, (before, after) in zip(results, rated, strict=True)
            },
        )

    async def started(self, room: Room) -> None:
        """Count a race ``room``'s racers started (not for daily attempts or practice)."""
        if room.record.daily is None and counts(room):
            await self._boards.races_started(room.record.variant, list(room.racers().values()))

    async def record(self, room: Room) -> None:
        """Statistics and the daily board for ``room``'s finished race, retried with backoff
        while storage is away."""
        if room.state is not State.FINISHED:
            return
        delay = _RETRY_FIRST
        for _ in range(_TRIES):
            try:
                async with self._recording:
                    await self._record(room)
                return
            except StoreUnavailable as error:
                logger.warning("room %s: results not recorded yet (%s); retrying in %.1f s", room.code, error, delay)
                await asyncio.sleep(delay)
                delay = min(_RETRY_MAX, delay * 2)
        logger.error("room %s: gave up recording the results of race %d", room.code, room.record.race)

    async def _record(self, room: Room) -> None:
        if counts(room):
            await self._count(room)
        # After the boards, which players wait to see; never retried (a retry would count
        # the race's results twice): moderators' records are worth less than that.
        record = room.record
        try:
            await self._moderation.add_races(list(room.racers().values()), record.code, record.race)
        except StoreUnavailable as error:
            logger.warning("room %s: race %d not listed in its racers' races: %s", room.code, record.race, error)

    async def _count(self, room: Room) -> None:
        record, boards = room.record, self._boards
        variant = record.variant
        players = room.racers()
        results = room.results()
        if record.daily is not None:
            if record.ranked and results and await self._on_boards(room, results[0].seat):
                first = results[0]
                game = room.game_of(first.seat)
                progress = game.progress() if game is not None else None
                player = players[first.seat]
                # Statistics before the board: whoever sees the entry on the board then sees it
                # counted in the player's statistics too. Both writes are idempotent, so a retry
                # after either one fails changes nothing twice.
                await boards.daily_result(variant, player, record.daily, first.finished, first.time_ms)
                await boards.record_daily(
                    variant,
                    record.daily,
                    player,
                    first.name,
                    first.finished,
                    first.time_ms,
                    first.moves,
                    first.home,
                    progress.ordered if progress is not None else 0,
                )
                logger.debug(
                    "daily %s %s: %s %s", variant, record.daily, first.name, "finished" if first.finished else "stopped"
                )
                try:
                    await self._check_timing(room, first.seat, player)
                except StoreUnavailable as error:
                    logger.warning("room %s: move times not checked: %s", room.code, error)
            return
        for result in results:
            won = result.place == 1 and result.finished
            await boards.race_result(variant, players[result.seat], result.finished, won, result.time_ms)

    async def _on_boards(self, room: Room, seat: int) -> bool:
        """Whether the racer in ``seat`` may appear on boards: an account, and no bot."""
        racer = room.record.seats_by(seat)
        return not racer.bot and bool(await self._accounts.generation(racer.player))

    async def _check_timing(self, room: Room, seat: int, player: str) -> None:
        """Flag the ranked daily entry of ``player`` if its move log looks machine-played."""
        record = room.record
        assert record.daily is not None
        logs = await self._rooms.logs(record.code, record.race)
        times = await self._rooms.move_times(record.code, record.race, seat)
        deal = await self._deals.daily(record.variant, record.daily)
        reasons = signals(logs.get(seat, []), times, deal.solution if deal is not None else ())
        if reasons:
            flag = Flag(record.variant, record.daily, player, record.code, record.race, reasons, gaps(times), now_ms())
            await self._moderation.flag(flag)
            logger.info("daily %s %s: %s's entry flagged for moderators", record.variant, record.daily, player)
