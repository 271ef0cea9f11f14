"""What a finished race leaves behind: ratings (before it is stored, so its results show
them), statistics and daily boards (after it is stored, retried until Redis takes them).

Ratings are computed where the race result is made: :meth:`RaceRecorder.rate` completes the
finishing step with every racer's new rating before the step is stored, atomically and once
per race (:func:`~server.storage.ratings.rate_race_once`). Bots are never rated, and
practice rooms with a chosen deal, and the runs of challenges and bracket rounds, never count
toward statistics, best times or ratings (a challenge rates its two runs itself). Only
accounts appear on boards: guests are rated (an account they register keeps the rating) but
kept off the rating board, and a ranked daily entry is an account's that is no bot. Every
finished race is remembered in its racers' recent races (for moderators).

Before a ranked daily entry goes on the board, its log is judged
(:mod:`server.competition.studied`: the solver's line, exploration, pace against the
player's own earlier races, the first move's delay). An entry that looks studied is flagged
for moderators with the evidence and held back (:mod:`server.storage.held`), out of the
statistics too, until one clears it; one played at machine speed is flagged and never
counted. The judgement reads only what was stored by the race's end (the player's races
over before it began), so a retried recording judges the same, and a held entry is never
recorded, however asked.

Nothing a race's end leaves behind is lost with the node that ran it: the race is noted as
unrecorded (:mod:`server.storage.unrecorded`) before its finishing step is stored, and cleared
once all of the above is recorded. A note left behind (the node died, or gave up retrying) is
taken up by the node holding the recorder lease (:meth:`RaceRecorder.record_left_over`), which
rebuilds the finished race from storage and records it again: every part is idempotent, so
it counts once. A note that cannot be recorded (a bug) is kept, due again later, without
holding up the others, for up to :data:`GIVE_UP_MS`. The runner hands over the room as it
finished (:meth:`Room.as_of_now`), so a retry after the racers started a rematch still records
the race that ended.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Final

import msgspec

from server.clock import now_ms
from server.competition.move_timing import gaps, play_times
from server.competition.studied import Judgement, Verdict, assess
from server.games import Autoplay, Options, variant_class
from server.live.arena_results import ArenaResults
from server.live.bracket_runs import BracketRuns
from server.live.challenge_runs import ChallengeRuns
from server.ops.log_limits import LogLimiter
from server.rooms.entries import parse_entry
from server.rooms.ghost import ghost_options, run_of
from server.rooms.lifecycle import State
from server.rooms.record import RoomRecord, SeatRecord, SeatStatus, decode_record
from server.rooms.room import Room
from server.rooms.step import Step
from server.storage.accounts import AccountStore
from server.storage.best_runs import BestRun, BestRuns
from server.storage.boards import Leaderboards
from server.storage.connection import Storage, StoreUnavailable
from server.storage.deals import DealStore
from server.storage.held import Held, HeldEntries
from server.storage.moderation import Flag, ModerationStore
from server.storage.race_counts import RaceCounts, RaceResult
from server.storage.ratings import rate_race_once
from server.storage.rooms import RoomStore
from server.storage.unrecorded import Noted, UnrecordedRaces

logger = logging.getLogger("server.results")
#: A burst of races ending during an outage (or a dead node's left over) logs a few lines.
_log = LogLimiter(logger)

_RETRY_FIRST, _RETRY_MAX = 0.5, 30.0
_TRIES: Final = 12
#: Finished races recorded at once; the others wait their turn. Recording is background work
#: of a few round trips: unbounded, a burst of races ending (a saturated server) took every
#: pooled Redis connection, and players' own requests timed out waiting for one.
RECORDING_AT_ONCE: Final = 8
#: A player's earlier races read for their pace norm, at most (two reads each).
HISTORY_RACES: Final = 8
#: Races left unrecorded taken up at once by :meth:`RaceRecorder.record_left_over`.
LEFT_OVER_AT_ONCE: Final = 16
#: A race left unrecorded this long (ms) is given up (its logs may be gone).
GIVE_UP_MS: Final = 86_400_000


def counts(room: Room) -> bool:
    """Whether the room's races count toward statistics and ratings: not a chosen-deal
    practice, nor a challenge's or a bracket round's run (their results are the challenge's
    and the bracket's; in a player's statistics they would tell a rival they ended)."""
    record = room.record
    return record.options.deal is None and record.challenge is None and record.bracket is None


class RaceRecorder:
    """Records finished races in the boards and statistics of ``storage``."""

    def __init__(self, storage: Storage, boards: Leaderboards) -> None:
        self._storage = storage
        self._boards = boards
        self._accounts = AccountStore(storage)
        self._moderation = ModerationStore(storage)
        self._deals = DealStore(storage)
        self._rooms = RoomStore(storage)
        self._held = HeldEntries(storage)
        self._runs = BestRuns(storage)
        self._challenges = ChallengeRuns(storage)
        self._arenas = ArenaResults(storage)
        self._brackets = BracketRuns(storage)
        self._counts = RaceCounts(storage)
        self._unrecorded = UnrecordedRaces(storage)
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

    async def note(self, room: Room, step: Step) -> Noted:
        """Note ``step``, which finishes ``room``'s race, as unrecorded: call before storing
        it (:class:`StoreUnavailable` if Redis is away: then store nothing)."""
        return await self._unrecorded.note(room.code, step.record.race, now_ms())

    async def record(self, room: Room, noted: Noted | None = None) -> None:
        """Everything ``room``'s finished race leaves behind, retried with backoff while
        storage is away; then ``noted`` (its note as unrecorded) is cleared. Each attempt
        first puts the note off (no other node records the race meanwhile). ``room`` is the
        room as its race finished (:meth:`Room.as_of_now`), not the live room, which a
        rematch would move on while this waits."""
        if room.state is not State.FINISHED:
            return
        race = room.record.race
        delay = _RETRY_FIRST
        for _ in range(_TRIES):
            try:
                async with self._recording:
                    if noted is not None:
                        await self._unrecorded.put_off(noted, now_ms())
                    await self._record(room)
                    if noted is not None:
                        await self._unrecorded.done(noted)
                return
            except StoreUnavailable as error:
                _log.log(
                    logging.WARNING,
                    "not-recorded",
                    "room %s: results not recorded yet (%s); retrying in %.1f s",
                    room.code,
                    error,
                    delay,
                )
                await asyncio.sleep(delay)
                delay = min(_RETRY_MAX, delay * 2)
        _log.log(logging.ERROR, "left-over", "room %s: race %d not recorded; left to the recorder", room.code, race)

    async def record_left_over(self, now: int) -> int:
        """Record the finished races noted as unrecorded and due at ``now`` (their node died
        or gave up), each rebuilt from storage; how many were recorded. A note whose race
        was never stored as finished (its node died first: whoever finishes it notes it
        again) or is older than :data:`GIVE_UP_MS` is dropped."""
        recorded = 0
        for noted in await self._unrecorded.take_due(now, LEFT_OVER_AT_ONCE):
            try:
                room = await self._finished_room(noted) if now - noted.noted < GIVE_UP_MS else None
                if room is not None:
                    async with self._recording:
                        await self._record(room)
                    recorded += 1
                    _log.log(
                        logging.WARNING,
                        "recorded-late",
                        "room %s: race %d recorded for the node that ran it",
                        noted.code,
                        noted.race,
                    )
                await self._unrecorded.done(noted)
            except StoreUnavailable:
                raise  # Redis is away: every note waits, due again later
            except Exception:
                # This note alone: it is due again later, the others are recorded now.
                _log.exception("left-over-failed", "room %s: race %d could not be recorded", noted.code, noted.race)
        return recorded

    async def _finished_room(self, noted: Noted) -> Room | None:
        """``noted``'s race as it finished, rebuilt from its stored record and logs."""
        raw = await self._rooms.finished_race(noted.code, noted.race)
        record = None if raw is None else decode_record(raw)
        if record is None or record.state != State.FINISHED.value:
            return None
        logs = await self._rooms.logs(noted.code, noted.race)
        entries = {seat: [parse_entry(text) for text in texts] for seat, texts in logs.items()}
        return Room.restore(record, entries, now_ms())

    async def _record(self, room: Room) -> None:
        if counts(room):
            await self._count(room)
        await self._keep_best_runs(room.record)
        await self._challenges.record(room)
        await self._arenas.record(room)
        await self._brackets.record(room)
        record = room.record
        await self._moderation.add_races(list(room.racers().values()), record.code, record.race)

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
                ordered = progress.ordered if progress is not None else 0
                entry = Held(first.name, first.finished, first.time_ms, first.moves, first.home, ordered, now_ms())
                if not await self._admit(room, first.seat, player, entry):
                    return
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
                    ordered,
                )
                logger.debug(
                    "daily %s %s: %s %s", variant, record.daily, first.name, "finished" if first.finished else "stopped"
                )
            return
        counted = [
            RaceResult(players[r.seat], r.finished, r.place == 1 and r.finished, r.time_ms if r.finished else None)
            for r in results
        ]
        await self._counts.count(variant, f"{record.code}:{record.race}", counted)

    async def _keep_best_runs(self, record: RoomRecord) -> None:
        """Keep each winner's run as their best on the deal if it is (for ghost races), the
        bots' too (a ghost of a bot is a fair rival); a ghost's run is its source's already."""
        winners = [s for s in record.seats if s.status is SeatStatus.FINISHED and not s.ghost]
        if not winners or record.deal is None or record.started is None or record.finished is None:
            return
        logs = await asyncio.gather(*(self._rooms.seat_log(record.code, record.race, s.seat) for s in winners))
        options = ghost_options(record.options, record.deal)
        for seat, (entries, times) in zip(winners, logs, strict=True):
            if len(times) != len(entries):
                continue  # a log stored without its times has no timing to replay
            source = f"{record.code}/{record.race}/{seat.seat}"
            run = run_of(seat.name, entries, list(times), record.started, record.finished, seat.finished_ms, source)
            await self._runs.save(record.variant, record.deal, BestRun(seat.player, run, options))

    async def _on_boards(self, room: Room, seat: int) -> bool:
        """Whether the racer in ``seat`` may appear on boards: an account, and no bot."""
        racer = room.record.seats_by(seat)
        return not racer.bot and bool(await self._accounts.generation(racer.player))

    async def _admit(self, room: Room, seat: int, player: str, entry: Held) -> bool:
        """Whether the ranked daily entry of ``player`` (in ``seat``) may go on the board: not
        if it is held already (a retry), nor if it is judged studied or machine-played, which
        flags it for moderators and holds it back. The flag goes first and is added once per
        race, so a retry after either write failed completes both."""
        record = room.record
        assert record.daily is not None
        if await self._held.held(record.variant, record.daily, player) is not None:
            return False
        judged, times = await self._judge(record, seat, player)
        if judged.verdict is Verdict.CLEAR:
            return True
        first = times[0] - record.started if times and record.started is not None else None
        flag = Flag(
            record.variant,
            record.daily,
            player,
            record.code,
            record.race,
            judged.reasons,
            gaps(times),
            now_ms(),
            judged.score,
            judged.parts,
            judged.verdict.value,
            first,
        )
        await self._moderation.flag(flag)
        if judged.verdict is Verdict.REFUSED:
            entry = msgspec.structs.replace(entry, refused=True)
        await self._held.hold(record.variant, record.daily, player, entry)
        logger.info(
            "daily %s %s: %s's entry %s (score %.2f)",
            record.variant,
            record.daily,
            player,
            judged.verdict.value,
            judged.score,
        )
        return False

    async def _judge(self, record: RoomRecord, seat: int, player: str) -> tuple[Judgement, list[int]]:
        """The anti-cheat judgement of the seat's log in ``record``'s race, and the times of
        its moves and undos. The replay runs in a thread: it is the engine's work for every
        entry (up to some 60 ms for the longest log), and the event loop serves everyone."""
        assert record.daily is not None
        assert record.deal is not None  # dealt at the countdown, kept in the finished record
        (entries, stored), deal, history = await asyncio.gather(
            self._rooms.seat_log(record.code, record.race, seat),
            self._deals.daily(record.variant, record.daily),
            self._history(record, player),
        )
        options = Options(autoplay=Autoplay(record.options.autoplay))
        lines = [deal.solution] if deal is not None else []
        judged = await asyncio.to_thread(
            assess, variant_class(record.variant), record.deal, options, entries, stored, record.started, lines, history
        )
        return judged, play_times(entries, stored)

    async def _history(self, record: RoomRecord, player: str) -> list[list[int]]:
        """The gaps between moves of ``player``'s latest races (up to :data:`HISTORY_RACES`)
        over before ``record``'s race began, so a retry reads the same ones; a last entry
        that resigned is left out (a resignation may come any time later)."""
        races = await self._moderation.races(player, HISTORY_RACES + 1)
        # Read together: on the pipelined connection they go to Redis in one round trip.
        records = await asyncio.gather(*(self._rooms.finished_race(code, race) for code, race in races))
        wanted: list[tuple[str, int, SeatRecord]] = []
        for (code, race), raw in zip(races, records, strict=True):
            other = None if raw is None else decode_record(raw)
            if other is None or other.finished is None or record.started is None or other.finished > record.started:
                continue
            racer = next((s for s in other.seats if s.player == player), None)
            if racer is not None:
                wanted.append((code, race, racer))
        wanted = wanted[:HISTORY_RACES]
        logs = await asyncio.gather(*(self._rooms.seat_log(code, race, racer.seat) for code, race, racer in wanted))
        return [
            gaps(times[:-1] if racer.resigned else times)
            for (_, _, racer), (_, times) in zip(wanted, logs, strict=True)
        ]
