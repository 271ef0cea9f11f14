"""Properties of both games under random play: what must hold in every position, whatever is played.

Hypothesis picks the variant, the deal (from every generator range), the autoplay mode
and each move, as an index into ``legal_moves()`` (one extra index means undo), so a
failure shrinks to a short line of play that anyone can replay.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.games import (
    Antares,
    Autoplay,
    Deal,
    FullView,
    Game,
    IllegalMove,
    Move,
    NothingToUndo,
    Options,
    PileKind,
    PilePatch,
    PublicPiles,
    Scorpion,
)
from server.games.deals import FIRST_MT_DEAL, MAX_MS_DEAL, MAX_PLAIN_DEAL
from tests.thorough import examples

SETTINGS = settings(deadline=None, max_examples=examples(150), suppress_health_check=[HealthCheck.too_slow])
MAX_STEPS = 150
UNDO_ODDS = 8
#: Scorpion's stock deals to columns 1-3 (pile numbers 0-2); until it is dealt each of them has its own role.
SCORPION_STOCK_COLUMNS = 3


def ms(number: int) -> Deal:
    return Deal(number, ms=True)


DEALS = st.one_of(
    st.integers(1, FIRST_MT_DEAL - 1).map(Deal),
    st.integers(1, 2**31 - 1).map(ms),
    st.integers(2**31, 2**32 - 1).map(ms),
    st.integers(2**32, MAX_MS_DEAL).map(ms),
    st.integers(FIRST_MT_DEAL, 10**9).map(Deal),
    st.integers(10**16, MAX_PLAIN_DEAL).map(Deal),
)


@st.composite
def new_games(draw: st.DrawFn) -> Game:
    variant = draw(st.sampled_from([Scorpion, Antares]), label="variant")
    options = Options(autoplay=draw(st.sampled_from(list(Autoplay)), label="autoplay"))
    return variant.new(draw(DEALS, label="deal"), options)


@dataclass(frozen=True)
class Step:
    """One action of a random walk: ``move`` played (None: the last move was undone).

    ``text`` is the move's text in the position it was played in ("undo" for an undo).
    """

    move: Move | None
    text: str
    before: PublicPiles
    patches: tuple[PilePatch, ...]


def walk(data: st.DataObject, game: Game, *, undo: bool = True) -> Iterator[Step]:
    """Play up to MAX_STEPS actions chosen by hypothesis: a legal move by its index, or
    (with ``undo``, about one time in UNDO_ODDS, and whenever no move is left) an undo.

    Yields after each action, the game already changed.
    """
    steps = data.draw(st.integers(0, MAX_STEPS), label="steps")
    for _ in range(steps):
        moves = game.legal_moves()
        can_undo = undo and game.move_count > 0
        if not moves and not can_undo:
            return
        before = game.public_piles()
        # The undo choice is the largest value, so shrinking turns undos into moves.
        if can_undo and (not moves or data.draw(st.integers(1, UNDO_ODDS), label="undo?") == UNDO_ODDS):
            yield Step(None, "undo", before, game.undo())
            continue
        move = moves[data.draw(st.integers(0, len(moves) - 1), label="move")]
        text = game.move_text(move)
        yield Step(move, text, before, game.apply(move))


State = tuple[FullView, list[Move], list[Move]]


def state(game: Game) -> State:
    """What undo must restore: every card, the legal moves and the line of play."""
    return game.full_view(), game.legal_moves(), game.moves


def assert_52_distinct_cards(game: Game) -> None:
    cards = [card for pile in game.piles for card in pile]
    assert sorted(cards) == list(range(52))


def patched(view: PublicPiles, patches: tuple[PilePatch, ...]) -> PublicPiles:
    """``view`` with ``patches`` applied, as a client applies them."""
    assert len({patch.pile for patch in patches}) == len(patches), "one patch per pile"
    piles = list(view)
    for patch in patches:
        assert 0 <= patch.keep <= len(piles[patch.pile])
        piles[patch.pile] = piles[patch.pile][: patch.keep] + patch.add
    return tuple(piles)


def interchangeable(game: Game, a: int, b: int) -> bool:
    """Whether ``a`` and ``b`` are distinct empty piles that ``legal_moves`` treats as one target.

    That is two empty cells, or two empty tableau piles of one role: Antares's Scorpion
    piles, Antares's FreeCell piles, and Scorpion's columns, except that while the stock
    is undealt each of columns 1-3 has a role of its own (it gets its own stock card), so
    then only columns 4-7 are interchangeable. Foundations (one per suit) and the stock
    never are.
    """
    if a == b or not (0 <= a < len(game.PILES) and 0 <= b < len(game.PILES)) or game.piles[a] or game.piles[b]:
        return False
    kind = game.PILES[a].kind
    if kind is not game.PILES[b].kind:
        return False
    if kind in (PileKind.CELL, PileKind.FREECELL):
        return True
    if kind is PileKind.SCORPION:
        if game.STOCK >= 0 and game.piles[game.STOCK]:
            return a >= SCORPION_STOCK_COLUMNS and b >= SCORPION_STOCK_COLUMNS
        return True
    return False


# -- the properties ---------------------------------------------------------------------------


@SETTINGS
@given(game=new_games(), data=st.data())
def test_always_52_distinct_cards(game: Game, data: st.DataObject) -> None:
    assert_52_distinct_cards(game)
    for _ in walk(data, game):
        assert_52_distinct_cards(game)


@SETTINGS
@given(game=new_games(), data=st.data())
def test_undo_restores_the_exact_earlier_state(game: Game, data: st.DataObject) -> None:
    # Earlier states, one per move of the current line; undone moves are popped.
    earlier: list[State] = []
    current = state(game)
    for step in walk(data, game):
        if step.move is None:
            current = earlier.pop()
            assert state(game) == current
        else:
            earlier.append(current)
            current = state(game)
    # Then take everything back, down to the deal.
    while earlier:
        game.undo()
        assert state(game) == earlier.pop()
    assert game.move_count == 0
    assert game.deal is not None
    assert game.full_view() == type(game).new(game.deal, game.options).full_view()
    with pytest.raises(NothingToUndo):
        game.undo()


@SETTINGS
@given(game=new_games(), data=st.data())
def test_every_listed_move_applies(game: Game, data: st.DataObject) -> None:
    for _ in walk(data, game):
        before = state(game)
        for move in game.legal_moves():
            game.apply(move)  # must not raise
            game.undo()
            assert state(game) == before


@settings(deadline=None, max_examples=examples(80), suppress_health_check=[HealthCheck.too_slow])
@given(game=new_games(), data=st.data())
def test_unlisted_moves_are_rejected_and_change_nothing(game: Game, data: st.DataObject) -> None:
    """Every (source, count, target), out-of-range ones included, tried in the walk's last position."""
    for _ in walk(data, game):
        pass
    listed = game.legal_moves()
    listed_set = set(listed)
    before = state(game)
    pile_range = range(-1, len(game.PILES) + 1)
    tallest = max(len(pile) for pile in game.piles)
    for source in pile_range:
        for count in range(-1, tallest + 2):
            same_group = [move for move in listed if move.source == source and move.count == count]
            for target in pile_range:
                move = Move(source, count, target)
                if move in listed_set:
                    continue
                if any(interchangeable(game, other.target, target) for other in same_group):
                    # The same move to another interchangeable empty pile: accepted too.
                    game.apply(move)
                    game.undo()
                else:
                    try:
                        game.apply(move)
                    except IllegalMove:
                        pass
                    else:
                        raise AssertionError(f"{move} is not listed, yet apply accepted it")
                assert state(game) == before, move


@SETTINGS
@given(game=new_games(), data=st.data())
def test_patches_turn_the_old_public_view_into_the_new(game: Game, data: st.DataObject) -> None:
    for step in walk(data, game):
        assert patched(step.before, step.patches) == game.public_piles(), step.move


@SETTINGS
@given(game=new_games(), data=st.data())
def test_replaying_the_move_texts_rebuilds_the_game(game: Game, data: st.DataObject) -> None:
    texts: list[str] = []
    for step in walk(data, game):
        if step.move is None:
            texts.pop()
        else:
            texts.append(step.text)
    assert game.deal is not None
    again = type(game).replay(game.deal, game.options, texts)
    assert again.full_view() == game.full_view()
    assert again.moves == game.moves
    assert again.legal_moves() == game.legal_moves()


@SETTINGS
@given(game=new_games(), data=st.data())
def test_public_views_never_show_a_face_down_card(game: Game, data: st.DataObject) -> None:
    def check() -> None:
        view = game.public_piles()
        assert sum(pile.count(None) for pile in view) == sum(game.hidden)
        for pile, public, hidden in zip(game.piles, view, game.hidden, strict=True):
            assert public[:hidden] == (None,) * hidden
            assert public[hidden:] == tuple(pile[hidden:])

    check()
    for step in walk(data, game):
        check()
        for patch in step.patches:
            # A patch shows no more than the view it builds.
            assert patch.add == game.public_piles()[patch.pile][patch.keep :]
