"""What a room keeps in storage: enough, with the move logs, to rebuild it exactly."""

from __future__ import annotations

import msgspec

from protocol.messages import RoomOptions


class SeatRecord(msgspec.Struct, omit_defaults=True):
    """A racer's seat. Their moves are in the seat's move log, not here."""

    seat: int
    player: str
    name: str
    ready: bool = False
    finished_ms: int | None = None
    resigned: str | None = None  # why: "resigned", "disconnected", "left"
    #: Left the room after their race was over: not in the next one.
    left: bool = False


class RoomRecord(msgspec.Struct, omit_defaults=True):
    """A room's stored record. ``deal`` and ``salt`` are secret until the race ends."""

    code: str
    variant: str
    options: RoomOptions
    creator: str
    created: int
    state: str
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
    #: Rating after the race and its change, by seat (set when a rated race ends).
    ratings: dict[int, tuple[float, float]] = msgspec.field(default_factory=dict)
    salt: str | None = None
    commitment: str | None = None
    countdown_ends: int | None = None
    started: int | None = None
    ends: int | None = None
    finished: int | None = None


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(RoomRecord)


def encode_record(record: RoomRecord) -> bytes:
    return _encoder.encode(record)


def decode_record(data: bytes) -> RoomRecord:
    return _decoder.decode(data)
