"""Position text: the literal notation of whole positions used by tests and bug reports."""

from __future__ import annotations

import random

import pytest

from server.games import Antares, Autoplay, Deal, Game, InvalidPosition, Options, Scorpion, parse_card
from server.games.position_text import parse_position, position_text

CASES = [
    (variant, deal, autoplay, steps)
    for variant in (Scorpion, Antares)
    for deal in (Deal(617), Deal(24), Deal(2**31 + 99, ms=True), Deal(10**18 + 3))
    for autoplay in ((Autoplay.OFF, Autoplay.SAFE, Autoplay.ALL) if variant is Antares else (Autoplay.SAFE,))
    for steps in (0, 1, 5, 20, 200)
]


def played(variant: type[Game], deal: Deal, options: Options, steps: int) -> Game:
    """``deal`` after up to ``steps`` random legal moves (the same moves every run)."""
    chooser = random.Random(f"{variant.VARIANT} {deal} {options.autoplay.value} {steps}")
    game = variant.new(deal, options)
    for _ in range(steps):
        moves = game.legal_moves()
        if not moves:
            break
        game.apply(chooser.choice(moves))
    return game


@pytest.mark.parametrize(
    ("variant", "deal", "autoplay", "steps"),
    CASES,
    ids=[f"{v.VARIANT}-{d}-{a.value}-{n}" for v, d, a, n in CASES],
)
def test_round_trip_after_random_play(variant: type[Game], deal: Deal, autoplay: Autoplay, steps: int) -> None:
    options = Options(autoplay=autoplay)
    game = played(variant, deal, options, steps)
    text = position_text(game)
    again = parse_position(variant, text, options)
    assert again.full_view() == game.full_view()
    assert again.legal_moves() == game.legal_moves()
    assert position_text(again) == text


def test_text_of_a_fresh_scorpion_deal() -> None:
    assert position_text(Scorpion.new(617)) == (
        "1: <7D> <AH> <AS> 8D 8S 9H 2H\n"
        "2: <AD> <TD> <KH> 3D 7H 7C 5D\n"
        "3: <5C> <7S> <TH> TC 4D 6H JC\n"
        "4: <3S> <QD> <QC> KD JS 2C 6C\n"
        "5: 5S AC 3H 5H 4C 2S JH\n"
        "6: 8C 6D 9D 9S QS 4S QH\n"
        "7: 2D 8H 6S 3C 9C TS JD\n"
        "stock: KS KC 4H\n"
    )


def test_stock_is_listed_in_dealing_order() -> None:
    game = parse_position(Scorpion, "1: KS\n2: KH\n3: KD\nstock: 9C 2H 6H\n")
    game.apply(game.deal_move())
    assert [game.piles[column][-1] for column in range(3)] == [parse_card(c) for c in ("9C", "2H", "6H")]


def test_home_fills_each_foundation_from_the_ace() -> None:
    game = parse_position(Antares, "s1: 5H\nhome: 4H 2C\n")
    assert game.piles[Antares.FOUNDATION + 2] == [parse_card(c) for c in ("AH", "2H", "3H", "4H")]
    assert game.piles[Antares.FOUNDATION + 0] == [parse_card(c) for c in ("AC", "2C")]
    assert game.parse_move("5H>h") in game.legal_moves()


def test_blank_lines_comments_and_unnamed_piles() -> None:
    game = parse_position(Scorpion, "\n# a comment\n5: KS QS  # on KS\n\n")
    assert game.piles[4] == [parse_card("KS"), parse_card("QS")]
    assert all(not pile for i, pile in enumerate(game.piles) if i != 4)


def test_face_down_cards_are_hidden_from_the_public_view() -> None:
    game = parse_position(Scorpion, "1: <JD> <5H> KH AS\n")
    assert game.public_piles()[0] == (None, None, parse_card("KH"), parse_card("AS"))


@pytest.mark.parametrize(
    ("variant", "text"),
    [
        # a card twice
        (Scorpion, "1: AS AS\n"),
        (Scorpion, "1: AS\n2: <AS> KH\n"),
        (Scorpion, "1: 5S\nhome: KS\n"),
        (Antares, "s1: 3H\nhome: 4H\n"),
        (Antares, "c1: 3H\nf1: 3h\n"),
        # a face-down card on a face-up one
        (Scorpion, "1: AS <2S> 3S\n"),
        # a face-down top card
        (Scorpion, "1: <AS>\n"),
        (Scorpion, "1: <AS> <2S>\n"),
        # Antares deals every card face up
        (Antares, "s1: <AS> KS\n"),
        (Antares, "f1: <AS> <2S> 3H\n"),
        # unknown piles
        (Scorpion, "8: AS\n"),
        (Scorpion, "s1: AS\n"),
        (Antares, "s5: AS\n"),
        (Antares, "1: AS\n"),
        (Antares, "x: AS\n"),
        # two cards in a cell
        (Antares, "c1: AS 2S\n"),
        # foundations are given as 'home'
        (Antares, "hh: AH\n"),
        # Scorpion foundations hold whole suits only
        (Scorpion, "home: QS\n"),
        (Scorpion, "home: AS\n"),
        # two tops of one suit
        (Antares, "home: 3S 5S\n"),
        # not a card, not a line
        (Scorpion, "1: ZZ\n"),
        (Scorpion, "1 AS 2S\n"),
    ],
)
def test_inconsistent_positions_are_rejected(variant: type[Game], text: str) -> None:
    with pytest.raises(InvalidPosition):
        parse_position(variant, text)


def test_invalid_position_is_also_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_position(Scorpion, "1: AS AS\n")
