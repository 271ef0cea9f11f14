"""What both games share: undo, the legal-move list, patches, views, replay, progress.

Most tests here are properties checked along random lines of play from real deals;
the rest pin the same behaviour on literal positions.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.games import (
    Antares,
    Autoplay,
    Game,
    IllegalMove,
    InvalidNotation,
    Move,
    NothingToUndo,
    Options,
    PileKind,
    PilePatch,
    Progress,
    PublicPiles,
    Scorpion,
    parse_card,
)
from server.games.position_text import position_text
from tests.games.positions import antares, board, play, rejection, reshuffle_unseen, scorpion

#: Each game with each set of options that changes how it plays.
SETUPS = [
    pytest.param(Scorpion, Options(), id="scorpion"),
    pytest.param(Antares, Options(autoplay=Autoplay.OFF), id="antares-off"),
    pytest.param(Antares, Options(autoplay=Autoplay.SAFE), id="antares-safe"),
    pytest.param(Antares, Options(autoplay=Autoplay.ALL), id="antares-all"),
]
DEALS = st.one_of(st.integers(1, 31999), st.integers(32000, 10**20 - 1))
SEEDS = st.integers(0, 2**32)
RULE_NAME = re.compile(r"^[a-z]+(-[a-z]+)*$")
STOCK = Scorpion.STOCK


def line_of_play(game: Game, seed: int, length: int) -> Iterator[Move]:
    """Play up to ``length`` random legal moves; yield each before it is played.

    The caller may look at the position before the move; it is played (through
    :meth:`Game.apply`, with its checks) when the caller asks for the next one.
    """
    rng = random.Random(seed)
    for _ in range(length):
        moves = game.legal_moves()
        if not moves:
            return
        move = rng.choice(moves)
        yield move
        game.apply(move)


def patched(view: PublicPiles, patches: tuple[PilePatch, ...]) -> PublicPiles:
    piles = list(view)
    for patch in patches:
        piles[patch.pile] = piles[patch.pile][: patch.keep] + patch.add
    return tuple(piles)


def interchangeable(game: Game, listed: int, other: int) -> bool:
    """Whether the empty piles ``listed`` and ``other`` are alike as targets."""
    if game.piles[listed] or game.piles[other]:
        return False
    kind = game.PILES[listed].kind
    if kind is not game.PILES[other].kind or kind in (PileKind.FOUNDATION, PileKind.STOCK):
        return False
    if isinstance(game, Scorpion) and game.piles[STOCK]:
        # Before the deal, columns 1-3 each get their own stock card.
        return listed == other or (listed >= 3 and other >= 3)
    return True


def candidate_moves(game: Game) -> list[Move]:
    """Every count (up to one beyond the pile's size) from every pile to every pile."""
    return [
        Move(source, count, target)
        for source, pile in enumerate(game.piles)
        for count in range(len(pile) + 2)
        for target in range(len(game.PILES))
    ]


def try_move(game: Game, move: Move) -> tuple[str, str] | None:
    """Apply ``move`` and undo it: None if it was accepted, else the rule and message it was
    refused with. Either way, checks that the position is as it was."""
    before = game.full_view()
    try:
        game.apply(move)
    except IllegalMove as refused:
        assert game.full_view() == before, f"the refused {move} changed the position"
        return refused.rule, str(refused)
    assert game.full_view() != before, f"{move} changed nothing"
    game.undo()
    assert game.full_view() == before
    return None


# -- undo ----------------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "options"), SETUPS)
@settings(deadline=None, max_examples=15)
@given(deal=DEALS, seed=SEEDS)
def test_undo_steps_back_exactly_one_move_at_a_time_to_the_deal(
    variant: type[Game], options: Options, deal: int, seed: int
) -> None:
    game = variant.new(deal, options)
    views = [game.full_view() for _ in line_of_play(game, seed, 80)]  # each taken before its move
    views.append(game.full_view())
    while game.move_count:
        views.pop()
        game.undo()
        assert game.full_view() == views[-1]
    assert len(views) == 1
    with pytest.raises(NothingToUndo):
        game.undo()
    assert game.full_view() == views[0]


def test_nothing_to_undo_at_the_deal() -> None:
    for game in (Scorpion.new(1), Antares.new(1)):
        with pytest.raises(NothingToUndo):
            game.undo()
        with pytest.raises(NothingToUndo):
            game.pop()


# -- the legal-move list --------------------------------------------------------------


def assert_lists_exactly_the_accepted_moves(game: Game) -> None:
    """legal_moves is deterministic, without repeats, and lists one of each class of moves apply accepts."""
    listed = game.legal_moves()
    assert game.legal_moves() == listed, "the same position lists the same moves in the same order"
    assert game.copy().legal_moves() == listed
    assert len(set(listed)) == len(listed), "no move is listed twice"
    for i, move in enumerate(listed):
        for other in listed[i + 1 :]:
            same_group = (move.source, move.count) == (other.source, other.count)
            assert not (same_group and interchangeable(game, move.target, other.target)), (move, other)

    candidates = candidate_moves(game)
    if game.STOCK >= 0:
        candidates.append(Move(STOCK, len(game.piles[STOCK]), STOCK))
    accepted = set()
    for move in candidates:
        answer = try_move(game, move)
        if answer is None:
            accepted.add(move)
        else:
            assert RULE_NAME.match(answer[0]), answer
            assert answer[1]
    assert set(listed) <= accepted
    for move in accepted - set(listed):
        assert any(
            (move.source, move.count) == (other.source, other.count)
            and interchangeable(game, other.target, move.target)
            for other in listed
        ), f"{move} is accepted but neither listed nor like a listed move"


@pytest.mark.parametrize(("variant", "options"), SETUPS)
@settings(deadline=None, max_examples=6)
@given(deal=DEALS, seed=SEEDS)
def test_legal_moves_are_exactly_the_moves_apply_accepts(
    variant: type[Game], options: Options, deal: int, seed: int
) -> None:
    game = variant.new(deal, options)
    for _ in line_of_play(game, seed, 25):
        assert_lists_exactly_the_accepted_moves(game)


#: Positions random play seldom reaches: empty piles before and after the deal, full cells, shifts.
CORNER_POSITIONS = [
    pytest.param(lambda: scorpion("1: KS QS 3D\n3: 8C\n5: 4D KC 2H\nstock: 4C 7D JS"), id="scorpion-empties-undealt"),
    pytest.param(lambda: scorpion("5: KS QS 3D\n6: <9C> KH\n7: 8C\nstock: 4C 7D JS"), id="scorpion-1-3-empty"),
    pytest.param(lambda: scorpion("1: KS QS 3D\n4: 5H\n5: 4D KC 2H\n6: <AH> <3H> KD"), id="scorpion-empties-dealt"),
    pytest.param(
        lambda: scorpion("1: <9S> KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H\n2: 5C AH\nstock: AS 7D JS"),
        id="scorpion-suit-ready",
    ),
    pytest.param(lambda: antares("s2: 3D KH 5C\nf1: 2C KS QH\nf3: 9H 8S 7D\nc1: QC\nhome: AS"), id="antares-empties"),
    pytest.param(
        lambda: antares("s1: 9H 8S 7D\ns2: TH\nf1: TS 9D 8C\nf2: KD\nc1: 2C\nc2: 3C\nc3: 4C\nhome: AC AH"),
        id="antares-one-free-cell",
    ),
    pytest.param(
        lambda: antares("s1: 2C\ns2: 4C\ns3: 6C\ns4: 8C\nf1: 2D\nf2: 4D\nf3: 6D\nf4: 8D\nc1: TC\nc2: QC\nc3: TD"),
        id="antares-crowded",
    ),
]


@pytest.mark.parametrize("make", CORNER_POSITIONS)
def test_legal_moves_are_exactly_the_moves_apply_accepts_in_corner_positions(make: Callable[[], Game]) -> None:
    game = make()
    assert_lists_exactly_the_accepted_moves(game)
    for move in game.legal_moves():
        game.apply(move)
        assert_lists_exactly_the_accepted_moves(game)
        game.undo()


@pytest.mark.parametrize(("variant", "options"), SETUPS)
@settings(deadline=None, max_examples=10)
@given(deal=DEALS, seed=SEEDS)
def test_every_legal_move_reads_back_from_its_text(variant: type[Game], options: Options, deal: int, seed: int) -> None:
    game = variant.new(deal, options)
    for _ in line_of_play(game, seed, 40):
        for move in game.legal_moves():
            assert game.parse_move(game.move_text(move)) == move


def test_a_rejected_move_changes_nothing() -> None:
    game = scorpion("1: <5H> 9C\n2: TC\nstock: 4C 7D JS")
    assert rejection(game, "9C>1").rule == "same-pile"
    assert rejection(game, Move(1, 1, 0)).rule == "build-in-suit"
    assert position_text(game) == board(game, "1: <5H> 9C\n2: TC\nstock: 4C 7D JS")
    assert game.move_count == 0


# -- patches and views -----------------------------------------------------------------


@pytest.mark.parametrize(("variant", "options"), SETUPS)
@settings(deadline=None, max_examples=15)
@given(deal=DEALS, seed=SEEDS)
def test_patches_turn_the_old_public_view_into_the_new_both_ways(
    variant: type[Game], options: Options, deal: int, seed: int
) -> None:
    game = variant.new(deal, options)
    for move in line_of_play(game, seed, 60):
        before = game.public_piles()
        forward = game.apply(move)
        after = game.public_piles()
        assert patched(before, forward) == after
        backward = game.undo()
        assert game.public_piles() == before
        assert patched(after, backward) == before


def test_a_turned_card_appears_in_the_patch_alone() -> None:
    game = scorpion("1: <5H> <2C> 9C\n2: TC")
    assert game.apply(game.parse_move("9C>2")) == (
        PilePatch(0, 1, (parse_card("2C"),)),
        PilePatch(1, 1, (parse_card("9C"),)),
    )
    assert game.undo() == (PilePatch(0, 1, (None, parse_card("9C"))), PilePatch(1, 1, ()))


def test_patches_of_a_suit_going_home() -> None:
    game = scorpion("1: <9S> KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H\n2: 5C AH")
    hearts = tuple(range(26, 39))
    assert game.apply(game.parse_move("AH>1")) == (
        PilePatch(0, 0, (parse_card("9S"),)),
        PilePatch(1, 1, ()),
        PilePatch(10, 0, hearts),
    )


def test_patches_of_the_stock_deal_never_show_the_stock() -> None:
    game = scorpion("1: 5H\n3: TD\nstock: 4C 7D JS")
    c = parse_card
    assert game.apply(game.deal_move()) == (
        PilePatch(0, 1, (c("4C"),)),
        PilePatch(1, 0, (c("7D"),)),
        PilePatch(2, 1, (c("JS"),)),
        PilePatch(STOCK, 0, ()),
    )
    assert game.undo() == (
        PilePatch(0, 1, ()),
        PilePatch(1, 0, ()),
        PilePatch(2, 1, ()),
        PilePatch(STOCK, 0, (None, None, None)),
    )


def test_patches_of_an_antares_move_include_its_autoplay() -> None:
    game = antares("s1: 9C AH\ns2: 5D\nf1: 6S", Autoplay.SAFE)
    assert game.apply(game.parse_move("5D>f1")) == (
        PilePatch(0, 1, ()),
        PilePatch(1, 0, ()),
        PilePatch(4, 1, (parse_card("5D"),)),
        PilePatch(14, 0, (parse_card("AH"),)),
    )


def test_the_public_view_hides_face_down_cards_and_the_full_view_has_them() -> None:
    game = Scorpion.new(1)
    c = parse_card
    public = game.public_piles()
    assert public[0] == (None, None, None, c("AS"), c("4H"), c("TH"), c("8D"))
    assert public[4] == tuple(c(t) for t in ["5D", "5S", "9D", "5C", "3S", "7D", "8C"])
    assert public[STOCK] == (None, None, None)
    full = game.full_view()
    assert full.piles[0] == tuple(c(t) for t in ["JD", "5H", "KH", "AS", "4H", "TH", "8D"])
    assert full.piles[STOCK] == (c("6H"), c("2H"), c("9C"))  # bottom first: 9C is dealt first
    assert full.hidden == (3, 3, 3, 3, 0, 0, 0, 3, 0, 0, 0, 0)


@pytest.mark.parametrize(("variant", "options"), SETUPS)
@settings(deadline=None, max_examples=10)
@given(deal=DEALS, seed=SEEDS)
def test_the_public_view_is_the_full_view_with_face_down_cards_blanked_and_every_top_card_face_up(
    variant: type[Game], options: Options, deal: int, seed: int
) -> None:
    game = variant.new(deal, options)
    for _ in line_of_play(game, seed, 40):
        full = game.full_view()
        expected = tuple((None,) * hidden + pile[hidden:] for pile, hidden in zip(full.piles, full.hidden, strict=True))
        assert game.public_piles() == expected
        for i, (pile, hidden) in enumerate(zip(full.piles, full.hidden, strict=True)):
            if i != game.STOCK:
                assert hidden < len(pile) or not pile


# -- replay and copy ---------------------------------------------------------------------


@pytest.mark.parametrize(("variant", "options"), SETUPS)
@settings(deadline=None, max_examples=15)
@given(deal=DEALS, seed=SEEDS)
def test_replay_of_the_move_texts_rebuilds_the_same_game(
    variant: type[Game], options: Options, deal: int, seed: int
) -> None:
    game = variant.new(deal, options)
    texts = [game.move_text(move) for move in line_of_play(game, seed, 60)]
    again = variant.replay(deal, options, texts)
    assert again.full_view() == game.full_view()
    assert again.moves == game.moves
    assert again.progress() == game.progress()
    assert again.legal_moves() == game.legal_moves()


def test_replay_stops_at_the_first_bad_move() -> None:
    with pytest.raises(IllegalMove) as refused:
        Scorpion.replay(1, None, ["deal", "deal"])
    assert refused.value.rule == "stock-dealt"
    with pytest.raises(InvalidNotation):
        Scorpion.replay(1, None, ["deal", "nonsense"])


def test_a_copy_is_independent_and_keeps_the_history() -> None:
    game = Scorpion.new(617)
    play(game, "deal")
    twin = game.copy()
    assert twin.full_view() == game.full_view()
    assert twin.moves == game.moves
    before = game.full_view()
    twin.undo()
    assert game.full_view() == before
    assert twin.full_view() == Scorpion.new(617).full_view()
    play(twin, twin.legal_moves()[0])
    assert game.full_view() == before
    assert game.move_count == 1


# -- progress, winning, stuck -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "progress"),
    [
        ("1: <5D> <2C> 9C 8C 7C 3D\n2: KS QS JS 4D\nhome: KH", Progress(home=13, ordered=4, moves=0, won=False)),
        ("1: <TC> 9C", Progress(home=0, ordered=0, moves=0, won=False)),  # a face-down card is not counted
        ("1: AS KC\n2: 2D AD", Progress(home=0, ordered=1, moves=0, won=False)),
        ("home: KC KS KH KD", Progress(home=52, ordered=0, moves=0, won=True)),
    ],
)
def test_scorpion_progress(text: str, progress: Progress) -> None:
    assert scorpion(text).progress() == progress


@pytest.mark.parametrize(
    ("text", "progress"),
    [
        ("s1: 9H 8H 7C\nf1: 9D 8S 7S\nc1: 6S\nhome: 5C 2D", Progress(home=7, ordered=2, moves=0, won=False)),
        # Same-suit pairs on both kinds of pile (seeds/antares.md, decision 14): 8H on 9C is a
        # FreeCell build but not a same-suit pair.
        ("f1: 9C 8H 7S 6S", Progress(home=0, ordered=1, moves=0, won=False)),
        ("s1: 9C 8H 7S 6S", Progress(home=0, ordered=1, moves=0, won=False)),
        ("f1: 9C 8C", Progress(home=0, ordered=1, moves=0, won=False)),
        ("home: KC KS KH KD", Progress(home=52, ordered=0, moves=0, won=True)),
    ],
)
def test_antares_progress(text: str, progress: Progress) -> None:
    assert antares(text).progress() == progress


def test_progress_counts_the_moves_of_the_current_line_only() -> None:
    game = scorpion("1: 9H\n2: 8H\n3: 5C\nstock: 4C 7D JS")
    play(game, "8H>1", "deal")
    assert game.progress() == Progress(home=0, ordered=1, moves=2, won=False)
    game.undo()
    assert game.progress().moves == 1


@pytest.mark.parametrize(
    ("game", "stuck"),
    [
        pytest.param(scorpion("1: 5H\n2: 9S"), True, id="scorpion-no-move"),
        pytest.param(scorpion("1: 5H\n2: 9S\nstock: 4C 7D JS"), False, id="scorpion-stock-left"),
        pytest.param(scorpion("1: 5H\n2: 6H"), False, id="scorpion-a-build"),
        pytest.param(scorpion("home: KC KS KH KD"), False, id="scorpion-won"),
        pytest.param(
            antares("s1: 2C\ns2: 4C\ns3: 6C\ns4: 8C\nf1: 2D\nf2: 4D\nf3: 6D\nf4: 8D\nc1: TC\nc2: QC\nc3: TD\nc4: QD"),
            True,
            id="antares-no-move",
        ),
        pytest.param(
            antares("s1: 2C\ns2: 4C\ns3: 6C\ns4: 8C\nf1: 2D\nf2: 4D\nf3: 6D\nf4: 8D\nc1: TC\nc2: QC\nc3: TD"),
            False,
            id="antares-free-cell",
        ),
        pytest.param(antares("home: KC KS KH KD"), False, id="antares-won"),
    ],
)
def test_a_game_is_stuck_when_no_legal_move_remains_and_it_is_not_won(game: Game, stuck: bool) -> None:
    assert game.is_stuck() is stuck
    assert (not game.legal_moves()) is (stuck or game.is_won())


# -- errors reveal no hidden card -----------------------------------------------------------


@settings(deadline=None, max_examples=10)
@given(deal=DEALS, seed=SEEDS)
def test_every_answer_to_a_move_is_the_same_whatever_the_unseen_cards_are(deal: int, seed: int) -> None:
    game = Scorpion.new(deal)
    for _ in line_of_play(game, seed, 25):
        twin = reshuffle_unseen(game, seed)
        assert twin.public_piles() == game.public_piles()
        assert twin.legal_moves() == game.legal_moves()
        for move in candidate_moves(game):
            assert try_move(twin, move) == try_move(game, move), move


@pytest.mark.parametrize("move", ["5H>2", "5H>h", "5H 1", "5h>c"])
def test_naming_a_face_down_or_stock_card_gets_the_answer_for_an_absent_card(move: str) -> None:
    answers = []
    for text in ("1: <5H> 9C\n2: TC", "1: 9C\n2: TC\nstock: 5H", "1: 9C\n2: TC"):
        game = scorpion(text)
        with pytest.raises(IllegalMove) as refused:
            game.parse_move(move)
        answers.append((refused.value.rule, str(refused.value)))
    assert answers[0] == answers[1] == answers[2]
