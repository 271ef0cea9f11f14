"""Cards: their text form (what players type and read), suits, colours and ranks."""

from __future__ import annotations

import pytest

from server.games import InvalidNotation, card_text, parse_card
from server.games.cards import DECK_SIZE, card_of, is_red, rank_of, suit_of, suit_run

ALL_CARDS = range(DECK_SIZE)


@pytest.mark.parametrize("card", ALL_CARDS)
def test_text_round_trip(card: int) -> None:
    text = card_text(card)
    assert len(text) == 2
    assert parse_card(text) == card
    assert parse_card(text.lower()) == card
    assert parse_card(f"  {text.lower()} ") == card


def test_every_card_has_its_own_text() -> None:
    assert len({card_text(card) for card in ALL_CARDS}) == DECK_SIZE


def test_deck_order_is_suit_major_clubs_spades_hearts_diamonds() -> None:
    assert [card_text(card) for card in (0, 12, 13, 26, 39, 51)] == ["AC", "KC", "AS", "AH", "AD", "KD"]


@pytest.mark.parametrize(
    ("text", "expected"), [("10h", "TH"), ("10H", "TH"), ("10c", "TC"), ("th", "TH"), ("qs", "QS")]
)
def test_ten_and_lower_case_are_accepted(text: str, expected: str) -> None:
    assert card_text(parse_card(text)) == expected


@pytest.mark.parametrize(
    "text", ["", " ", "T", "H", "1H", "11H", "0H", "TX", "ZH", "THH", "10", "100H", "AH5", "T H", "♥A", "KS>5"]
)
def test_bad_card_texts_are_rejected(text: str) -> None:
    with pytest.raises(InvalidNotation) as error:
        parse_card(text)
    # The player is told what they typed and what a card looks like.
    assert repr(text) in str(error.value)
    assert "TH" in str(error.value)


def test_bad_card_is_also_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_card("XX")


@pytest.mark.parametrize(
    ("text", "rank", "suit", "red"),
    [
        ("AC", 1, 0, False),
        ("KC", 13, 0, False),
        ("7S", 7, 1, False),
        ("TH", 10, 2, True),
        ("JD", 11, 3, True),
        ("QD", 12, 3, True),
        ("AS", 1, 1, False),
        ("2H", 2, 2, True),
    ],
)
def test_rank_suit_and_colour(text: str, rank: int, suit: int, red: bool) -> None:
    card = parse_card(text)
    assert rank_of(card) == rank
    assert suit_of(card) == suit
    assert is_red(card) is red
    assert card_of(rank, suit) == card


def test_red_suits_are_hearts_and_diamonds() -> None:
    red = {card_text(card)[1] for card in ALL_CARDS if is_red(card)}
    black = {card_text(card)[1] for card in ALL_CARDS if not is_red(card)}
    assert red == {"H", "D"}
    assert black == {"C", "S"}


def test_each_suit_has_ace_to_king() -> None:
    for suit in range(4):
        assert sorted(rank_of(card) for card in ALL_CARDS if suit_of(card) == suit) == list(range(1, 14))


def test_suit_run_is_king_down_to_ace_of_one_suit() -> None:
    assert [card_text(card) for card in suit_run(suit_of(parse_card("AH")))] == [f"{rank}H" for rank in "KQJT98765432A"]
