"""Widgets of the UI: a board drawing what the server sends (with the keyboard and mouse
selection of the player's own board), a checkbox that reads the same in any terminal, and the
choice of game on the forms.

A board made with ``fit`` takes the height its container gives it (CSS ``1fr``) and draws
itself in those lines: a column too long to fit is folded (``+N`` stands for its covered
cards), so the playable end of every column is always on screen, even at 80x24."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Checkbox, Select

from client.render.board import Board, Layout, Marks, header_lines, layout_for, pile_at, render_board, windows
from client.render.cursor import Cursor, Position, card_at, home_text, move_text
from protocol.messages import PileInfo, Variant


class BoardView(Widget):
    """One board. With ``interactive``, a cursor walks the piles: pick a card up, put it
    down on another pile, and the widget posts :class:`BoardView.MoveChosen` with the move
    in notation (the server decides whether it is legal)."""

    can_focus = True

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "cursor('left')", "Left", show=False),
        Binding("right", "cursor('right')", "Right", show=False),
        Binding("up", "cursor('up')", "Up", show=False),
        Binding("down", "cursor('down')", "Down", show=False),
        # Out of the footer, which keeps to 80 columns: the race screen's legend says both.
        Binding("enter,space", "pick", "Pick", show=False),
        Binding("f", "home", "Home", show=False),
        *(Binding(str(n), f"jump({n})", f"Pile {n}", show=False) for n in range(1, 10)),
    ]

    DEFAULT_CSS = """
    BoardView { width: auto; height: auto; padding: 0 1; }
    BoardView.fit { height: 1fr; min-height: 5; }
    BoardView:focus { background: $boost; }
    """

    class MoveChosen(Message):
        def __init__(self, move: str) -> None:
            super().__init__()
            self.move = move

    class Notice(Message):
        """Something the player should read (nothing to pick up there, ...)."""

        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    def __init__(self, interactive: bool = False, cell: int = 5, id: str | None = None, fit: bool = False) -> None:
        super().__init__(id=id, classes="fit" if fit else None)
        self.interactive = interactive
        self.fit = fit
        self.cell = cell
        self.piles: list[PileInfo] = []
        self.board: list[list[int | None]] = []
        self.layout_: Layout | None = None
        self.cursor: Cursor | None = None
        self.hint: frozenset[Position] = frozenset()
        self.target: int | None = None
        self.can_focus = interactive

    def show(self, piles: Sequence[PileInfo], board: Board | None) -> None:
        """Draw ``board`` (None: no board) with piles ``piles``; keeps the cursor on it."""
        piles = list(piles)
        changed = board is None or [list(p) for p in board] != self.board
        if piles != self.piles or self.layout_ is None:
            self.piles = piles
            self.layout_ = layout_for(piles)
            self.cursor = None
        self.board = [list(pile) for pile in board] if board is not None else []
        if self.interactive and self.board and len(self.board) == len(piles):
            if self.cursor is None:
                self.cursor = Cursor.start(self.layout_, self.board)
            self.cursor.clamp(self.board)
        elif not self.interactive:
            self.cursor = None
        if changed:
            self.hint, self.target = frozenset(), None
        self.refresh(layout=True)

    def mark_hint(self, cards: frozenset[Position], target: int | None) -> None:
        self.hint, self.target = cards, target
        self.refresh()

    def clear_selection(self) -> None:
        if self.cursor is not None:
            self.cursor.selected = None
            self.refresh()

    @property
    def selected(self) -> Position | None:
        return None if self.cursor is None else self.cursor.selected

    @property
    def rows(self) -> int | None:
        """The lines the tableau's cards may take (None: as many as they need)."""
        height = self.content_size.height
        if not self.fit or height <= 0 or self.layout_ is None:
            return None
        return max(1, height - header_lines(self.layout_))

    @property
    def focus_position(self) -> Position | None:
        """The card a folded column must show: the cursor's."""
        return None if self.cursor is None else self.cursor.position

    def render(self) -> Text:
        if not self.board or len(self.board) != len(self.piles):
            return Text("(no board yet)", style="dim")
        cursor = self.cursor
        marks = Marks(
            cursor=cursor.position if cursor is not None and self.has_focus else None,
            selected=cursor.selected if cursor is not None else None,
            hint=self.hint,
            target=self.target,
        )
        # The folds follow the cursor whether or not it is drawn (the board may not have the focus).
        return render_board(self.piles, self.board, self.layout_, marks, self.cell, self.rows, self.focus_position)

    # -- the player's selection ---------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Picking, moving and jumping only on the player's own board during their race."""
        if action in ("pick", "home", "cursor", "jump"):
            return self.interactive and self.cursor is not None
        return True

    def action_cursor(self, direction: str) -> None:
        if self.cursor is not None:
            self.cursor.move(direction, self.board)
            self.refresh()

    def action_jump(self, number: int) -> None:
        if self.cursor is not None:
            self.cursor.jump(number, self.board)
            self.refresh()

    def action_pick(self) -> None:
        """Pick up the card under the cursor, or put the picked card on the cursor's pile."""
        cursor = self.cursor
        if cursor is None:
            return
        pile, index = cursor.position
        if cursor.selected is None:
            if self.piles[pile].kind == "stock":
                self.post_message(self.MoveChosen("deal"))
            elif card_at(self.board, cursor.position) is None:
                self.post_message(self.Notice("nothing to pick up there"))
            else:
                cursor.selected = (pile, index)
            self.refresh()
            return
        if cursor.selected[0] == pile:
            cursor.selected = None  # put it back
            self.refresh()
            return
        text = move_text(self.piles, self.board, cursor.selected, pile)
        cursor.selected = None
        self.refresh()
        if text is not None:
            self.post_message(self.MoveChosen(text))

    def action_home(self) -> None:
        """Send the picked card (or the one under the cursor) to its foundation."""
        cursor = self.cursor
        if cursor is None:
            return
        text = home_text(self.board, cursor.selected or cursor.position)
        cursor.selected = None
        self.refresh()
        if text is None:
            self.post_message(self.Notice("no card there to send home"))
        else:
            self.post_message(self.MoveChosen(text))

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on a card and picks it (or drops the picked card there)."""
        if self.cursor is None or self.layout_ is None:
            return
        hit = pile_at(self.layout_, self.board, event.x - 1, event.y, self.cell, self.rows, self.focus_position)
        if hit is None:
            return
        pile, index = hit
        cards = self.board[pile]
        start, end = windows(self.layout_, self.board, self.rows, self.focus_position).get(pile, (0, len(cards)))
        folded = pile in self.layout_.main and 0 <= index < len(cards) and not start <= index < end
        self.cursor.position = (pile, index if 0 <= index < len(cards) and cards[index] is not None else len(cards) - 1)
        self.focus()
        if folded and self.cursor.selected is None:
            self.refresh()  # a click on "+N" opens the fold there; the next click picks
            return
        self.action_pick()


class Tick(Checkbox):
    """A checkbox whose box is empty when not ticked and shows an X when ticked (the stock
    one shows an X in both, told apart by colour alone, which many terminals lose)."""

    def __init__(self, label: str, value: bool = False, id: str | None = None) -> None:
        super().__init__(label, value, compact=True, id=id)
        self.BUTTON_INNER = "X" if value else " "

    def watch_value(self) -> None:
        self.BUTTON_INNER = "X" if self.value else " "
        super().watch_value()


class GameSelect(Select[str]):
    """The game a form starts (``#variant``): Scorpion, or Antares."""

    def __init__(self) -> None:
        super().__init__(
            [("Scorpion", "scorpion"), ("Antares", "antares")],
            value="scorpion",
            allow_blank=False,
            compact=True,
            id="variant",
        )

    @property
    def variant(self) -> Variant:
        return "antares" if self.value == "antares" else "scorpion"
