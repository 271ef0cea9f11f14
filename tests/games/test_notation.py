"""Move notation: what players type ("QS>5", "deal") and what the server writes back."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable, Iterator

import pytest

from server.games import (
    Antares,
    Autoplay,
    Deal,
    Game,
    IllegalMove,
    InvalidNotation,
    Move,
    Options,
    Scorpion,
    parse_card,
)
from server.games.position_text import parse_position

# Column 1 has two face-down cards, the stock is undealt, columns 2, 4 and 7 are empty.
SCORPION = """
1: <2D> <3D> KH QS 4C
3: <5D> 9H TS
5: KS
6: JS
stock: 9C 2H 6H
"""
# s2-s4, f3, f4 and cells c2-c4 are empty; the hearts foundation holds the Ace.
ANTARES = """
s1: 7D KS QS 2H
f1: 9H 8C
f2: AD
c1: 5C
home: AH
"""
ANTARES_NO_EMPTY_PILE = """
s1: 7D
s2: 8D
s3: 9D
s4: TD
f1: 7C
f2: 8C
f3: 9C
f4: TC
c1: 7S
c2: 8S
c3: 9S
c4: TS
"""


def scorpion() -> Game:
    return parse_position(Scorpion, SCORPION)


def antares() -> Game:
    return parse_position(Antares, ANTARES)


# -- round trip over many positions -----------------------------------------------------


def random_positions(variant: type[Game], deal: Deal, options: Options, steps: int) -> Iterator[Game]:
    """The positions of one random line of play from ``deal`` (the same line every run)."""
    chooser = random.Random(f"{variant.VARIANT} {deal} {options.autoplay.value}")
    game = variant.new(deal, options)
    yield game
    for _ in range(steps):
        moves = game.legal_moves()
        if not moves:
            return
        game.apply(chooser.choice(moves))
        yield game


CASES = [
    (variant, deal, autoplay)
    for variant in (Scorpion, Antares)
    for deal in (Deal(1), Deal(617), Deal(24), Deal(3_000_000_000, ms=True), Deal(2**32 + 17, ms=True), Deal(10**17))
    for autoplay in ((Autoplay.OFF, Autoplay.SAFE, Autoplay.ALL) if variant is Antares else (Autoplay.SAFE,))
]


@pytest.mark.parametrize(
    ("variant", "deal", "autoplay"),
    CASES,
    ids=[f"{v.VARIANT}-{d}-{a.value}" for v, d, a in CASES],
)
def test_every_legal_move_text_reads_back_as_the_same_move(variant: type[Game], deal: Deal, autoplay: Autoplay) -> None:
    positions = 0
    for game in random_positions(variant, deal, Options(autoplay=autoplay), steps=80):
        positions += 1
        moves = game.legal_moves()
        texts = [game.move_text(move) for move in moves]
        # Distinct moves need distinct texts, or a player could not name one of them.
        assert len(set(texts)) == len(texts), texts
        for move, text in zip(moves, texts, strict=True):
            assert game.parse_move(text) == move, text
            assert game.parse_move(text.lower().replace(">", " ")) == move, text
    assert positions > 1


# -- accepted forms -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "move", "canonical"),
    [
        ("deal", Move(7, 3, 7), "deal"),
        ("d", Move(7, 3, 7), "deal"),
        (" DEAL ", Move(7, 3, 7), "deal"),
        ("QS>5", Move(0, 2, 4), "QS>5"),
        ("qs 5", Move(0, 2, 4), "QS>5"),
        ("  qs  >  5 ", Move(0, 2, 4), "QS>5"),
        ("10s>6", Move(2, 1, 5), "TS>6"),
        ("ts 6", Move(2, 1, 5), "TS>6"),
        ("3>6", Move(2, 1, 5), "TS>6"),
        ("KH>4", Move(0, 3, 3), "KH>4"),
        ("kh s", Move(0, 3, 1), "KH>2"),  # first empty column
        ("1>5", Move(0, 1, 4), "4C>5"),  # a pile name means its top card
    ],
)
def test_scorpion_accepted_forms(text: str, move: Move, canonical: str) -> None:
    game = scorpion()
    assert game.parse_move(text) == move
    assert game.move_text(move) == canonical


@pytest.mark.parametrize("text", ["QS>5", "10s>6", "3>6", "KH>4", "kh s", "deal"])
def test_scorpion_forms_name_legal_moves(text: str) -> None:
    game = scorpion()
    assert game.parse_move(text) in game.legal_moves()


def test_scorpion_h_names_the_foundation_of_the_card_suit() -> None:
    game = scorpion()
    move = game.parse_move("4C h")
    assert move == Move(0, 1, Scorpion.FOUNDATION)  # hc
    with pytest.raises(IllegalMove) as error:
        game.apply(move)
    assert error.value.rule == "no-foundation-moves"


@pytest.mark.parametrize(
    ("text", "move", "canonical"),
    [
        ("2H>h", Move(0, 1, 14), "2H>h"),
        ("2h hh", Move(0, 1, 14), "2H>h"),
        ("AD h", Move(5, 1, 15), "AD>h"),
        ("f2 h", Move(5, 1, 15), "AD>h"),
        ("2H c", Move(0, 1, 9), "2H>c2"),  # first empty cell
        ("s1>c", Move(0, 1, 9), "2H>c2"),
        ("KS>s", Move(0, 3, 1), "KS>s2"),  # first empty Scorpion pile
        ("ks s4", Move(0, 3, 3), "KS>s4"),
        ("8C f", Move(4, 1, 6), "8C>f3"),  # first empty FreeCell pile
        ("f1 f", Move(4, 1, 6), "8C>f3"),
        ("c1>f", Move(8, 1, 6), "5C>f3"),
        ("5c C3", Move(8, 1, 10), "5C>c3"),
    ],
)
def test_antares_accepted_forms(text: str, move: Move, canonical: str) -> None:
    game = antares()
    assert game.parse_move(text) == move
    assert game.move_text(move) == canonical


@pytest.mark.parametrize("text", ["2H>h", "AD h", "2H c", "KS>s", "8C f", "c1>f"])
def test_antares_forms_name_legal_moves(text: str) -> None:
    game = antares()
    assert game.parse_move(text) in game.legal_moves()


# -- errors ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text", ["", "   ", "QS", "QS>", ">5", "QS>5>6", "QS 5 6", "hello world", "XX>5", "deal now", "dd", "1H>5", "Q>5"]
)
@pytest.mark.parametrize("make", [scorpion, antares], ids=["scorpion", "antares"])
def test_garbage_is_invalid_notation(make: Callable[[], Game], text: str) -> None:
    game = make()
    with pytest.raises(InvalidNotation):
        game.parse_move(text)


@pytest.mark.parametrize("text", ["QS>8", "QS>0", "QS>x", "QS>hx", "QS>s1", "QS>f1", "QS>c1", "QS>c", "QS>f"])
def test_scorpion_unknown_target_pile_is_invalid_notation(text: str) -> None:
    with pytest.raises(InvalidNotation) as error:
        scorpion().parse_move(text)
    # The message lists the piles that do exist.
    assert "1" in str(error.value)
    assert "7" in str(error.value)


@pytest.mark.parametrize("text", ["2H>s5", "2H>c5", "2H>f0", "2H>x", "2H>1", "2H>stock", "2H>hx"])
def test_antares_unknown_target_pile_is_invalid_notation(text: str) -> None:
    with pytest.raises(InvalidNotation) as error:
        antares().parse_move(text)
    assert "s1" in str(error.value)


@pytest.mark.parametrize("text", ["s5>f3", "x>5", "8>5", "c>5"])
def test_unknown_source_is_invalid_notation(text: str) -> None:
    game = antares() if text.startswith("s5") else scorpion()
    with pytest.raises(InvalidNotation):
        game.parse_move(text)


def test_face_down_stock_and_absent_cards_get_the_same_error() -> None:
    game = scorpion()
    messages = {}
    for where, card in (("face down", "2D"), ("stock", "9C"), ("absent", "AS")):
        with pytest.raises(IllegalMove) as error:
            game.parse_move(f"{card}>5")
        assert error.value.rule == "no-such-card", where
        # Same words for each, apart from the card the player named.
        messages[where] = str(error.value).replace(card, "XX")
    assert len(set(messages.values())) == 1, messages


def test_an_absent_card_in_antares_is_no_such_card() -> None:
    with pytest.raises(IllegalMove) as error:
        antares().parse_move("3S>f")
    assert error.value.rule == "no-such-card"


@pytest.mark.parametrize("text", ["2>5", "stock>1", "stock 1"])
def test_scorpion_empty_or_stock_pile_as_source_is_illegal(text: str) -> None:
    with pytest.raises(IllegalMove):
        scorpion().parse_move(text)


def test_antares_has_no_deal() -> None:
    for text in ("deal", "d"):
        with pytest.raises(IllegalMove) as error:
            antares().parse_move(text)
        assert error.value.rule == "no-stock"


@pytest.mark.parametrize("text", ["7D c", "7D f", "7D s"])
def test_pile_kind_letter_without_an_empty_pile_is_illegal(text: str) -> None:
    game = parse_position(Antares, ANTARES_NO_EMPTY_PILE)
    with pytest.raises(IllegalMove) as error:
        game.parse_move(text)
    assert error.value.rule == "no-empty-pile"


def test_reading_a_move_changes_nothing() -> None:
    game = scorpion()
    before = game.full_view()
    for text in ("QS>5", "deal", "2D>5", "QS>8"):
        with contextlib.suppress(InvalidNotation, IllegalMove):
            game.parse_move(text)
    assert game.full_view() == before
    assert game.move_count == 0


# -- ASCII only, short quotes ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "\u212as>h",  # KELVIN SIGN: lower() makes it a plain k
        "A\u017f>h",  # LATIN SMALL LETTER LONG S: upper() makes it a plain S
        "AS\u00a0h",  # NO-BREAK SPACE: split() treats it as a separator
        "AS\u2003h",  # EM SPACE
        "\u00a0AS>h",
        "AS>h\u3000",
        "\uff21S>h",  # FULLWIDTH LATIN CAPITAL LETTER A
    ],
)
def test_move_text_is_read_as_ascii_only(text: str) -> None:
    game = Antares.new(24)
    assert game.parse_move("AS>h") == game.parse_move("AS h")  # the ASCII forms still read
    with pytest.raises(InvalidNotation, match="ASCII"):
        game.parse_move(text)


def test_a_tab_separates_like_a_space() -> None:
    game = Antares.new(24)
    assert game.parse_move("AS\th") == game.parse_move("AS>h")


@pytest.mark.parametrize("text", ["\u212a", "\u017f", "A\u017f"])
def test_cards_are_read_as_ascii_only(text: str) -> None:
    with pytest.raises(InvalidNotation, match="ASCII"):
        parse_card(text)


@pytest.mark.parametrize("text", ["x" * 100_000, "AS " + "x" * 100_000, "\u00a0" * 100_000, "AS>" + "9" * 100_000])
def test_an_error_quotes_only_a_short_prefix_of_bad_input(text: str) -> None:
    game = Antares.new(24)
    with pytest.raises(InvalidNotation) as caught:
        game.parse_move(text)
    assert len(str(caught.value)) < 200


@pytest.mark.parametrize(
    "parse",
    [
        lambda text: Deal.parse(text),
        lambda text: Options(autoplay=Autoplay.parse(text)),
        lambda text: parse_position(Antares, text),
    ],
)
def test_other_readers_quote_a_short_prefix_too(parse: Callable[[str], object]) -> None:
    with pytest.raises(ValueError) as caught:
        parse("z" * 100_000)
    assert len(str(caught.value)) < 200


# -- deal numbers: leading zeros, ASCII ----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "deal"),
    [("00617", Deal(617)), ("ms0042", Deal(42)), ("0" * 30 + "1" * 20, Deal(int("1" * 20)))],
)
def test_leading_zeros_are_accepted_and_do_not_count_towards_20_digits(text: str, deal: Deal) -> None:
    assert Deal.parse(text) == deal


@pytest.mark.parametrize("text", ["617\u00a0", "\u0666\u0661\u0667", "ms\u212a"])
def test_deal_numbers_are_ascii_only(text: str) -> None:
    with pytest.raises(ValueError, match="not a deal number"):
        Deal.parse(text)
