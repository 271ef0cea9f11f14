"""A board laid out and drawn as text, from the pile names and kinds the server sends.

Pure functions, no I/O and no rules: :func:`layout_for` places the piles (stock, cells
and foundations on a top row; the tableau below, with a divider where the pile kind
changes, as between Antares' in-suit and alternate-colour piles), and
:func:`render_board` draws one board with its marks (cursor, selection, hint) as a
``rich`` Text. The game, spectator and replay screens all draw boards with it.

A board drawn in fewer lines than its longest column needs is folded (:func:`windows`):
a column too long shows its last cards (the end a move takes from and goes to) under a
``+N`` line that stands for the N covered cards above them. When the cursor goes up into
the covered cards, that column shows the cursor's card instead, with ``+N`` lines above
and below it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from rich.style import Style
from rich.text import Text

from client.render.cards import SUIT_LETTERS, SUIT_SYMBOLS, card_label, is_red
from protocol.messages import PileInfo

Board = Sequence[Sequence[int | None]]

#: Kinds that hold a single row of piles above the tableau.
TOP_KINDS = ("stock", "cell", "foundation")

RED_CARD = Style(color="red3", bgcolor="grey93", bold=True)
BLACK_CARD = Style(color="black", bgcolor="grey93", bold=True)
CARD_BACK = Style(color="blue", bgcolor="dodger_blue3")
EMPTY = Style(color="grey50", dim=True)
NAME = Style(color="grey62")
CURSOR = Style(bgcolor="yellow", color="black", bold=True)
SELECTED = Style(bgcolor="green3", color="black", bold=True)
HINT = Style(bgcolor="magenta", color="white", bold=True)
TARGET = Style(bgcolor="cyan", color="black", bold=True)
FOLD = Style(color="grey70", bgcolor="grey23", bold=True)

#: The cards of a tableau pile drawn: ``(start, end)``, the indexes of the first card
#: drawn and one past the last. A ``+N`` line stands for the cards before ``start``, and
#: another for those from ``end`` on.
Window = tuple[int, int]


@dataclass(frozen=True, slots=True)
class Layout:
    """Where each pile goes: ``top`` and ``main`` list pile numbers left to right;
    ``foundations_at`` is the index in ``top`` of the first foundation (a gap goes before
    it), ``divider_at`` the index in ``main`` before which a divider is drawn."""

    top: tuple[int, ...]
    main: tuple[int, ...]
    foundations_at: int | None = None
    divider_at: int | None = None

    @property
    def order(self) -> tuple[int, ...]:
        """Every pile, top row first: the order the cursor walks."""
        return self.top + self.main


def layout_for(piles: Sequence[PileInfo]) -> Layout:
    top = [n for n, pile in enumerate(piles) if pile.kind in TOP_KINDS]
    # Stock and cells first, foundations last (at the right).
    top.sort(key=lambda n: (piles[n].kind == "foundation", n))
    main = [n for n, pile in enumerate(piles) if pile.kind not in TOP_KINDS]
    foundations_at = next((i for i, n in enumerate(top) if piles[n].kind == "foundation"), None)
    divider_at = next((i for i in range(1, len(main)) if piles[main[i]].kind != piles[main[i - 1]].kind), None)
    return Layout(tuple(top), tuple(main), foundations_at, divider_at)


@dataclass(frozen=True, slots=True)
class Marks:
    """What to highlight. Positions are ``(pile, index)`` with index from the bottom of the
    pile; ``-1`` marks an empty pile's place. ``selected`` covers that card and every card on it."""

    cursor: tuple[int, int] | None = None
    selected: tuple[int, int] | None = None
    hint: frozenset[tuple[int, int]] = field(default_factory=frozenset)
    target: int | None = None


def foundation_symbol(info: PileInfo) -> str:
    """The suit symbol for an empty foundation named after its suit (``hc`` -> ♣), else a blank."""
    letter = info.name[-1:].upper()
    return SUIT_SYMBOLS[SUIT_LETTERS.index(letter)] if letter and letter in SUIT_LETTERS else " "


def _name(info: PileInfo, cell: int) -> str:
    """A pile's name centred in ``cell`` columns, shortened when it does not fit (``stock``)."""
    name = info.name if len(info.name) <= cell else info.name[: cell - 2] + info.name[-1]
    return name.center(cell)


def _card(card: int | None) -> tuple[str, Style]:
    if card is None:
        return "▒▒▒", CARD_BACK
    return card_label(card), RED_CARD if is_red(card) else BLACK_CARD


def _mark(pile: int, index: int, size: int, marks: Marks) -> Style | None:
    """The highlight of the card at ``index`` (``-1`` for an empty place) of ``pile``."""
    if marks.cursor == (pile, index):
        return CURSOR
    if marks.selected is not None and marks.selected[0] == pile and index >= marks.selected[1] >= 0:
        return SELECTED
    if (pile, index) in marks.hint:
        return HINT
    if marks.target == pile and index == size - 1:
        return TARGET
    return None


def _slot(text: str, style: Style, width: int, mark: Style | None) -> Text:
    """``text`` (3 columns) centred in ``width`` columns."""
    pad = width - len(text)
    left = pad // 2
    return Text.assemble(" " * left, (text, mark or style), " " * (pad - left))


def _top_slot(info: PileInfo, pile: int, cards: Sequence[int | None], width: int, marks: Marks) -> Text:
    size = len(cards)
    index = size - 1 if cards else -1
    mark = _mark(pile, index, size, marks)
    if info.kind == "stock":
        # The stock is face down: show how many cards it holds, never which.
        return _slot(f"[{size}]" if size < 10 else f"{size:>3}", CARD_BACK if size else EMPTY, width, mark)
    if not cards:
        empty = f"[{foundation_symbol(info)}]" if info.kind == "foundation" else "[ ]"
        return _slot(empty, EMPTY, width, mark)
    text, style = _card(cards[-1])
    return _slot(text, style, width, mark)


def board_width(layout: Layout, cell: int = 5) -> int:
    return cell * len(layout.main) + (2 if layout.divider_at is not None else 0)


def _top_gap(layout: Layout, cell: int) -> int:
    """Columns left blank before the foundations, so that they end over the last column."""
    if layout.foundations_at is None or layout.foundations_at == 0:
        return 0
    return max(1, board_width(layout, cell) - cell * len(layout.top))


def header_lines(layout: Layout) -> int:
    """Lines drawn above the tableau's first card: the top row (names, cards, a blank
    line), if any, and the tableau's pile names."""
    return 4 if layout.top else 1


def windows(
    layout: Layout, board: Board, rows: int | None = None, focus: tuple[int, int] | None = None
) -> dict[int, Window]:
    """The cards of each tableau pile drawn when the tableau has ``rows`` lines for cards
    (None: as many as it needs). A longer column shows its last cards under a ``+N`` line;
    if ``focus`` (the cursor) is on a card that would be covered, that column shows it,
    with a ``+N`` line above and one below."""
    drawn: dict[int, Window] = {}
    for pile in layout.main:
        size = len(board[pile])
        if rows is None or size <= rows:
            drawn[pile] = (0, size)
            continue
        lines = max(rows, 3)  # at least a card between two folds
        start, end = size - (lines - 1), size
        if focus is not None and focus[0] == pile and 0 <= focus[1] < start:
            start = focus[1]
            end = start + lines - (2 if start > 0 else 1)
        drawn[pile] = (start, end)
    return drawn


def _column(size: int, window: Window) -> list[tuple[bool, int, int]]:
    """The lines of one tableau pile: ``(False, index, index + 1)`` for a card drawn,
    ``(True, first, end)`` for a ``+N`` line standing for cards ``first`` to ``end - 1``."""
    start, end = window
    lines = [(True, 0, start)] if start > 0 else []
    lines += [(False, index, index + 1) for index in range(start, end)]
    if end < size:
        lines.append((True, end, size))
    return lines


def _fold_mark(pile: int, first: int, end: int, size: int, marks: Marks) -> Style | None:
    """The highlight of a ``+N`` line: the selection, a hint or the target if it covers one."""
    if marks.selected is not None and marks.selected[0] == pile and marks.selected[1] < end:
        return SELECTED
    if any((pile, index) in marks.hint for index in range(first, end)):
        return HINT
    if marks.target == pile and end == size:
        return TARGET
    return None


def render_board(
    piles: Sequence[PileInfo],
    board: Board,
    layout: Layout | None = None,
    marks: Marks | None = None,
    cell: int = 5,
    rows: int | None = None,
    focus: tuple[int, int] | None = None,
) -> Text:
    """One board: pile names, the top row, then the tableau, one card a line per column.
    With ``rows``, the tableau takes at most that many lines (long columns folded, see
    :func:`windows`; the card at ``focus``, by default the cursor's, is always drawn)."""
    layout = layout or layout_for(piles)
    marks = marks or Marks()
    lines: list[Text] = []

    if layout.top:
        names, slots = Text(), Text()
        gap = _top_gap(layout, cell)
        for i, pile in enumerate(layout.top):
            if i == layout.foundations_at and i > 0:
                names.append(" " * gap)
                slots.append(" " * gap)
            names.append(_name(piles[pile], cell), NAME)
            slots.append(_top_slot(piles[pile], pile, board[pile], cell, marks))
        lines += [names, slots, Text()]

    names = Text()
    for i, pile in enumerate(layout.main):
        if i == layout.divider_at:
            names.append("│ ", NAME)
        names.append(_name(piles[pile], cell), NAME)
    lines.append(names)
    drawn = windows(layout, board, rows, focus if focus is not None else marks.cursor)
    columns = {pile: _column(len(board[pile]), drawn[pile]) for pile in layout.main}
    height = max((len(column) for column in columns.values()), default=0)
    for row in range(max(height, 1)):
        line = Text()
        for i, pile in enumerate(layout.main):
            if i == layout.divider_at:
                line.append("│ ", NAME)
            cards = board[pile]
            column = columns[pile]
            if row < len(column):
                folded, first, end = column[row]
                if folded:
                    line.append(_slot(f"+{end - first}", FOLD, cell, _fold_mark(pile, first, end, len(cards), marks)))
                else:
                    text, style = _card(cards[first])
                    line.append(_slot(text, style, cell, _mark(pile, first, len(cards), marks)))
            elif row == 0:
                line.append(_slot("[ ]", EMPTY, cell, _mark(pile, -1, 0, marks)))
            else:
                line.append(" " * cell)
        lines.append(line)
    for line in lines:
        line.rstrip()
    board_text = Text("\n").join(lines)
    board_text.no_wrap = True  # a narrow container scrolls or crops; a wrapped board would mislead
    return board_text


def pile_at(
    layout: Layout,
    board: Board,
    x: int,
    y: int,
    cell: int = 5,
    rows: int | None = None,
    focus: tuple[int, int] | None = None,
) -> tuple[int, int] | None:
    """The ``(pile, index)`` drawn at column ``x``, line ``y`` of :func:`render_board`'s
    output (drawn with the same ``rows`` and cursor ``focus``); below a pile's last card,
    that card. On a ``+N`` line: the covered card nearest the cards drawn. None if no pile is there."""
    if layout.top:
        if y <= 1:
            gap = _top_gap(layout, cell)
            left = 0
            for i, pile in enumerate(layout.top):
                if i == layout.foundations_at and i > 0:
                    left += gap
                if left <= x < left + cell:
                    return pile, len(board[pile]) - 1
                left += cell
            return None
        y -= 4
    else:
        y -= 1
    if y < 0:
        return None
    drawn = windows(layout, board, rows, focus)
    left = 0
    for i, pile in enumerate(layout.main):
        if i == layout.divider_at:
            left += 2
        if left <= x < left + cell:
            size = len(board[pile])
            if not size:
                return pile, -1
            column = _column(size, drawn[pile])
            if y >= len(column):
                return pile, size - 1
            folded, first, end = column[y]
            return pile, end - 1 if folded and first == 0 else first
        left += cell
    return None
