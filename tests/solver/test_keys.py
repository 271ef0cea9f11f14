"""Canonical position keys: equal exactly for positions equal up to interchangeable piles.

Positions come from random play (hypothesis picks the deal and each move); their
"twins" are the same position with interchangeable piles shuffled. A twin must get
the same key, rebuild to the same position, and accept every move translated to it.
"""

from __future__ import annotations

from collections.abc import Callable

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from server.games import Antares, Autoplay, Game, Move, Options, Scorpion
from server.solver.keys import (
    antares_key,
    key_function,
    rebuild_antares,
    rebuild_scorpion,
    scorpion_key,
    translate,
)

SETTINGS = settings(deadline=None, max_examples=60, suppress_health_check=[HealthCheck.too_slow])
MAX_STEPS = 80
S_PILES, F_PILES, CELLS = range(4), range(4, 8), range(8, 12)


def walk(data: st.DataObject, game: Game, *, keep_stock: bool = False) -> Game:
    """Play up to MAX_STEPS legal moves picked by hypothesis (never the deal with ``keep_stock``)."""
    for _ in range(data.draw(st.integers(0, MAX_STEPS), label="steps")):
        moves = [move for move in game.legal_moves() if not (keep_stock and move.is_deal)]
        if not moves:
            break
        game.push(moves[data.draw(st.integers(0, len(moves) - 1), label="move")])
    return game


def antares_position(data: st.DataObject) -> Game:
    autoplay = data.draw(st.sampled_from(list(Autoplay)), label="autoplay")
    return walk(data, Antares.new(data.draw(st.integers(1, 10**6), label="deal"), Options(autoplay=autoplay)))


def scorpion_position(data: st.DataObject, *, dealt: bool) -> Game:
    game = walk(data, Scorpion.new(data.draw(st.integers(1, 10**6), label="deal")), keep_stock=True)
    if dealt:
        game.push(game.deal_move())
        walk(data, game)
    return game


def rearranged(game: Game, order: list[int]) -> Game:
    """``game``'s position with pile ``order[i]`` put in place ``i`` (its face-down count with it)."""
    return type(game)(game.deal, game.options, [list(game.piles[i]) for i in order], [game.hidden[i] for i in order])


def antares_twin(data: st.DataObject, game: Game) -> Game:
    """``game`` with its Scorpion piles, FreeCell piles and cells each shuffled among themselves."""
    order = [
        *data.draw(st.permutations(S_PILES), label="s piles"),
        *data.draw(st.permutations(F_PILES), label="f piles"),
        *data.draw(st.permutations(CELLS), label="cells"),
        *range(12, 16),
    ]
    return rearranged(game, order)


def scorpion_twin(data: st.DataObject, game: Game) -> Game:
    """``game`` with its interchangeable columns shuffled: 4-7 before the deal, all seven after."""
    if game.piles[Scorpion.STOCK]:
        columns = [0, 1, 2, *data.draw(st.permutations(range(3, 7)), label="columns 4-7")]
    else:
        columns = list(data.draw(st.permutations(range(7)), label="columns"))
    return rearranged(game, [*columns, *range(7, 12)])


def assert_translated_moves_match(game: Game, twin: Game) -> None:
    """Every legal move of ``game``, translated, is legal in ``twin`` and leads to the same key."""
    key_of = key_function(type(game))
    for move in game.legal_moves():
        twin_move = translate(move, game, twin)
        game.push(move)
        twin.apply(twin_move)  # checked: the translated move is legal in the twin
        assert key_of(twin) == key_of(game), (move, twin_move)
        twin.pop()
        game.pop()


# -- equal up to interchangeable piles ------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_antares_twins_with_shuffled_piles_and_cells_share_a_key(data: st.DataObject) -> None:
    game = antares_position(data)
    assert antares_key(antares_twin(data, game)) == antares_key(game)


@SETTINGS
@given(data=st.data())
def test_scorpion_columns_4_to_7_are_interchangeable_before_the_deal(data: st.DataObject) -> None:
    game = scorpion_position(data, dealt=False)
    assert scorpion_key(scorpion_twin(data, game)) == scorpion_key(game)


@SETTINGS
@given(data=st.data())
def test_scorpion_columns_are_all_interchangeable_after_the_deal(data: st.DataObject) -> None:
    game = scorpion_position(data, dealt=True)
    assert scorpion_key(scorpion_twin(data, game)) == scorpion_key(game)


# -- different otherwise -------------------------------------------------------------------------


@SETTINGS
@given(data=st.data())
def test_scorpion_columns_1_to_3_are_told_apart_before_the_deal(data: st.DataObject) -> None:
    """Each of columns 1-3 gets its own stock card, so swapping two of them is another position."""
    game = scorpion_position(data, dealt=False)
    a, b = data.draw(st.sampled_from([(0, 1), (0, 2), (1, 2)]), label="swapped")
    assume(game.piles[a] != game.piles[b])
    order = list(range(12))
    order[a], order[b] = b, a
    assert scorpion_key(rearranged(game, order)) != scorpion_key(game)


@SETTINGS
@given(data=st.data())
def test_turning_up_a_face_down_card_changes_the_scorpion_key(data: st.DataObject) -> None:
    game = scorpion_position(data, dealt=data.draw(st.booleans(), label="dealt"))
    covered = [i for i in range(7) if game.hidden[i]]
    assume(covered)
    column = data.draw(st.sampled_from(covered), label="column")
    hidden = list(game.hidden)
    hidden[column] -= 1
    turned = Scorpion(game.deal, game.options, [list(pile) for pile in game.piles], hidden)
    assert scorpion_key(turned) != scorpion_key(game)


@SETTINGS
@given(data=st.data())
def test_a_scorpion_pile_and_a_freecell_pile_are_not_interchangeable(data: st.DataObject) -> None:
    game = antares_position(data)
    s = data.draw(st.sampled_from(S_PILES), label="s pile")
    f = data.draw(st.sampled_from(F_PILES), label="f pile")
    assume(game.piles[s] != game.piles[f])
    order = list(range(16))
    order[s], order[f] = f, s
    assert antares_key(rearranged(game, order)) != antares_key(game)


@SETTINGS
@given(data=st.data())
def test_every_legal_move_leads_to_a_position_with_another_key(data: st.DataObject) -> None:
    """Pointless moves are not moves, so no legal move leaves the position (as a key) unchanged."""
    if data.draw(st.booleans(), label="antares"):
        game = antares_position(data)
    else:
        game = scorpion_position(data, dealt=data.draw(st.booleans(), label="dealt"))
    key_of = key_function(type(game))
    before = key_of(game)
    for move in game.legal_moves():
        game.push(move)
        assert key_of(game) != before, move
        game.pop()


# -- rebuild and translate --------------------------------------------------------------------------


def _check_rebuild(game: Game, key_of: Callable[[Game], bytes], rebuild: Callable[[bytes, Game], Game]) -> None:
    key = key_of(game)
    rebuilt = rebuild(key, game)
    assert key_of(rebuilt) == key
    assert len(rebuilt.legal_moves()) == len(game.legal_moves())
    assert rebuilt.is_won() == game.is_won()
    assert sorted(map(len, rebuilt.piles)) == sorted(map(len, game.piles))


@SETTINGS
@given(data=st.data())
def test_rebuilt_antares_position_has_the_same_key_and_moves(data: st.DataObject) -> None:
    _check_rebuild(antares_position(data), antares_key, rebuild_antares)


@SETTINGS
@given(data=st.data())
def test_rebuilt_scorpion_position_has_the_same_key_and_moves(data: st.DataObject) -> None:
    game = scorpion_position(data, dealt=data.draw(st.booleans(), label="dealt"))
    _check_rebuild(game, scorpion_key, rebuild_scorpion)


@SETTINGS
@given(data=st.data())
def test_antares_moves_translate_to_twins(data: st.DataObject) -> None:
    game = antares_position(data)
    assert_translated_moves_match(game, antares_twin(data, game))


@SETTINGS
@given(data=st.data())
def test_scorpion_moves_translate_to_twins(data: st.DataObject) -> None:
    game = scorpion_position(data, dealt=data.draw(st.booleans(), label="dealt"))
    assert_translated_moves_match(game, scorpion_twin(data, game))


def test_translate_maps_the_stock_deal_to_the_deal() -> None:
    game = Scorpion.new(617)
    twin = rearranged(game, [0, 1, 2, 6, 5, 4, 3, *range(7, 12)])
    assert translate(game.deal_move(), game, twin) == Move(Scorpion.STOCK, 3, Scorpion.STOCK)
