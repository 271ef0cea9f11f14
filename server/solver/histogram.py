"""A survey's histograms as a PNG image, drawn with the standard library only.

Two panels: the search time per deal on log-scaled bins, stacked by verdict, and
the par of solved deals. Bars and axes are filled rectangles; labels use a built-in
3x5 pixel font drawn at twice its size. The PNG is written chunk by chunk (zlib for
the pixels and the checksums, struct for the fields): 8-bit RGB, no interlace.
"""

from __future__ import annotations

import math
import struct
import zlib
from collections.abc import Sequence
from typing import Final

from server.solver.statistics import DealRecord, Verdict

Color = tuple[int, int, int]

WHITE: Final[Color] = (255, 255, 255)
BLACK: Final[Color] = (0, 0, 0)
GRID: Final[Color] = (225, 225, 225)
VERDICT_COLORS: Final[dict[Verdict, Color]] = {
    Verdict.SOLVED: (46, 150, 70),
    Verdict.UNWINNABLE: (205, 60, 50),
    Verdict.UNKNOWN: (160, 160, 160),
}
PAR_COLOR: Final[Color] = (50, 100, 190)

# fmt: off
#: A 3x5 pixel font: five rows of three columns per character, "#" = ink.
FONT: Final[dict[str, tuple[str, str, str, str, str]]] = {
    "0": ("###", "#.#", "#.#", "#.#", "###"), "1": (".#.", "##.", ".#.", ".#.", "###"),
    "2": ("##.", "..#", ".#.", "#..", "###"), "3": ("##.", "..#", ".#.", "..#", "##."),
    "4": ("#.#", "#.#", "###", "..#", "..#"), "5": ("###", "#..", "##.", "..#", "##."),
    "6": (".##", "#..", "###", "#.#", "###"), "7": ("###", "..#", ".#.", ".#.", ".#."),
    "8": ("###", "#.#", "###", "#.#", "###"), "9": ("###", "#.#", "###", "..#", "##."),
    "A": (".#.", "#.#", "###", "#.#", "#.#"), "B": ("##.", "#.#", "##.", "#.#", "##."),
    "C": (".##", "#..", "#..", "#..", ".##"), "D": ("##.", "#.#", "#.#", "#.#", "##."),
    "E": ("###", "#..", "##.", "#..", "###"), "F": ("###", "#..", "##.", "#..", "#.."),
    "G": (".##", "#..", "#.#", "#.#", ".##"), "H": ("#.#", "#.#", "###", "#.#", "#.#"),
    "I": ("###", ".#.", ".#.", ".#.", "###"), "J": ("..#", "..#", "..#", "#.#", ".#."),
    "K": ("#.#", "#.#", "##.", "#.#", "#.#"), "L": ("#..", "#..", "#..", "#..", "###"),
    "M": ("#.#", "###", "###", "#.#", "#.#"), "N": ("##.", "#.#", "#.#", "#.#", "#.#"),
    "O": (".#.", "#.#", "#.#", "#.#", ".#."), "P": ("##.", "#.#", "##.", "#..", "#.."),
    "Q": (".#.", "#.#", "#.#", "##.", ".##"), "R": ("##.", "#.#", "##.", "#.#", "#.#"),
    "S": (".##", "#..", ".#.", "..#", "##."), "T": ("###", ".#.", ".#.", ".#.", ".#."),
    "U": ("#.#", "#.#", "#.#", "#.#", "###"), "V": ("#.#", "#.#", "#.#", "#.#", ".#."),
    "W": ("#.#", "#.#", "###", "###", "#.#"), "X": ("#.#", "#.#", ".#.", "#.#", "#.#"),
    "Y": ("#.#", "#.#", ".#.", ".#.", ".#."), "Z": ("###", "..#", ".#.", "#..", "###"),
    " ": ("...", "...", "...", "...", "..."), ".": ("...", "...", "...", "...", ".#."),
    ",": ("...", "...", "...", ".#.", "#.."), ":": ("...", ".#.", "...", ".#.", "..."),
    "-": ("...", "...", "###", "...", "..."), "/": ("..#", "..#", ".#.", "#..", "#.."),
    "(": (".#.", "#..", "#..", "#..", ".#."), ")": (".#.", "..#", "..#", "..#", ".#."),
    "%": ("#.#", "..#", ".#.", "#..", "#.#"),
}
# fmt: on

#: Drawn size of one font pixel, and the horizontal step from one character to the next.
SCALE: Final = 2
ADVANCE: Final = 4 * SCALE
TEXT_HEIGHT: Final = 5 * SCALE


class Canvas:
    """An RGB raster with the few drawing operations a histogram needs.

    Coordinates are pixels from the top-left corner; rectangles are clipped to the image.
    """

    def __init__(self, width: int, height: int, background: Color = WHITE) -> None:
        if width < 1 or height < 1:
            raise ValueError(f"an image needs a positive size, not {width}x{height}")
        self.width = width
        self.height = height
        self.pixels = bytearray(bytes(background) * (width * height))

    def fill(self, x0: int, y0: int, x1: int, y1: int, color: Color) -> None:
        """Paint the rectangle of columns ``x0..x1-1`` and rows ``y0..y1-1``."""
        x0, x1 = max(0, x0), min(self.width, x1)
        y0, y1 = max(0, y0), min(self.height, y1)
        if x0 >= x1:
            return
        run = bytes(color) * (x1 - x0)
        for y in range(y0, y1):
            start = (y * self.width + x0) * 3
            self.pixels[start : start + len(run)] = run

    def text(self, x: int, y: int, text: str, color: Color = BLACK) -> None:
        """Write ``text`` (upper-cased) with its top-left corner at ``x, y``.

        Raises ValueError for a character the font does not have.
        """
        for i, char in enumerate(text.upper()):
            glyph = FONT.get(char)
            if glyph is None:
                raise ValueError(f"the histogram font has no {char!r}")
            for row, bits in enumerate(glyph):
                for column, bit in enumerate(bits):
                    if bit == "#":
                        left, top = x + i * ADVANCE + column * SCALE, y + row * SCALE
                        self.fill(left, top, left + SCALE, top + SCALE, color)

    def png(self) -> bytes:
        """The image as a PNG file."""
        return png_bytes(self.width, self.height, bytes(self.pixels))


def text_width(text: str) -> int:
    """Pixels that :meth:`Canvas.text` covers horizontally for ``text``."""
    return len(text) * ADVANCE - SCALE if text else 0


def png_bytes(width: int, height: int, rgb: bytes) -> bytes:
    """A PNG file of ``rgb``: ``height`` rows of ``width`` pixels, 3 bytes each, top row first."""
    if len(rgb) != width * height * 3:
        raise ValueError(f"{len(rgb)} bytes are not a {width}x{height} RGB image")
    row = width * 3
    # Each scanline starts with its filter type; 0 = none (zlib does the compressing).
    raw = b"".join(b"\x00" + rgb[y * row : (y + 1) * row] for y in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8-bit RGB
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, 9)) + _chunk(b"IEND")


def _chunk(kind: bytes, data: bytes = b"") -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


# -- the survey's histograms --------------------------------------------------------

WIDTH: Final = 720
PANEL_HEIGHT: Final = 270
#: Left edge of the plot area (room for count labels), and the right margin.
LEFT: Final = 56
RIGHT: Final = 16
#: Time bins per factor of ten, and the shortest time told apart (faster counts as this).
BINS_PER_DECADE: Final = 4
MIN_SECONDS: Final = 0.001


def survey_png(records: Sequence[DealRecord]) -> bytes:
    """The PNG of a survey's two histograms (empty axes where there is nothing to count)."""
    canvas = Canvas(WIDTH, 2 * PANEL_HEIGHT)
    _time_panel(canvas, records, top=0)
    _par_panel(canvas, [r.par for r in records if r.verdict is Verdict.SOLVED and r.par is not None], top=PANEL_HEIGHT)
    return canvas.png()


def _time_panel(canvas: Canvas, records: Sequence[DealRecord], top: int) -> None:
    canvas.text(LEFT, top + 10, "SEARCH TIME PER DEAL (SECONDS, LOG SCALE)")
    x = LEFT
    for verdict, color in VERDICT_COLORS.items():
        canvas.fill(x, top + 28, x + TEXT_HEIGHT, top + 28 + TEXT_HEIGHT, color)
        canvas.text(x + TEXT_HEIGHT + 6, top + 28, verdict.value)
        x += TEXT_HEIGHT + 6 + text_width(verdict.value) + 20
    if not records:
        _axes(canvas, top, [], [], "NO DEALS")
        return
    logs = [math.log10(max(r.seconds, MIN_SECONDS)) for r in records]
    low = math.floor(min(logs))
    # A search stops a little after its time budget: up to 12% past a power of ten
    # still counts in the last bin, rather than opening an empty decade.
    high = max(math.ceil(max(logs) - 0.05), low + 1)
    bins = (high - low) * BINS_PER_DECADE
    stacks = [dict.fromkeys(VERDICT_COLORS, 0) for _ in range(bins)]
    for record, value in zip(records, logs, strict=True):
        index = min(bins - 1, int((value - low) * BINS_PER_DECADE))
        stacks[index][record.verdict] += 1
    labels = [(decade * BINS_PER_DECADE, _decade_text(low + decade)) for decade in range(high - low + 1)]
    _axes(canvas, top, [[(VERDICT_COLORS[v], n) for v, n in stack.items()] for stack in stacks], labels)


def _par_panel(canvas: Canvas, pars: Sequence[int], top: int) -> None:
    canvas.text(LEFT, top + 10, "PAR OF SOLVED DEALS (MOVES)")
    if not pars:
        _axes(canvas, top, [], [], "NO SOLVED DEALS")
        return
    # Show at least 20 moves around the values, so a lone par is a bar and not a wall.
    low, high = min(pars), max(pars)
    span = max(high - low + 1, 20)
    low = max(0, (low + high + 1) // 2 - span // 2)
    high = max(high, low + span - 1)
    # At most about 40 bars, each a whole number of moves wide, starting at a multiple.
    width = max(1, math.ceil((high - low + 1) / 40))
    first = low // width * width
    bins = (high - first) // width + 1
    counts = [0] * bins
    for par in pars:
        counts[(par - first) // width] += 1
    # A label every few bins, so that labels never touch (about 48 pixels apart at least).
    plot_width = WIDTH - LEFT - RIGHT
    every = max(1, math.ceil(48 / (plot_width / bins)))
    labels = [(i, str(first + i * width)) for i in range(0, bins + 1, every)]
    _axes(canvas, top, [[(PAR_COLOR, n)] for n in counts], labels)


def _axes(
    canvas: Canvas,
    top: int,
    stacks: Sequence[Sequence[tuple[Color, int]]],
    labels: Sequence[tuple[int, str]],
    empty_text: str = "",
) -> None:
    """Bars (each a stack of coloured counts) over a count axis and labelled bin edges.

    ``labels`` pairs a bin edge (0 = left edge of the first bin) with its text;
    ``empty_text`` is written in the middle of the plot when there are no bars.
    """
    plot_top, plot_bottom = top + 52, top + PANEL_HEIGHT - 30
    plot_left, plot_right = LEFT, WIDTH - RIGHT
    tallest = max((sum(n for _, n in stack) for stack in stacks), default=0)
    scale_max = max(1, tallest)
    for fraction in (0.25, 0.5, 0.75, 1.0):
        y = plot_bottom - round((plot_bottom - plot_top) * fraction)
        canvas.fill(plot_left, y, plot_right, y + 1, GRID)
    if not stacks:
        middle = (plot_left + plot_right - text_width(empty_text)) // 2
        canvas.text(middle, (plot_top + plot_bottom - TEXT_HEIGHT) // 2, empty_text)
    else:
        bar_width = (plot_right - plot_left) / len(stacks)
        for i, stack in enumerate(stacks):
            x0 = plot_left + round(i * bar_width) + 1
            x1 = plot_left + round((i + 1) * bar_width) - 1
            base = 0
            for color, count in stack:
                y_low = plot_bottom - round((plot_bottom - plot_top) * base / scale_max)
                base += count
                y_high = plot_bottom - round((plot_bottom - plot_top) * base / scale_max)
                canvas.fill(x0, y_high, max(x1, x0 + 1), y_low, color)
        for edge, text in labels:
            x = plot_left + round(edge * bar_width)
            canvas.fill(x, plot_bottom, x + 1, plot_bottom + 5, BLACK)
            left = min(max(0, x - text_width(text) // 2), canvas.width - text_width(text))
            canvas.text(left, plot_bottom + 8, text)
    # Axes last, over the bars' ends; counts at the bottom and the top of the scale.
    canvas.fill(plot_left - 1, plot_top, plot_left, plot_bottom + 1, BLACK)
    canvas.fill(plot_left - 1, plot_bottom, plot_right, plot_bottom + 1, BLACK)
    for count, y in ((0, plot_bottom), (scale_max, plot_top)):
        text = str(count)
        canvas.text(plot_left - 6 - text_width(text), y - TEXT_HEIGHT // 2, text)
    canvas.text(4, plot_top - 24, "DEALS")


def _decade_text(exponent: int) -> str:
    """``0.001``, ``0.01``, ``0.1``, ``1``, ``10``, ``100``, ...: the value 10**exponent."""
    return f"{10.0**exponent:.{max(0, -exponent)}f}"
