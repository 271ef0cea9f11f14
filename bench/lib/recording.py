"""What spectators of some rooms received, as ``bench.fanout`` records it and
``bench.bare_broadcast`` plays it back (MessagePack-encoded in a file between the two)."""

from __future__ import annotations

import msgspec


class Recording(msgspec.Struct, frozen=True):
    """What spectators of some rooms received in a window of ``seconds``: per room, (offset, frame)."""

    seconds: float
    rooms: list[list[tuple[float, bytes]]]
