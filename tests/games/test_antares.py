"""Antares's rules, one behaviour per test, on literal positions.

Pile numbers in :class:`Move`: Scorpion piles s1-s4 are 0-3, FreeCell piles f1-f4
4-7, cells c1-c4 8-11, foundations hc hs hh hd 12-15. Autoplay is off unless a
test is about it.
"""

from __future__ import annotations

import pytest

from server.games import Antares, Autoplay, Move, Options, PileKind, Progress, card_text, parse_card
from server.games.position_text import position_text
from tests.games.positions import antares, board, play, rejection

HC, HS, HH, HD = 12, 13, 14, 15

FILLED_CELLS = ("", "c1: 2D", "c1: 2D\nc2: 3D", "c1: 2D\nc2: 3D\nc3: 4D", "c1: 2D\nc2: 3D\nc3: 4D\nc4: 5D")


# -- layout -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("deal", "layout"),
    [
        (
            24,
            """
            s1: 2D KD TH TC TD 8D
            s2: 7H JS KH TS KC 7C
            s3: AH 5S 6S AD 8H JD
            s4: 7S 6C 7D 4D 8S 9D
            f1: 4C 2C 9C 8C QS 4S 2H
            f2: 5H QH 3C AC 3H 4H QD
            f3: QC 9S 6H 9H 3S KS 3D
            f4: 5D 2S JC 5C JH 6D AS
            """,
        ),
        (
            123456,
            """
            s1: AC 9D 7H 6D KS JH
            s2: 6H TH 8H QS 7D JC
            s3: 4C 2S 3S 6S 5H 3H
            s4: KC JS 9H 4S 7S AD
            f1: 3D 6C AS TS QC 8D 4D
            f2: 2D TC 4H JD TD 2H 5C
            f3: 2C 8S AH KD KH 5S 7C
            f4: 9C 8C QH 3C 5D 9S QD
            """,
        ),
    ],
)
def test_layout_is_pysolfc_mirrored_scorpion_piles_on_the_left(deal: int, layout: str) -> None:
    game = Antares.new(deal)
    assert position_text(game) == board(game, layout)


@pytest.mark.parametrize("deal", [1, 24, 617, 31999, 123456, "ms40000"])
def test_layout_is_four_piles_of_six_and_four_of_seven_all_face_up_cells_and_foundations_empty(
    deal: int | str,
) -> None:
    view = Antares.new(deal).full_view()
    kinds = [PileKind.SCORPION, PileKind.FREECELL, PileKind.CELL, PileKind.FOUNDATION]
    assert [spec.kind for spec in Antares.PILES] == [kind for kind in kinds for _ in range(4)]
    assert [len(pile) for pile in view.piles] == [6] * 4 + [7] * 4 + [0] * 8
    assert view.hidden == (0,) * 16
    assert sorted(card for pile in view.piles for card in pile) == list(range(52))


# -- what may be picked up ------------------------------------------------------------


@pytest.mark.parametrize(
    ("move", "after"),
    [
        ("9H>s2", "s1: 4C\ns2: TH 9H 3C KD 5S\nf1: TC"),
        ("9H>f1", "s1: 4C\ns2: TH\nf1: TC 9H 3C KD 5S"),
        ("KD>s3", "s1: 4C 9H 3C\ns2: TH\ns3: KD 5S\nf1: TC"),
    ],
)
def test_from_a_scorpion_pile_any_card_moves_with_everything_on_it(move: str, after: str) -> None:
    game = antares("s1: 4C 9H 3C KD 5S\ns2: TH\nf1: TC")
    play(game, move)
    assert position_text(game) == board(game, after)


def test_from_a_freecell_pile_a_run_down_in_alternate_colours_moves_together() -> None:
    game = antares("f1: 2C 9H 8S 7D\nf2: TC")
    play(game, "9H>f2")
    assert position_text(game) == board(game, "f1: 2C\nf2: TC 9H 8S 7D")


@pytest.mark.parametrize("pile", ["9H 3C 8S", "9H 8D", "9H 7C", "9H 8S 7C"])
def test_from_a_freecell_pile_a_group_that_is_not_an_alternate_run_stays(pile: str) -> None:
    game = antares(f"f1: 2D {pile}\nf2: TC")
    assert rejection(game, "9H>f2").rule == "freecell-run"


@pytest.mark.parametrize(("filled", "allowed"), [(0, True), (1, True), (2, True), (3, False), (4, False)])
def test_from_a_freecell_pile_a_run_is_at_most_one_more_than_the_empty_cells(filled: int, allowed: bool) -> None:
    game = antares(f"f1: 2C 9H 8S 7D\nf2: TC\n{FILLED_CELLS[filled]}")
    if allowed:
        play(game, "9H>f2")
        assert position_text(game) == board(game, f"f1: 2C\nf2: TC 9H 8S 7D\n{FILLED_CELLS[filled]}")
    else:
        assert rejection(game, "9H>f2").rule == "cell-limit"


@pytest.mark.parametrize(("filled", "allowed"), [(2, True), (3, True), (4, False)])
def test_an_empty_freecell_pile_does_not_raise_the_cell_limit(filled: int, allowed: bool) -> None:
    game = antares(f"f1: 2C 9H 8S\n{FILLED_CELLS[filled]}")
    if allowed:
        play(game, "9H>f2")
        assert position_text(game) == board(game, f"f1: 2C\nf2: 9H 8S\n{FILLED_CELLS[filled]}")
    else:
        assert rejection(game, "9H>f2").rule == "cell-limit"


@pytest.mark.parametrize("move", ["5H>s1", "c1>s1"])
def test_from_a_cell_its_card_moves(move: str) -> None:
    game = antares("c1: 5H\ns1: 6H")
    play(game, move)
    assert position_text(game) == board(game, "s1: 6H 5H")


@pytest.mark.parametrize("move", [Move(HC, 1, 8), Move(HC, 1, 5), Move(HC, 3, 5), "3C>c1", "hc>f2", "2C>f2"])
def test_cards_never_leave_the_foundations(move: str | Move) -> None:
    game = antares("f1: 4H\nhome: 3C")
    assert rejection(game, move).rule == "foundation-final"


# -- where a group may be put down ------------------------------------------------------


@pytest.mark.parametrize(("top", "allowed"), [("6H", True), ("6D", False), ("7H", False), ("4H", False)])
def test_on_a_scorpion_pile_a_group_goes_on_the_card_of_its_suit_one_rank_higher(top: str, allowed: bool) -> None:
    game = antares(f"s1: {top}\ns2: 5H 2C")
    if allowed:
        play(game, "5H>s1")
        assert position_text(game) == board(game, f"s1: {top} 5H 2C")
    else:
        assert rejection(game, "5H>s1").rule == "build-in-suit"


@pytest.mark.parametrize("top", ["AS", "5C"])
def test_a_king_goes_on_no_scorpion_pile_card(top: str) -> None:
    game = antares(f"s1: {top}\nc1: KC")
    assert rejection(game, "KC>s1").rule == "build-in-suit"


@pytest.mark.parametrize(
    ("move", "after"),
    [
        ("KH>s1", "s1: KH 5C\ns2: 3D\nf1: 2C KS QH\nc1: QC"),
        ("KS>s1", "s1: KS QH\ns2: 3D KH 5C\nf1: 2C\nc1: QC"),
    ],
)
def test_an_empty_scorpion_pile_takes_a_king_led_group(move: str, after: str) -> None:
    game = antares("s2: 3D KH 5C\nf1: 2C KS QH\nc1: QC")
    play(game, move)
    assert position_text(game) == board(game, after)


@pytest.mark.parametrize("move", ["QC>s1", "5C>s1", "QH>s1"])
def test_an_empty_scorpion_pile_refuses_a_group_not_led_by_a_king(move: str) -> None:
    game = antares("s2: 3D KH 5C\nf1: 2C KS QH\nc1: QC")
    assert rejection(game, move).rule == "empty-needs-king"


@pytest.mark.parametrize(
    ("lead", "allowed"), [("7H", True), ("7D", True), ("7C", False), ("7S", False), ("6H", False), ("8H", False)]
)
def test_on_a_freecell_pile_a_group_goes_on_the_other_colour_one_rank_higher(lead: str, allowed: bool) -> None:
    game = antares(f"f1: 8S\ns1: 3D {lead} 2C")
    if allowed:
        play(game, f"{lead}>f1")
        assert position_text(game) == board(game, f"f1: 8S {lead} 2C\ns1: 3D")
    else:
        assert rejection(game, f"{lead}>f1").rule == "build-alternate"


@pytest.mark.parametrize(
    ("move", "after"),
    [
        ("9C>f1", "s1: 4D\nf1: 9C 2H\nf2: 3S 8H 7C\nc1: QD"),
        ("8H>f1", "s1: 4D 9C 2H\nf1: 8H 7C\nf2: 3S\nc1: QD"),
        ("QD>f1", "s1: 4D 9C 2H\nf1: QD\nf2: 3S 8H 7C"),
        ("2H>f1", "s1: 4D 9C\nf1: 2H\nf2: 3S 8H 7C\nc1: QD"),
    ],
)
def test_an_empty_freecell_pile_takes_any_group_that_may_be_picked_up(move: str, after: str) -> None:
    game = antares("s1: 4D 9C 2H\nf2: 3S 8H 7C\nc1: QD")
    play(game, move)
    assert position_text(game) == board(game, after)


def test_an_empty_freecell_pile_refuses_a_group_that_may_not_be_picked_up() -> None:
    game = antares("s1: 4D\nf2: 3S 8H 7C")
    assert rejection(game, "3S>f1").rule == "freecell-run"


@pytest.mark.parametrize(("move", "cell"), [("2H>c2", "c2"), ("2H>c", "c2"), ("2H>c4", "c4"), ("s1>c3", "c3")])
def test_an_empty_cell_takes_a_card(move: str, cell: str) -> None:
    game = antares("s1: 9C 2H\nc1: QD")
    play(game, move)
    assert position_text(game) == board(game, f"s1: 9C\nc1: QD\n{cell}: 2H")


@pytest.mark.parametrize(
    ("move", "rule"), [("2H>c1", "cell-occupied"), ("9C>c2", "one-card-per-cell"), ("QD>c2", "pointless")]
)
def test_a_cell_holds_one_card_and_a_card_never_moves_from_cell_to_cell(move: str, rule: str) -> None:
    game = antares("s1: 9C 2H\nc1: QD")
    assert rejection(game, move).rule == rule


@pytest.mark.parametrize(
    ("move", "rule"),
    [
        ("AH>h", None),
        ("4C>h", None),
        ("2H>h", "foundation-order"),
        ("5C>h", "foundation-order"),
        (Move(0, 1, HH), "foundation-suit"),
        (Move(0, 1, HS), "foundation-suit"),
        (Move(3, 2, HD), "foundation-one-card"),
    ],
)
def test_a_foundation_takes_its_ace_first_then_the_next_card_of_its_suit(move: str | Move, rule: str | None) -> None:
    start = "s1: 4C\ns2: 2H\ns3: 5C\ns4: AD 7S\nc1: AH\nhome: 3C"
    game = antares(start)
    if rule is None:
        before = game.progress().home
        play(game, move)
        assert game.progress().home == before + 1
    else:
        assert rejection(game, move).rule == rule


# -- shifts between the two kinds of pile ------------------------------------------------


def test_a_group_shifted_onto_a_freecell_pile_moves_on_only_as_an_alternate_run() -> None:
    game = antares("s1: 9H 3C 8S\ns2: TH\nf1: TS")
    play(game, "9H>f1")
    assert position_text(game) == board(game, "s2: TH\nf1: TS 9H 3C 8S")
    assert rejection(game, "9H>s2").rule == "freecell-run"
    assert rejection(game, "3C>c1").rule == "freecell-run"
    play(game, "8S>c1")  # its top card still moves alone


@pytest.mark.parametrize(("filled", "allowed"), [(2, True), (3, False)])
def test_a_shifted_alternate_run_moves_on_within_the_cell_limit(filled: int, allowed: bool) -> None:
    game = antares(f"s1: 9H 8S 7D\ns2: TH\nf1: TS\n{FILLED_CELLS[filled]}")
    play(game, "9H>f1")  # from a Scorpion pile, the group needs no free cells
    if allowed:
        play(game, "9H>s2")
        assert position_text(game) == board(game, f"s2: TH 9H 8S 7D\nf1: TS\n{FILLED_CELLS[filled]}")
    else:
        assert rejection(game, "9H>s2").rule == "cell-limit"


# -- autoplay ---------------------------------------------------------------------------


def test_with_autoplay_off_cards_that_fit_stay_out() -> None:
    game = antares("s1: 9C AH\ns2: 5D\nf1: 6S", Autoplay.OFF)
    play(game, "5D>f1")
    assert position_text(game) == board(game, "s1: 9C AH\nf1: 6S 5D")


def test_autoplay_all_plays_every_card_that_fits() -> None:
    game = antares("s1: 9C 6C\ns2: 5D\nf1: 6S\nhome: 5C", Autoplay.ALL)
    play(game, "5D>f1")
    assert position_text(game) == board(game, "s1: 9C\nf1: 6S 5D\nhome: 6C")


def test_safe_autoplay_keeps_a_card_the_other_colour_may_still_need() -> None:
    game = antares("s1: 9C 6C\ns2: 5D\nf1: 6S\nhome: 5C", Autoplay.SAFE)
    play(game, "5D>f1")
    assert position_text(game) == board(game, "s1: 9C 6C\nf1: 6S 5D\nhome: 5C")


def test_safe_is_the_default_autoplay() -> None:
    assert Antares.new(1).options.autoplay is Autoplay.SAFE


@pytest.mark.parametrize("autoplay", [Autoplay.SAFE, Autoplay.ALL])
def test_autoplay_plays_aces_and_twos_and_chains_as_cards_are_uncovered(autoplay: Autoplay) -> None:
    game = antares("s1: 9C 2H AH\ns2: 5D\nf1: 6S\nc1: AS", autoplay)
    play(game, "5D>f1")
    assert position_text(game) == board(game, "s1: 9C\nf1: 6S 5D\nhome: AS 2H")


@pytest.mark.parametrize(
    ("home", "played"),
    [
        ("2C 2S 2H", True),
        ("3C 4S 2H", True),
        ("2C AS 2H", False),
        ("AC 2S 2H", False),
        ("2S 2H", False),
    ],
)
def test_safe_autoplay_plays_rank_r_once_both_other_colour_foundations_hold_r_minus_1(home: str, played: bool) -> None:
    game = antares(f"s1: 9C 3H\ns2: 5D\nf1: 6S\nhome: {home}", Autoplay.SAFE)
    play(game, "5D>f1")
    assert len(game.piles[HH]) == (3 if played else 2)
    assert [card_text(card) for card in game.piles[0]] == (["9C"] if played else ["9C", "3H"])


def test_safe_autoplay_of_a_black_card_looks_at_the_red_foundations() -> None:
    game = antares("s1: 9H 3C\ns2: 5D\nf1: 6S\nhome: 2C 2H 2D", Autoplay.SAFE)
    play(game, "5D>f1")
    assert position_text(game) == board(game, "s1: 9H\nf1: 6S 5D\nhome: 3C 2H 2D")


def test_autoplay_chains_across_piles_and_cells() -> None:
    game = antares("s1: 9C 2H\nc1: AH\nf2: 4D 3H\ns2: 5D\nf1: 6S", Autoplay.ALL)
    play(game, "5D>f1")
    assert position_text(game) == board(game, "s1: 9C\nf1: 6S 5D\nf2: 4D\nhome: 3H")


@pytest.mark.parametrize("autoplay", [Autoplay.SAFE, Autoplay.ALL])
def test_autoplay_belongs_to_the_players_move_and_one_undo_takes_both_back(autoplay: Autoplay) -> None:
    start = "s1: 9C 2H\nc1: AH\nf2: 4D 3H\ns2: 5D\nf1: 6S"
    game = antares(start, autoplay)
    play(game, "5D>f1")
    assert game.move_count == 1
    assert game.moves == [Move(1, 1, 4)]
    assert game.progress().home >= 2
    game.undo()
    assert position_text(game) == board(game, start)
    assert game.move_count == 0


@pytest.mark.parametrize("autoplay", list(Autoplay))
def test_autoplay_does_not_run_at_the_deal(autoplay: Autoplay) -> None:
    game = Antares.new(24, Options(autoplay=autoplay))
    assert game.piles[7][-1] == parse_card("AS")  # on top of f4, yet not sent home
    assert game.progress().home == 0


def test_autoplay_runs_after_the_first_player_move() -> None:
    game = Antares.new(24)
    play(game, "3D>c1")
    assert game.piles[HS] == [parse_card("AS")]  # it was on top of f4


def test_autoplay_can_finish_the_game() -> None:
    game = antares("f1: KC QC\ns1: KD\nhome: JC KS KH QD", Autoplay.SAFE)
    play(game, "QC>h")
    assert game.is_won()


# -- winning ----------------------------------------------------------------------------


def test_the_game_is_won_when_all_52_cards_are_home() -> None:
    game = antares("c1: KD\nhome: KC KS KH QD")
    assert not game.is_won()
    play(game, "KD>h")
    assert game.is_won()
    assert game.progress().home == 52
    assert game.progress().won
    assert not game.is_stuck()


def test_the_deal_24_worked_example_of_the_rules_text_counts_three_ordered_cards() -> None:
    # seeds/antares.md, "Worked example: deal 24": same-suit pairs 9D 8D, 9C 8C and JD TD.
    game = Antares.new(24)
    for text in ("AS>h", "8D>s4", "TD>s3", "5S>f4"):
        game.apply(game.parse_move(text))
    assert game.progress() == Progress(home=3, ordered=3, moves=4, won=False)
