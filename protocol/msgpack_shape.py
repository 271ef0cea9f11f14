"""The shape of a MessagePack frame, checked without decoding it: nesting depth, container
lengths and the number of values.

msgspec decodes nested containers recursively and raises ``RecursionError`` on a frame
nested about a thousand levels deep, and it builds every value of a frame before the
schema can refuse it. :func:`shape_error` bounds both for the price of a linear walk
over type bytes and lengths, building nothing. Most frames do not even need the walk:
one C-speed pass counts the bytes that could open a container, and a frame with few of
them cannot break a limit (see :func:`shape_error`).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Bytes that may open a map or array, marked: 1 for fixmap and fixarray (at most 15
#: entries each), 2 for the 16- and 32-bit array and map headers, 0 for any other byte
#: (which opens a scalar, or is payload). A ``translate`` table: one pass in C.
_MARKS = bytes(1 if 0x80 <= byte < 0xA0 else 2 if 0xDC <= byte < 0xE0 else 0 for byte in range(256))


@dataclass(frozen=True, slots=True)
class ShapeLimits:
    """How deep, how long and how big a frame may be.

    ``depth`` counts open containers (a flat map is depth 1); ``length`` is the most
    entries one map or array may hold (a map entry is a key and a value); ``values``
    is the most values of any kind, keys included, in the whole frame.
    """

    depth: int
    length: int
    values: int

    def __post_init__(self) -> None:
        # The shortcut in shape_error relies on these: a frame with at most ``depth``
        # fix-container bytes and no wide headers holds at most 1 + 30 * depth values.
        if self.length < 15 or self.values < 1 + 30 * self.depth:
            raise ValueError("length must be at least 15 and values at least 1 + 30 * depth")


def _uint(frame: bytes, start: int, size: int) -> int:
    return int.from_bytes(frame[start : start + size], "big")


def _scalar_sizes() -> list[int]:
    """By first byte, the whole size of a value whose size that byte tells (fixints, nil,
    booleans, numbers, fixext, fixstr); 0 for the others (containers, sized strings,
    binaries and extensions)."""
    sizes = [0] * 256
    for byte in [*range(0x80), *range(0xE0, 0x100), 0xC0, 0xC1, 0xC2, 0xC3]:
        sizes[byte] = 1  # fixints, nil, never-used (msgspec refuses it), false, true
    for byte in range(0xA0, 0xC0):
        sizes[byte] = 1 + (byte & 0x1F)  # fixstr
    fixed = {0xCA: 5, 0xCB: 9, 0xCC: 2, 0xCD: 3, 0xCE: 5, 0xCF: 9, 0xD0: 2, 0xD1: 3, 0xD2: 5, 0xD3: 9}
    fixed |= {0xD4: 3, 0xD5: 4, 0xD6: 6, 0xD7: 10, 0xD8: 18}  # fixext: type byte and data
    for byte, size in fixed.items():
        sizes[byte] = size
    return sizes


_SCALAR_SIZES = _scalar_sizes()
#: Strings, binaries and extensions with a length field, by their first byte:
#: (size of the length field, bytes between the length and the payload).
_SIZED: dict[int, tuple[int, int]] = {
    0xC4: (1, 0),
    0xC5: (2, 0),
    0xC6: (4, 0),  # bin 8-32
    0xD9: (1, 0),
    0xDA: (2, 0),
    0xDB: (4, 0),  # str 8-32
    0xC7: (1, 1),
    0xC8: (2, 1),
    0xC9: (4, 1),  # ext 8-32: the type byte follows the length
}
#: Wide container headers: (size of the length field, values per entry).
_WIDE: dict[int, tuple[int, int]] = {0xDC: (2, 1), 0xDD: (4, 1), 0xDE: (2, 2), 0xDF: (4, 2)}


def shape_error(frame: bytes, limits: ShapeLimits) -> str | None:
    """Why ``frame`` breaks ``limits``, or None if it does not (as far as it is MessagePack:
    a frame cut short or with bytes after its value is left for the decoder to refuse).

    Linear in the frame's size, and it stops at the first broken limit, so it reads at
    most ``limits.values`` values.
    """
    marks = frame.translate(_MARKS)
    if marks.count(1) <= limits.depth and 2 not in marks:
        # At most ``depth`` containers of at most 15 entries each: within every limit.
        return None
    return _walk(frame, limits)


def _walk(frame: bytes, limits: ShapeLimits) -> str | None:
    end = len(frame)
    position = 0
    values = 0
    #: Values still to read in the innermost open container (at first: the frame's one
    #: top-level value), and the same count for each enclosing one, outermost first.
    left = 1
    enclosing: list[int] = []
    while True:
        if left == 0:
            if not enclosing:
                return None
            left = enclosing.pop()
            continue
        left -= 1
        if position >= end:
            return None  # cut short: the decoder says so
        values += 1
        if values > limits.values:
            return f"a frame may hold at most {limits.values} values"
        first = frame[position]
        size = _SCALAR_SIZES[first]
        if size:
            position += size
            continue
        if first < 0xA0:  # fixmap, fixarray
            count = (first & 0x0F) * (2 if first < 0x90 else 1)
            position += 1
        elif first in _SIZED:
            width, gap = _SIZED[first]
            position += 1 + width + gap + _uint(frame, position + 1, width)
            continue
        else:
            width, per_entry = _WIDE[first]
            entries = _uint(frame, position + 1, width)
            if entries > limits.length:
                return f"a map or array may hold at most {limits.length} entries"
            count = entries * per_entry
            position += 1 + width
        if len(enclosing) >= limits.depth:  # this container would be one level too deep
            return f"a frame may nest at most {limits.depth} maps and arrays"
        if count:
            enclosing.append(left)
            left = count
