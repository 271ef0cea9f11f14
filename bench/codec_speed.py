"""What the shape check costs next to decoding, in ns per client frame.

Run: ``python -m bench.codec_speed [--seconds 0.5]``. Each row is one kind of frame:
``msgspec`` is the typed decode alone, ``before`` what decoding cost without the check (the
typed decode, then for a frame it refuses the schemaless decode that finds its id),
``shape`` the check alone, ``after`` :func:`protocol.codec.decode_client` (check, then
decode unless refused), and ``ratio`` shape / msgspec, all measured in the same run.
Typical frames take the check's one-pass shortcut; a non-ASCII name and the hostile frames
take the walk.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable

import msgspec

from protocol.codec import CLIENT_LIMITS, MalformedFrame, decode_client, encode
from protocol.messages import PROTOCOL_VERSION, ClientMessage, CreateRoom, Hello, ListRooms, PlayMove, RoomOptions
from protocol.msgpack_shape import shape_error

_raw_decoder = msgspec.msgpack.Decoder(ClientMessage)
_loose_decoder = msgspec.msgpack.Decoder()


def frames() -> list[tuple[str, bytes]]:
    """Named client frames: typical requests first, then hostile ones (all at most 16 KiB)."""
    options = RoomOptions(autoplay="all", max_racers=4, public=True, time_limit=600, spectator_delay=5)
    return [
        ("move", encode(PlayMove(id=1234, room="ABCD", move="QS>5"))),
        ("list_rooms", encode(ListRooms(id=7))),
        ("hello+resume", encode(Hello(id=1, protocol=PROTOCOL_VERSION, name="Ann", resume="ab" * 8 + "." + "c" * 32))),
        ("create_room+options", encode(CreateRoom(id=2, variant="antares", options=options))),
        ("hello, CJK name", encode(Hello(id=1, protocol=PROTOCOL_VERSION, name="\u4e00\u4e80\u4e8c" * 21))),
        ("deep bomb (16 KiB)", b"\x91" * 16_383 + b"\xc0"),
        ("too long an array", b"\xdc\x03\xff" + b"\x90" * 1023),
        ("241 values (walked)", b"\xdc\x00\x3c" + b"\x93\x90\x90\x90" * 60),
        ("16 KiB array of nil", b"\xdc\x3f\xfc" + b"\xc0" * 16_380),
    ]


def ns_per_call(operation: Callable[[bytes], object], frame: bytes, seconds: float) -> float:
    """Nanoseconds per call of ``operation(frame)``: the best mean of 100 calls seen in
    ``seconds`` (the best, so that other processes on a shared machine count least)."""
    best = float("inf")
    deadline = time.perf_counter_ns() + int(seconds * 1e9)
    while True:
        start = time.perf_counter_ns()
        for _ in range(100):
            operation(frame)
        now = time.perf_counter_ns()
        best = min(best, (now - start) / 100)
        if now > deadline:
            return best


def before(frame: bytes) -> object:
    """Decoding as it was without the shape check (protocol/codec.py before it)."""
    try:
        return _raw_decoder.decode(frame)
    except msgspec.ValidationError:
        with contextlib.suppress(msgspec.DecodeError, RecursionError):
            _loose_decoder.decode(frame)
    except (msgspec.DecodeError, RecursionError):
        pass
    return None


def quietly(decode: Callable[[bytes], object]) -> Callable[[bytes], object]:
    """``decode`` with its refusals (every error either decoder raises) swallowed."""

    def run(frame: bytes) -> object:
        try:
            return decode(frame)
        except (MalformedFrame, msgspec.DecodeError, RecursionError):
            return None

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=0.5, help="time per measurement")
    args = parser.parse_args()
    print(f"{'frame':<22} {'bytes':>6} {'msgspec':>9} {'before':>9} {'shape':>9} {'after':>9} {'ratio':>6}")
    for name, frame in frames():
        typed = ns_per_call(quietly(_raw_decoder.decode), frame, args.seconds)
        old = ns_per_call(before, frame, args.seconds)
        shape = ns_per_call(lambda f: shape_error(f, CLIENT_LIMITS), frame, args.seconds)
        after = ns_per_call(quietly(decode_client), frame, args.seconds)
        print(f"{name:<22} {len(frame):>6} {typed:>9.0f} {old:>9.0f} {shape:>9.0f} {after:>9.0f} {shape / typed:>6.2f}")
    print(f"ns per frame (best of repeated 100-call means); limits {CLIENT_LIMITS}.")
    print("Before the check, the deep bomb raised RecursionError (the handler's crash).")


if __name__ == "__main__":
    main()
