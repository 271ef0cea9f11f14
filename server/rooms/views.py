"""What a room shows: racer views, boards, progress, clock, results and the lobby summary.

Reading only: nothing here changes a room. Who sees which board is decided here (see
PROTOCOL.md, "Threat model"): boards are hidden until the race starts; during a race a
racer sees their own board and only the progress of rivals still racing; a racer who is
done, and every spectator, sees every board.
"""

from __future__ import annotations

from dataclasses import dataclass

import msgspec

from protocol.messages import (
    Clock,
    DailyTag,
    PileInfo,
    Progress,
    Racer,
    Result,
    Reveal,
    RoomSummary,
    RoomView,
)
from server.competition.arena import read_race_tag
from server.competition.challenges import read_run_tag
from server.competition.results import Standing, rank
from server.games import Game
from server.rooms.record import RoomRecord, SeatRecord, SeatStatus, certified_of


@dataclass(slots=True)
class Seat:
    """A racer's seat at run time: the stored record plus what is not stored (the board is
    rebuilt from the move log; presence is re-learnt from connections after a restart)."""

    record: SeatRecord
    game: Game | None = None
    plays: int = 0  # moves played this race, undone ones included
    connected: bool = True
    dropped_until: int | None = None
    #: Log entries of this race so far: a ghost's place in its run (kept for ghosts only).
    entries: int = 0

    @property
    def done(self) -> bool:
        return self.record.status.done


def progress_of(seat: Seat) -> Progress:
    if seat.game is None:
        return Progress(home=0, ordered=0, moves=0)
    progress = seat.game.progress()
    return Progress(home=progress.home, ordered=progress.ordered, moves=seat.plays, won=progress.won)


def racer_view(seat: Seat, board: list[list[int | None]] | None) -> Racer:
    record = seat.record
    return Racer(
        seat=record.seat,
        player=record.player,
        name=record.name,
        progress=progress_of(seat),
        ready=record.status is not SeatStatus.NOT_READY,
        connected=seat.connected,
        finished_ms=record.finished_ms if record.status is SeatStatus.FINISHED else None,
        resigned=record.resigned if record.status is SeatStatus.RESIGNED else None,
        board=board,
        bot=record.bot,
        ghost=record.ghost,
    )


def clock_of(record: RoomRecord, now: int) -> Clock:
    r = record
    return Clock(now=now, countdown_ends=r.countdown_ends, started=r.started, ends=r.ends, finished=r.finished)


def reveal_of(record: RoomRecord) -> Reveal | None:
    """The deal and salt, once the race is over; a daily challenge keeps its deal secret
    until the day ends (the day's reveal then comes with the daily information), a
    challenge's run until the challenge is over (its reveal comes in the inbox), a bracket
    round's run until the round closes (in the bracket's view)."""
    secret = record.daily is not None or record.challenge is not None or record.bracket is not None
    if record.deal is None or record.salt is None or secret:
        return None
    return Reveal(deal=record.deal, salt=record.salt)


def results_of(record: RoomRecord, seats: dict[int, Seat]) -> list[Result]:
    """The race's places, with each seat's rating once the race was rated."""
    standings = []
    for number, seat in seats.items():
        progress = progress_of(seat)
        finished = seat.record.finished_ms if seat.record.status is SeatStatus.FINISHED else None
        standings.append(Standing(number, seat.record.name, finished, seat.plays, progress.home, progress.ordered))
    ratings = record.ratings
    results = []
    for result in rank(standings):
        racer = seats[result.seat].record
        if result.seat in ratings:
            rating, change = ratings[result.seat]
            result = msgspec.structs.replace(result, rating=rating, rating_change=change)
        if racer.bot or racer.ghost:
            result = msgspec.structs.replace(result, bot=racer.bot, ghost=racer.ghost)
        results.append(result)
    return results


def room_view(
    record: RoomRecord,
    variant: type[Game],
    seats: dict[int, Seat],
    spectators: int,
    viewer: int | None,
    now: int,
    racing: bool,
) -> RoomView:
    """The room as the racer in seat ``viewer`` may see it, or (``None``) as a spectator.
    ``racing`` says whether that viewer is still in the race (so sees only their own board)."""
    boards_shown = record.state in ("racing", "finished")
    see_all = viewer is None or not racing
    racers = []
    for number in sorted(seats):
        seat = seats[number]
        board = None
        if boards_shown and seat.game is not None and (see_all or number == viewer):
            board = [list(pile) for pile in seat.game.public_piles()]
        racers.append(racer_view(seat, board))
    finished = record.state == "finished"
    # A challenge's run and an arena's race keep more than the id in their tag (the run's
    # side and rating, the arena's name): shown as fields of their own.
    challenge = read_run_tag(record.challenge) if record.challenge is not None else None
    arena, arena_name = read_race_tag(record.arena) if record.arena is not None else (None, None)
    return RoomView(
        code=record.code,
        variant=record.variant,
        # A practice room's chosen deal is the player's own choice: no secret to keep.
        options=record.options,
        state=record.state,
        creator=record.creator,
        piles=[PileInfo(spec.name, spec.kind.value) for spec in variant.PILES],
        racers=racers,
        spectators=spectators,
        clock=clock_of(record, now),
        race=record.race,
        commitment=record.commitment,
        reveal=reveal_of(record) if finished else None,
        results=results_of(record, seats) if finished else None,
        daily=None if record.daily is None else DailyTag(record.daily, record.ranked),
        certified=certified_of(record),
        challenge=challenge.challenge if challenge is not None else None,
        arena=arena,
        bracket=record.bracket.partition("/")[0] if record.bracket else None,
        challenge_side=challenge.side if challenge is not None else None,
        challenge_rated=challenge.rated if challenge is not None else None,
        arena_name=arena_name,
    )


def summary_of(record: RoomRecord, seats: dict[int, Seat], spectators: int) -> RoomSummary:
    return RoomSummary(
        code=record.code,
        variant=record.variant,
        state=record.state,
        racers=[seats[n].record.name for n in sorted(seats)],
        max_racers=record.options.max_racers,
        spectators=spectators,
        created=record.created,
    )
