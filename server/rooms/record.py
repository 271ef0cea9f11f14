"""What a room keeps in storage: enough, with the move logs, to rebuild it exactly."""

from __future__ import annotations

import enum

import msgspec

from protocol.messages import RoomOptions, RoomState, Variant
from server.rooms.ghost import GhostRun


def wants_winnable(variant: Variant, options: RoomOptions) -> bool:
    """Whether the room's races get deals the solver certified winnable: its ``winnable``
    option, by default on for Scorpion (most deals are lost) and off for Antares (all but
    a few are won); never in a practice room on a chosen deal."""
    winnable = options.winnable if options.winnable is not None else variant == "scorpion"
    return winnable and options.deal is None


def certified_of(record: RoomRecord) -> bool | None:
    """What the room says of its race's deal: certified winnable or not, in a room that
    wants winnable deals and once the deal is drawn (it has a commitment); else None."""
    if record.commitment is None or not wants_winnable(record.variant, record.options):
        return None
    return record.certified


class SeatStatus(enum.Enum):
    """Where a racer stands in the room's current race; one value instead of several flags."""

    NOT_READY = "not-ready"  # also a racer the creator started without their saying ready
    READY = "ready"  # said ready; stays so through the race until they finish or resign
    FINISHED = "finished"
    RESIGNED = "resigned"

    @property
    def done(self) -> bool:
        """Finished or resigned: out of the race, sees every board."""
        return self in (SeatStatus.FINISHED, SeatStatus.RESIGNED)


class SeatRecord(msgspec.Struct, omit_defaults=True):
    """A racer's seat. Their moves are in the seat's move log, not here."""

    seat: int
    player: str
    name: str
    status: SeatStatus = SeatStatus.NOT_READY
    #: With :attr:`SeatStatus.FINISHED`: the server-measured time.
    finished_ms: int | None = None
    #: With :attr:`SeatStatus.RESIGNED`: why ("resigned", "disconnected", "left").
    resigned: str | None = None
    #: Left the room after their race was over: not in the next one.
    left: bool = False
    #: A bot said so in its hello: never rated, marked in results.
    bot: bool = False
    #: The room's ghost (:mod:`server.rooms.ghost`): it plays ``RoomRecord.ghost``.
    ghost: bool = False


class RoomRecord(msgspec.Struct, omit_defaults=True):
    """A room's stored record. ``deal`` and ``salt`` are secret until the race ends."""

    code: str
    variant: Variant
    options: RoomOptions
    creator: str
    created: int
    state: RoomState
    race: int = 1
    version: int = 0
    seats: list[SeatRecord] = msgspec.field(default_factory=list)
    deal: str | None = None
    #: The deal the next countdown will use (a certified winnable one, or the daily deal);
    #: secret like ``deal``. Without it the countdown draws a random deal.
    next_deal: str | None = None
    #: The salt that goes with ``next_deal`` when its commitment was published beforehand
    #: (a daily deal's); otherwise each race draws a new salt.
    next_salt: str | None = None
    #: A daily-challenge room: the day (YYYY-MM-DD) and whether the attempt is ranked.
    daily: str | None = None
    ranked: bool = False
    #: The race's deal was prepared (``next_deal``: the solver certified it winnable).
    certified: bool = False
    #: Rating after the race and its change, by seat (set when a rated race ends).
    ratings: dict[int, tuple[float, float]] = msgspec.field(default_factory=dict)
    salt: str | None = None
    commitment: str | None = None
    countdown_ends: int | None = None
    started: int | None = None
    ends: int | None = None
    finished: int | None = None
    #: A challenge's run (:mod:`server.competition.challenges`): its run tag,
    #: ``<challenge id>/<side>/rated|unrated`` (a bare id in rooms stored before; read with
    #: ``read_run_tag``). Its deal stays secret, and its race one attempt, like a daily's.
    challenge: str | None = None
    #: A race of an arena tournament (:mod:`server.competition.arena`): ``<arena id>/<name>``
    #: (a bare id in rooms stored before; read with ``read_race_tag``).
    arena: str | None = None
    #: A run of a bracket's round (:mod:`server.competition.bracket`): ``<bracket id>/<round>``.
    #: Its deal stays secret until the round closes; one attempt.
    bracket: str | None = None
    #: A ghost race's recorded run, played in the ghost seat (:mod:`server.rooms.ghost`).
    ghost: GhostRun | None = None

    def seats_by(self, seat: int) -> SeatRecord:
        """The record of seat number ``seat`` (:class:`KeyError` if nobody holds it)."""
        for record in self.seats:
            if record.seat == seat:
                return record
        raise KeyError(seat)


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(RoomRecord)


def encode_record(record: RoomRecord) -> bytes:
    return _encoder.encode(record)


def decode_record(data: bytes) -> RoomRecord:
    return _decoder.decode(data)


def copy_record(record: RoomRecord) -> RoomRecord:
    """A copy to decide a command on without touching the original: every mutable part is
    copied (the seats and their records, the ratings); the rest is immutable and shared
    (strings, numbers, the frozen options). Field by field, not through an encoding: this
    runs for every command a room takes."""
    return msgspec.structs.replace(
        record,
        seats=[msgspec.structs.replace(seat) for seat in record.seats],
        ratings=dict(record.ratings),
    )
