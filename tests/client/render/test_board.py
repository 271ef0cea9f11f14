"""Boards as the terminal shows them, and the keyboard selection over them (pure code,
fed by the engine's public piles as the server would send them)."""

from __future__ import annotations

from client.render.board import Marks, layout_for, pile_at, render_board
from client.render.cards import card_code, card_label, is_red, parse_card_code
from client.render.cursor import Cursor, hint_marks, home_text, move_text
from protocol.messages import PileInfo
from server.games import Game, Scorpion
from tests.known_deals import new_antares


def piles_of(game: Game) -> list[PileInfo]:
    return [PileInfo(spec.name, spec.kind.value) for spec in game.PILES]


def board_of(game: Game) -> list[list[int | None]]:
    return [list(pile) for pile in game.public_piles()]


def test_cards_read_as_rank_and_suit_with_red_hearts_and_diamonds() -> None:
    assert [card_label(c) for c in (0, 9, 25, 38, 49)] == [" A♣", "10♣", " K♠", " K♥", " J♦"]
    assert [is_red(c) for c in (0, 13, 26, 39)] == [False, False, True, True]
    assert all(parse_card_code(card_code(card)) == card for card in range(52))
    assert parse_card_code("10h") == 35
    assert parse_card_code("XS") is None


def test_scorpion_draws_the_stock_and_foundations_above_seven_columns() -> None:
    game = Scorpion.new(617)
    layout = layout_for(piles_of(game))
    assert [piles_of(game)[n].name for n in layout.top] == ["stock", "hc", "hs", "hh", "hd"]
    assert [piles_of(game)[n].name for n in layout.main] == ["1", "2", "3", "4", "5", "6", "7"]
    lines = render_board(piles_of(game), board_of(game)).plain.splitlines()
    assert lines[0].split() == ["stock", "hc", "hs", "hh", "hd"]
    assert lines[1].split() == ["[3]", "[♣]", "[♠]", "[♥]", "[♦]"]  # three cards in the stock; empty foundations
    assert lines[3].split() == ["1", "2", "3", "4", "5", "6", "7"]
    assert lines[4].split() == ["▒▒▒"] * 4 + ["5♠", "8♣", "2♦"]  # face-down cards show their backs
    assert len(lines) == 4 + 7  # one line a card in the longest column
    assert max(len(line) for line in lines) <= 48  # leaves room for the racers beside it in 80 columns


def test_antares_draws_cells_and_foundations_on_top_and_a_divider_between_pile_kinds() -> None:
    game = new_antares()
    lines = render_board(piles_of(game), board_of(game)).plain.splitlines()
    assert lines[0].split() == ["c1", "c2", "c3", "c4", "hc", "hs", "hh", "hd"]
    assert lines[1].split() == ["[", "]"] * 4 + ["[♣]", "[♠]", "[♥]", "[♦]"]
    assert lines[3].split() == ["s1", "s2", "s3", "s4", "│", "f1", "f2", "f3", "f4"]
    assert all("│" in line for line in lines[3:])


def test_cards_are_coloured_by_suit_and_the_marks_stand_out() -> None:
    game = new_antares()
    board = board_of(game)
    text = render_board(piles_of(game), board, marks=Marks(cursor=(0, 5), selected=(4, 3)))
    styles = {str(span.style) for span in text.spans}
    assert any("red" in style for style in styles)
    assert any("yellow" in style for style in styles)  # the cursor
    assert any("green" in style for style in styles)  # the selection


def test_a_click_finds_the_card_drawn_there() -> None:
    for game in (Scorpion.new(617), new_antares()):
        piles, board = piles_of(game), board_of(game)
        layout = layout_for(piles)
        lines = render_board(piles, board, layout).plain.splitlines()
        for pile in layout.main:
            for index, card in enumerate(board[pile]):
                if card is None:
                    continue
                y = 4 + index
                x = lines[y].index(card_label(card).strip())
                assert pile_at(layout, board, x, y) == (pile, index)
        stock_or_cell = layout.top[0]
        assert pile_at(layout, board, 2, 1) == (stock_or_cell, len(board[stock_or_cell]) - 1)


def test_the_cursor_walks_face_up_cards_then_the_top_row() -> None:
    game = Scorpion.new(617)
    piles, board = piles_of(game), board_of(game)
    cursor = Cursor.start(layout_for(piles), board)
    assert cursor.position == (0, 6)  # the top card of column 1
    for _ in range(3):
        cursor.move("up", board)
    assert cursor.position == (0, 3)  # the deepest face-up card
    cursor.move("up", board)
    assert piles[cursor.position[0]].name == "stock"
    cursor.move("right", board)
    assert piles[cursor.position[0]].name == "hc"
    cursor.move("down", board)
    assert cursor.position[1] == len(board[cursor.position[0]]) - 1
    cursor.jump(5, board)
    assert cursor.position == (4, 6)
    cursor.move("left", board)
    assert cursor.position == (3, 6)


def test_a_pick_and_drop_becomes_a_move_in_notation() -> None:
    game = Scorpion.new(617)
    piles, board = piles_of(game), board_of(game)
    assert move_text(piles, board, (4, 6), 5) == "JH>6"
    assert move_text(piles, board, (0, 0), 5) is None  # a face-down card cannot be picked
    assert home_text(board, (1, 6)) == "5D>h"


def test_a_hint_marks_the_cards_it_moves_and_its_target() -> None:
    game = Scorpion.new(617)
    piles, board = piles_of(game), board_of(game)
    assert hint_marks(piles, board, "JH>6") == (frozenset({(4, 6)}), 5)
    assert hint_marks(piles, board, "KD>3") == (frozenset({(3, i) for i in range(3, 7)}), 2)
    assert hint_marks(piles, board, "deal") == (frozenset({(7, 2)}), None)
    antares = new_antares()
    cards, target = hint_marks(piles_of(antares), board_of(antares), "AS>h")
    assert target == 13  # the spade foundation
    assert len(cards) == 1
