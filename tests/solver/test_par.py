"""Par: shortening a winning line never lengthens it, keeps it winning, and cuts detours."""

from __future__ import annotations

import functools

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from server.games import Antares, Autoplay, Game, IllegalMove, Move, Options, PileKind, Scorpion
from server.solver import Budget, Solved
from server.solver.best_first import best_first
from server.solver.par import shorten
from server.solver.scorpion_search import depth_first_scorpion
from tests.games.positions import antares, play, scorpion
from tests.thorough import examples

BUDGET = Budget(seconds=10)
PAR_SECONDS = 1.0


def found_line(game: Game) -> tuple[Move, ...]:
    """The line a search finds, before any shortening."""
    search = best_first if isinstance(game, Antares) else depth_first_scorpion
    result = search(game, BUDGET)
    assert isinstance(result, Solved)
    return result.moves


def assert_shortened_line_wins(game: Game, line: tuple[Move, ...]) -> tuple[Move, ...]:
    """Shorten ``line``; check the result is no longer, still wins, and ``game`` is untouched."""
    before = game.full_view(), game.moves
    shorter = shorten(game, line, PAR_SECONDS)
    assert (game.full_view(), game.moves) == before
    assert len(shorter) <= len(line)
    replay = game.copy()
    play(replay, *shorter)
    assert replay.is_won()
    return shorter


def cell_detours(game: Game, line: tuple[Move, ...]) -> list[tuple[int, Move, Move]]:
    """Places ``i`` along ``line`` where a card can go to a cell and straight back, with those two moves."""
    detours = []
    walker = game.copy()
    for i, next_move in enumerate(line):
        for move in walker.legal_moves():
            if Antares.PILES[move.target].kind is PileKind.CELL:
                walker.push(move)
                back = Move(move.target, 1, move.source)
                try:
                    walker.check(back)
                except IllegalMove:
                    pass
                else:
                    detours.append((i, move, back))
                walker.pop()
        walker.push(next_move)
    return detours


CASES = [
    *((Antares, deal, autoplay) for deal in (2, 24) for autoplay in Autoplay),
    (Scorpion, 5, Autoplay.SAFE),
    (Scorpion, 33, Autoplay.SAFE),
]


@pytest.mark.parametrize(
    ("variant", "deal", "autoplay"), CASES, ids=[f"{v.VARIANT}-{d}-{a.value}" for v, d, a in CASES]
)
def test_shortened_search_line_is_no_longer_and_still_wins(variant: type[Game], deal: int, autoplay: Autoplay) -> None:
    game = variant.new(deal, Options(autoplay=autoplay))
    assert_shortened_line_wins(game, found_line(game))


def test_card_sent_to_a_cell_and_back_is_cut_from_the_line() -> None:
    game = antares("s1: KH QH\nhome: KC KS KD JH")
    walker = game.copy()
    padded: tuple[Move, ...] = ()
    for text in ("QH>c1", "c1>s1", "QH>h", "KH>h"):
        move = walker.parse_move(text)
        walker.apply(move)
        padded = (*padded, move)
    shorter = assert_shortened_line_wins(game, padded)
    assert shorter == padded[2:]


@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_detour_inserted_into_a_real_line_is_removed(where: str) -> None:
    game = Antares.new(24, Options(autoplay=Autoplay.OFF))
    line = found_line(game)
    detours = cell_detours(game, line)
    assert detours
    i, there, back = detours[{"first": 0, "middle": len(detours) // 2, "last": -1}[where]]
    padded = (*line[:i], there, back, *line[i:])
    assert len(assert_shortened_line_wins(game, padded)) <= len(line)


@functools.cache
def line_and_detours(deal: int) -> tuple[tuple[Move, ...], list[tuple[int, Move, Move]]]:
    game = Antares.new(deal, Options(autoplay=Autoplay.OFF))
    line = found_line(game)
    return line, cell_detours(game, line)


@settings(deadline=None, max_examples=examples(20), suppress_health_check=[HealthCheck.too_slow])
@given(deal=st.sampled_from([2, 24]), data=st.data())
def test_several_detours_never_make_the_line_longer_than_without_them(deal: int, data: st.DataObject) -> None:
    line, detours = line_and_detours(deal)
    chosen = data.draw(st.lists(st.sampled_from(detours), min_size=1, max_size=3, unique_by=lambda d: d[0]))
    padded: list[Move] = []
    inserts = {i: (there, back) for i, there, back in chosen}
    for i, move in enumerate(line):
        if i in inserts:
            padded.extend(inserts[i])
        padded.append(move)
    game = Antares.new(deal, Options(autoplay=Autoplay.OFF))
    assert len(assert_shortened_line_wins(game, tuple(padded))) <= len(line)


def test_wandering_scorpion_line_is_cut_to_the_one_winning_deal() -> None:
    # The Ace of spades in the stock completes the suit; a depth-first line first moves
    # the King's column around, which the deal alone makes unnecessary.
    game = scorpion("1: KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S\nstock: AS\nhome: KC KH KD")
    line = found_line(game)
    shorter = assert_shortened_line_wins(game, line)
    assert shorter == (game.deal_move(),)


def test_already_short_line_is_kept() -> None:
    game = antares("s1: KD\nhome: KC KS KH QD")
    line = (game.parse_move("KD>h"),)
    assert shorten(game, line, PAR_SECONDS) == line
