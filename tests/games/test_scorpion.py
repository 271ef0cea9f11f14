"""Scorpion's rules, one behaviour per test, on literal positions.

Pile numbers in :class:`Move`: columns 1-7 are 0-6, the stock 7, foundations 8-11.
"""

from __future__ import annotations

import pytest

from server.games import Game, InvalidNotation, Move, PileKind, Scorpion
from server.games.position_text import position_text
from tests.games.positions import board, play, rejection, scorpion

STOCK = 7
HEARTS_HOME = 10
#: The hearts from the King down to the Two: an Ace away from a complete suit.
HEARTS_K_TO_2 = "KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H"
SPADES_K_TO_A = "KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS"


# -- layout -------------------------------------------------------------------------


def test_layout_of_deal_1_is_pysolfc_game_1() -> None:
    game = Scorpion.new(1)
    assert position_text(game) == board(
        game,
        """
        1: <JD> <5H> <KH> AS 4H TH 8D
        2: <2D> <KD> <3H> AH AC 8H QS
        3: <9H> <KC> <2S> 3C 4D 2C 6C
        4: <JC> <9S> <KS> 4C 7S JH 3D
        5: 5D 5S 9D 5C 3S 7D 8C
        6: 7H AD QD TS TD 6D TC
        7: 7C QC JS QH 4S 8S 6S
        stock: 9C 2H 6H
        """,
    )


@pytest.mark.parametrize("deal", [1, 617, 31999, 123456, "ms40000"])
def test_layout_is_seven_columns_of_seven_with_three_face_down_under_columns_1_to_4(deal: int | str) -> None:
    view = Scorpion.new(deal).full_view()
    kinds = [spec.kind for spec in Scorpion.PILES]
    assert kinds == [PileKind.SCORPION] * 7 + [PileKind.STOCK] + [PileKind.FOUNDATION] * 4
    assert [len(view.piles[column]) for column in range(7)] == [7] * 7
    assert view.hidden[:7] == (3, 3, 3, 3, 0, 0, 0)
    assert len(view.piles[STOCK]) == 3
    assert view.hidden[STOCK] == 3
    assert all(not view.piles[home] for home in range(8, 12))
    assert sorted(card for pile in view.piles for card in pile) == list(range(52))


# -- moving groups ------------------------------------------------------------------


def test_any_face_up_card_moves_with_every_card_on_top_of_it_in_any_order() -> None:
    game = scorpion("1: 9H\n2: 4D 8H 2C KD 5S")
    play(game, "8H>1")
    assert position_text(game) == board(game, "1: 9H 8H 2C KD 5S\n2: 4D")


def test_the_top_card_alone_may_move() -> None:
    game = scorpion("1: 9H\n2: 4D 8H")
    play(game, "2>1")
    assert position_text(game) == board(game, "1: 9H 8H\n2: 4D")


@pytest.mark.parametrize("top", ["9S", "9D", "TH", "7H", "KS"])
def test_a_group_goes_only_onto_the_card_of_its_suit_one_rank_higher(top: str) -> None:
    game = scorpion(f"1: {top}\n2: 4D 8H 2C")
    assert rejection(game, "8H>1").rule == "build-in-suit"


@pytest.mark.parametrize("top", ["AS", "5C", "QC", "KH"])
def test_a_king_goes_on_no_card(top: str) -> None:
    # The King of Clubs is the card just below the Ace of Spades in card numbering.
    game = scorpion(f"1: {top}\n2: 4D KC 2H")
    assert rejection(game, "KC>1").rule == "build-in-suit"


def test_an_empty_column_takes_a_king_with_whatever_lies_on_it() -> None:
    game = scorpion("2: 3D KH 4C 9S")
    play(game, "KH>1")
    assert position_text(game) == board(game, "1: KH 4C 9S\n2: 3D")


@pytest.mark.parametrize("lead", ["QH", "4C", "AS"])
def test_an_empty_column_refuses_a_group_not_led_by_a_king(lead: str) -> None:
    game = scorpion(f"2: 3D {lead} 9S")
    assert rejection(game, f"{lead}>1").rule == "empty-needs-king"


def test_scorpion_has_no_cells() -> None:
    game = scorpion("1: 2S AS")
    assert all(spec.kind is not PileKind.CELL for spec in Scorpion.PILES)
    with pytest.raises(InvalidNotation):
        game.parse_move("AS>c")


@pytest.mark.parametrize("move", ["AS>h", "AS>hs", "AS>hc", "2S>h", Move(0, 1, 9), Move(0, 2, 9)])
def test_no_card_goes_to_a_foundation_by_a_move(move: str | Move) -> None:
    game = scorpion("1: 2S AS\n2: 5D")
    assert rejection(game, move).rule == "no-foundation-moves"


@pytest.mark.parametrize("move", [Move(0, 2, 1), Move(0, 3, 1), Move(0, 3, 2)])
def test_face_down_cards_cannot_be_moved(move: Move) -> None:
    game = scorpion("1: <5H> <2C> 9C\n2: 3C")
    refused = rejection(game, move)
    assert refused.rule == "face-down"
    assert "2C" not in str(refused)
    assert "5H" not in str(refused)


@pytest.mark.parametrize("move", [Move(8, 1, 1), Move(8, 13, 1), Move(8, 1, 0), "KC>2", "AC>2", "hc>2"])
def test_cards_never_leave_the_foundations(move: str | Move) -> None:
    game = scorpion("1: 5D\nhome: KC")
    assert rejection(game, move).rule == "foundation-final"


@pytest.mark.parametrize("move", [Move(STOCK, 1, 0), Move(STOCK, 1, 3), Move(0, 1, STOCK)])
def test_stock_cards_come_out_only_by_dealing(move: Move) -> None:
    game = scorpion("1: 5D\n2: 6H\nstock: 4C 7D JS")
    assert rejection(game, move).rule == "stock-deal-only"


# -- turning up face-down cards -------------------------------------------------------


def test_a_face_down_card_left_on_top_is_turned_up_as_part_of_the_move() -> None:
    game = scorpion("1: <5H> <2C> 9C 4D\n2: TC")
    play(game, "9C>2")
    assert position_text(game) == board(game, "1: <5H> 2C\n2: TC 9C 4D")
    assert game.move_count == 1


def test_undo_turns_the_uncovered_card_face_down_again() -> None:
    game = scorpion("1: <5H> <2C> 9C\n2: TC")
    play(game, "9C>2")
    game.undo()
    assert position_text(game) == board(game, "1: <5H> <2C> 9C\n2: TC")


def test_the_last_face_down_card_of_a_column_is_turned_up_too() -> None:
    game = scorpion("1: <5H> 9C\n2: TC")
    play(game, "9C>2")
    assert position_text(game) == board(game, "1: 5H\n2: TC 9C")


# -- the stock ------------------------------------------------------------------------


def test_the_deal_lays_one_card_face_up_on_each_of_columns_1_to_3_in_stock_order() -> None:
    game = scorpion("1: 5H\n2: 9C\n3: TD\n4: 2S\nstock: 4C 7D JS")
    play(game, "deal")
    assert position_text(game) == board(game, "1: 5H 4C\n2: 9C 7D\n3: TD JS\n4: 2S")
    assert game.full_view().hidden[:4] == (0, 0, 0, 0)
    assert game.move_count == 1


def test_the_deal_is_one_legal_move_from_the_start_and_later() -> None:
    game = scorpion("1: 5H\n2: 6H\n3: 8C\nstock: 4C 7D JS")
    deal = Move(STOCK, 3, STOCK)
    assert game.deal_move() == deal
    assert deal in game.legal_moves()
    play(game, "5H>2")
    assert deal in game.legal_moves()


def test_the_deal_lays_cards_on_empty_columns_too() -> None:
    game = scorpion("2: 6H\n4: 2S\nstock: 4C 7D JS")
    play(game, "deal")
    assert position_text(game) == board(game, "1: 4C\n2: 6H 7D\n3: JS\n4: 2S")


@pytest.mark.parametrize("second", ["deal", "d", Move(STOCK, 0, STOCK), Move(STOCK, 3, STOCK)])
def test_the_stock_is_dealt_only_once(second: str | Move) -> None:
    game = scorpion("1: 5H\n2: 6H\n3: 8C\nstock: 4C 7D JS")
    play(game, "deal")
    assert rejection(game, second).rule == "stock-dealt"
    assert all(not move.is_deal for move in game.legal_moves())


def test_the_stock_is_dealt_all_at_once() -> None:
    game = scorpion("1: 5H\n2: 6H\n3: 8C\nstock: 4C 7D JS")
    assert rejection(game, Move(STOCK, 1, STOCK)).rule == "deal-whole-stock"


# -- complete suits go home -----------------------------------------------------------


def test_a_suit_completed_by_a_move_goes_home_and_uncovers_the_card_under_it() -> None:
    game = scorpion(f"1: <9S> {HEARTS_K_TO_2}\n2: 5C AH")
    play(game, "AH>1")
    assert position_text(game) == board(game, "1: 9S\n2: 5C\nhome: KH")
    assert game.move_count == 1


def test_a_suit_uncovered_on_the_source_goes_home_when_the_cards_on_it_leave() -> None:
    game = scorpion(f"1: <9S> {HEARTS_K_TO_2} AH 5D 3C\n2: 6D")
    play(game, "5D>2")
    assert position_text(game) == board(game, "1: 9S\n2: 6D 5D 3C\nhome: KH")


@pytest.mark.parametrize(("column", "stock"), [(1, "AH 7D JS"), (2, "7D AH JS"), (3, "7D JS AH")])
def test_a_suit_completed_by_the_deal_goes_home(column: int, stock: str) -> None:
    game = scorpion(f"{column}: <9S> {HEARTS_K_TO_2}\n5: 4C\nstock: {stock}")
    play(game, "deal")
    dealt = {1: "2: 7D\n3: JS", 2: "1: 7D\n3: JS", 3: "1: 7D\n2: JS"}[column]
    assert position_text(game) == board(game, f"{column}: 9S\n{dealt}\n5: 4C\nhome: KH")


def test_a_suit_uncovered_by_a_suit_going_home_goes_home_too() -> None:
    game = scorpion(f"1: <9C> {SPADES_K_TO_A} {HEARTS_K_TO_2}\n2: 5C AH")
    play(game, "AH>1")
    assert position_text(game) == board(game, "1: 9C\n2: 5C\nhome: KS KH")


@pytest.mark.parametrize(
    ("start", "move"),
    [
        (f"1: <9S> {HEARTS_K_TO_2}\n2: 5C AH", "AH>1"),
        (f"1: <9S> {HEARTS_K_TO_2} AH 5D 3C\n2: 6D", "5D>2"),
        (f"1: <9S> {HEARTS_K_TO_2}\n2: 4C\nstock: AH 7D JS", "deal"),
        (f"1: <9C> {SPADES_K_TO_A} {HEARTS_K_TO_2}\n2: 5C AH", "AH>1"),
    ],
)
def test_one_undo_takes_back_the_move_the_suit_going_home_and_the_turned_card(start: str, move: str) -> None:
    game = scorpion(start)
    play(game, move)
    assert game.full_view().piles[HEARTS_HOME]
    game.undo()
    assert position_text(game) == board(game, start)
    assert game.move_count == 0


def test_a_king_to_ace_run_with_a_face_down_card_stays_in_its_column() -> None:
    game = scorpion("1: <KH> QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H\n2: 5C AH")
    play(game, "AH>1")
    assert position_text(game) == board(game, "1: <KH> QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H AH\n2: 5C")


def test_thirteen_cards_of_a_suit_out_of_order_stay_in_their_column() -> None:
    game = scorpion("1: KH QH JH TH 9H 8H 7H 5H 6H 4H 3H 2H\n2: 5C AH")
    play(game, "AH>1")
    assert position_text(game) == board(game, "1: KH QH JH TH 9H 8H 7H 5H 6H 4H 3H 2H AH\n2: 5C")


def test_an_unordered_group_moved_to_an_empty_column_does_not_go_home() -> None:
    game = scorpion("2: 5C KH QH JH TH 9H 8H 7H 5H 6H 4H 3H 2H AH")
    play(game, "KH>1")
    assert position_text(game) == board(game, "1: KH QH JH TH 9H 8H 7H 5H 6H 4H 3H 2H AH\n2: 5C")


# -- winning --------------------------------------------------------------------------


def test_the_game_is_won_when_the_four_suits_are_home() -> None:
    game = scorpion("1: KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D\n2: AD\nhome: KC KS KH")
    assert not game.is_won()
    play(game, "AD>1")
    assert game.is_won()
    assert game.progress().won
    assert game.progress().home == 52
    assert not game.is_stuck()


def test_the_game_is_not_won_while_the_stock_holds_cards() -> None:
    game = scorpion("home: KC KS KH\nstock: AD KD QD")
    assert not game.is_won()


# -- pointless moves and interchangeable empty columns ----------------------------------


def king_moves(game: Game, source: int) -> list[Move]:
    """The listed moves from ``source`` (in these positions, its King-led groups)."""
    return [move for move in game.legal_moves() if move.source == source]


def test_after_the_deal_a_whole_column_onto_an_empty_column_is_pointless() -> None:
    game = scorpion("1: 5H\n5: KS QS 3D")
    assert king_moves(game, 4) == []
    for target in (1, 2, 3, 5, 6):
        assert rejection(game, Move(4, 3, target)).rule == "pointless"


def test_before_the_deal_a_whole_column_may_move_onto_each_empty_column_1_to_3() -> None:
    game = scorpion("5: KS QS 3D\n6: 9C\n7: 8C\nstock: 4C 7D JS")
    assert king_moves(game, 4) == [Move(4, 3, 0), Move(4, 3, 1), Move(4, 3, 2)]
    assert rejection(game, Move(4, 3, 3)).rule == "pointless"
    play(game, Move(4, 3, 1))
    assert position_text(game) == board(game, "2: KS QS 3D\n6: 9C\n7: 8C\nstock: 4C 7D JS")


def test_before_the_deal_a_whole_column_1_to_3_may_move_onto_any_empty_column() -> None:
    game = scorpion("1: KS QS 3D\n3: 8C\n5: 9C\nstock: 4C 7D JS")
    assert king_moves(game, 0) == [Move(0, 3, 1), Move(0, 3, 3)]
    play(game, Move(0, 3, 6))
    assert position_text(game) == board(game, "3: 8C\n5: 9C\n7: KS QS 3D\nstock: 4C 7D JS")


def test_before_the_deal_empty_columns_4_to_7_are_listed_once_and_each_is_accepted() -> None:
    game = scorpion("1: 5H\n2: 9C\n3: 4D KC 2H\nstock: 4C 7D JS")
    assert king_moves(game, 2) == [Move(2, 2, 3)]
    for target in (3, 4, 5, 6):
        trial = game.copy()
        play(trial, Move(2, 2, target))
        assert trial.piles[target] == game.piles[2][1:]


def test_before_the_deal_each_empty_column_1_to_3_is_listed() -> None:
    game = scorpion("4: 5H\n5: 4D KC 2H\nstock: 4C 7D JS")
    assert king_moves(game, 4) == [Move(4, 2, 0), Move(4, 2, 1), Move(4, 2, 2), Move(4, 2, 5)]


def test_after_the_deal_all_empty_columns_are_listed_once_and_each_is_accepted() -> None:
    game = scorpion("4: 5H\n5: 4D KC 2H")
    assert king_moves(game, 4) == [Move(4, 2, 0)]
    for target in (0, 1, 2, 5, 6):
        trial = game.copy()
        play(trial, Move(4, 2, target))
        assert trial.piles[target] == game.piles[4][1:]
