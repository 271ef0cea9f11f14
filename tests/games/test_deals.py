"""Deal numbers and dealing: the golden layouts of seeds/deals/, Deal.parse, and the shuffles.

Our deal N must be PySolFC's game N, card for card, so players can replay a deal there.
The golden files are the evidence; the spec shuffle below (a transcription of DEALS.md)
covers the generator ranges no golden file reaches yet.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from server.games import Antares, Deal, InvalidDeal, Scorpion, parse_card, variant_class
from server.games.deal_text import deal_text
from server.games.deals import talon
from server.games.game import Game

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = ROOT / "seeds" / "deals"
GOLDEN_FILES = sorted(GOLDEN_DIR.glob("*.txt"))
#: The files whose text was copied from DEALS.md's test vectors.
DEALS_MD_VECTORS = ("scorpion-1", "scorpion-617", "antares-24", "antares-123456")

#: Deals from every generator range: LCRandom31 with the three ways it draws, and Mersenne Twister.
SAMPLE_DEALS = (
    Deal(1),
    Deal(617),
    Deal(31999),
    Deal(32000, ms=True),
    Deal(2**31 - 1, ms=True),
    Deal(2**31, ms=True),
    Deal(3_000_000_000, ms=True),
    Deal(2**32 - 1, ms=True),
    Deal(2**32, ms=True),
    Deal(7_777_777_777, ms=True),
    Deal(2**33 - 1, ms=True),
    Deal(32000),
    Deal(123456),
    Deal(10**16),
    Deal(54_321_987_654_321_012_345),
    Deal(10**20 - 1),
)


def golden_case(path: Path) -> tuple[type[Game], Deal]:
    variant, _, number = path.stem.partition("-")
    return variant_class(variant), Deal.parse(number)


# -- golden layouts ------------------------------------------------------------------


def test_the_deals_md_vectors_are_among_the_golden_files() -> None:
    assert {path.stem for path in GOLDEN_FILES} >= set(DEALS_MD_VECTORS)


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=[path.stem for path in GOLDEN_FILES])
def test_deal_text_matches_the_golden_file(path: Path) -> None:
    variant, deal = golden_case(path)
    assert deal_text(variant, deal) == path.read_text()


def test_antares_deal_1_first_pysolfc_pile_is_microsoft_freecell_deal_1_first_column() -> None:
    expected = "JD KD 2S 4C 3S 6D 6S"
    assert deal_text(Antares, Deal(1)).splitlines()[0] == expected
    # PySolFC's pile 1 is our FreeCell pile f1.
    game = Antares.new(1)
    f1 = [spec.name for spec in Antares.PILES].index("f1")
    assert game.piles[f1] == [parse_card(word) for word in expected.split()]


# -- Deal.parse --------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["617", "ms617", " MS617 ", "Ms617", "\t617\n", "0617"])
def test_parse_reads_both_forms_case_and_spaces(text: str) -> None:
    assert Deal.parse(text) == Deal(617)
    assert str(Deal.parse(text)) == "617"


@pytest.mark.parametrize("number", [1, 2, 617, 11982, 31999])
def test_ms_and_plain_numbers_are_the_same_deal_below_32000(number: int) -> None:
    plain, ms = Deal.parse(str(number)), Deal.parse(f"ms{number}")
    assert plain == ms
    assert hash(plain) == hash(ms)
    assert str(ms) == str(number)
    assert plain.uses_lcrandom
    assert talon(plain) == talon(ms)


@pytest.mark.parametrize("number", [32000, 32001, 123456, 10**16, 10**20 - 1])
def test_plain_numbers_from_32000_use_mersenne_twister(number: int) -> None:
    plain = Deal.parse(str(number))
    assert not plain.uses_lcrandom
    assert talon(plain) == spec_talon(number, ms=False)
    if number < 2**33:
        ms = Deal.parse(f"ms{number}")
        assert ms != plain
        assert str(ms) == f"ms{number}"
        assert ms.uses_lcrandom
        assert talon(ms) != talon(plain)


@pytest.mark.parametrize("deal", SAMPLE_DEALS, ids=str)
def test_talon_follows_the_deals_md_algorithm(deal: Deal) -> None:
    assert talon(deal) == spec_talon(deal.number, ms=deal.uses_lcrandom)


@pytest.mark.parametrize("text", ["ms1", "ms31999", "ms32000", f"ms{2**31}", f"ms{2**32}", f"ms{2**33 - 1}"])
def test_ms_numbers_use_lcrandom31_up_to_2_to_the_33_minus_1(text: str) -> None:
    deal = Deal.parse(text)
    assert deal.uses_lcrandom
    assert talon(deal) == spec_talon(deal.number, ms=True)


@pytest.mark.parametrize("text", ["1", "ms1", "9" * 20, f"ms{2**33 - 1}"])
def test_the_limits_are_accepted(text: str) -> None:
    assert Deal.parse(text).number == int(text.removeprefix("ms"))


@pytest.mark.parametrize(
    "text",
    [
        "0",
        "ms0",
        "-1",
        "-617",
        "ms-3",
        f"ms{2**33}",
        f"ms{2**40}",
        "1" * 21,
        "0" + "1" * 21,
        str(10**20),
        "",
        "   ",
        "ms",
        "abc",
        "12a",
        "1.5",
        "1e5",
        "+5",
        "0x10",
        "1 2",
        "617ms",
        "\u0663",  # ARABIC-INDIC DIGIT THREE: a digit to str.isdigit, not to players
    ],
)
def test_parse_rejects_bad_numbers(text: str) -> None:
    with pytest.raises(InvalidDeal):
        Deal.parse(text)


@pytest.mark.parametrize("text", ["0617", "0" * 20 + "617", "ms" + "0" * 30 + "617"])
def test_leading_zeros_do_not_count(text: str) -> None:
    assert Deal.parse(text) == Deal(617)


def test_a_huge_run_of_leading_zeros_is_read_or_rejected_as_a_deal_error() -> None:
    # Longer than Python's int() accepts by default (4300 digits): reading it must still
    # end in a deal or an InvalidDeal, never in another exception the caller cannot expect.
    text = "0" * 5000 + "617"
    try:
        deal = Deal.parse(text)
    except InvalidDeal:
        return
    assert deal == Deal(617)


@pytest.mark.parametrize(("number", "ms"), [(0, False), (-5, False), (0, True), (2**33, True), (10**20, False)])
def test_constructor_rejects_out_of_range_numbers(number: int, ms: bool) -> None:
    with pytest.raises(InvalidDeal):
        Deal(number, ms=ms)


def test_invalid_deal_is_also_a_value_error() -> None:
    with pytest.raises(ValueError):
        Deal.parse("nope")


@pytest.mark.parametrize("variant", [Scorpion, Antares])
def test_new_game_rejects_a_bad_deal_text(variant: type[Game]) -> None:
    with pytest.raises(InvalidDeal):
        variant.new("ms0")


# -- layouts ---------------------------------------------------------------------------


@pytest.mark.parametrize("variant", [Scorpion, Antares])
@pytest.mark.parametrize("deal", SAMPLE_DEALS, ids=str)
def test_every_deal_holds_52_distinct_cards(variant: type[Game], deal: Deal) -> None:
    game = variant.new(deal)
    cards = [card for pile in game.piles for card in pile]
    assert sorted(cards) == list(range(52))


@pytest.mark.parametrize("deal", SAMPLE_DEALS, ids=str)
def test_scorpion_layout_shape(deal: Deal) -> None:
    game = Scorpion.new(deal)
    assert [len(pile) for pile in game.piles] == [7] * 7 + [3] + [0] * 4
    assert game.hidden == [3, 3, 3, 3, 0, 0, 0, 3, 0, 0, 0, 0]


@pytest.mark.parametrize("deal", SAMPLE_DEALS, ids=str)
def test_antares_layout_shape(deal: Deal) -> None:
    game = Antares.new(deal)
    assert [len(pile) for pile in game.piles] == [6] * 4 + [7] * 4 + [0] * 8
    assert game.hidden == [0] * 16


@pytest.mark.parametrize("variant", [Scorpion, Antares])
@pytest.mark.parametrize("deal", [Deal(5), Deal(2**32 + 5, ms=True), Deal(98_765_432_109_876_543)], ids=str)
def test_the_same_deal_always_gives_the_same_layout(variant: type[Game], deal: Deal) -> None:
    first = variant.new(deal).full_view()
    # Dealing must not depend on the global random generator or on earlier deals.
    random.seed(12345)
    random.random()
    variant.new(Deal(7))
    assert variant.new(deal).full_view() == first
    assert variant.new(str(deal)).full_view() == first


# -- DEALS.md's shuffle, transcribed independently of server/games/deals.py ---------------


def spec_talon(number: int, *, ms: bool) -> list[int]:
    """The talon as DEALS.md states it (``ms``: the LCRandom31 path with the rank-major deck)."""
    deck = list(range(52))
    if ms:
        deck = [deck[i + (0, 39, 26, 13)[k]] for i in range(13) for k in range(4)]
        state = number if number < 2**32 else number - 2**32

        def randint(a: int, b: int) -> int:
            nonlocal state
            state = (state * 214013 + 2531011) & (2**33 - 1)
            if number < 2**31:
                r = (state >> 16) & 0x7FFF
            elif number < 2**32:
                r = ((state >> 16) & 0x7FFF) | 0x8000
            else:
                r = ((state >> 16) & 0xFFFF) + 1
            return a + r % (b + 1 - a)

    else:
        generator = random.Random(number)

        def randint(a: int, b: int) -> int:
            return a + int(generator.random() * (b + 1 - a))

    for n in range(51, 0, -1):
        j = randint(0, n)
        deck[n], deck[j] = deck[j], deck[n]
    return deck
