"""Winning hints: follow them and win; leave the line and still get a winning move;
never a hint computed from cards the player cannot see."""

from __future__ import annotations

import pytest

from server.games import Antares, Autoplay, Game, Move, Options, PileKind, Scorpion
from server.solver import Budget, Solved, Unwinnable, solve_position
from server.solver.winning_hint import WinningHints
from tests.games.positions import antares, play, scorpion

HINT_BUDGET = Budget(seconds=3)
CHECK_BUDGET = Budget(seconds=10)


def hint(hints: WinningHints, game: Game) -> Move | None:
    """``hints.next_move(game)``, checking that asking changes nothing in the game."""
    before = game.full_view(), game.moves
    move = hints.next_move(game)
    assert (game.full_view(), game.moves) == before
    return move


def follow(hints: WinningHints, game: Game, limit: int = 300) -> None:
    """Play hint after hint (each checked by the engine) until there is none."""
    for _ in range(limit):
        move = hint(hints, game)
        if move is None:
            return
        play(game, move)
    pytest.fail("hints never ran out")


@pytest.mark.parametrize("autoplay", list(Autoplay), ids=lambda a: a.value)
def test_following_the_hints_wins_antares_deal_24(autoplay: Autoplay) -> None:
    game = Antares.new(24, Options(autoplay=autoplay))
    follow(WinningHints(HINT_BUDGET), game)
    assert game.is_won()


@pytest.mark.parametrize("autoplay", [Autoplay.OFF, Autoplay.SAFE], ids=lambda a: a.value)
def test_after_leaving_the_line_the_hint_still_leads_to_a_win(autoplay: Autoplay) -> None:
    game = Antares.new(24, Options(autoplay=autoplay))
    hints = WinningHints(HINT_BUDGET)
    for step in range(60):
        move = hint(hints, game)
        assert move is not None
        others = [other for other in game.legal_moves() if other != move]
        if step % 12 != 5 or not others:
            play(game, move)
            continue
        play(game, others[step % len(others)])  # the player goes their own way
        move = hint(hints, game)
        if move is None:
            assert isinstance(solve_position(game, CHECK_BUDGET, par_seconds=0.0), Unwinnable)
            return
        play(game, move)
        rest = solve_position(game, CHECK_BUDGET, par_seconds=0.0)
        assert isinstance(rest, Solved), "the hinted move lost the game"
        replay = game.copy()
        play(replay, *rest.moves)
        assert replay.is_won()
    follow(hints, game)
    assert game.is_won()


def test_hints_survive_the_player_choosing_another_empty_cell_or_pile() -> None:
    """Empty cells (and empty piles of one kind) are interchangeable: a player who takes
    another one than the hint names is still on the winning line."""
    game = Antares.new(24, Options(autoplay=Autoplay.OFF))
    hints = WinningHints(HINT_BUDGET)
    swapped = 0
    for _ in range(300):
        move = hint(hints, game)
        if move is None:
            break
        kind = game.PILES[move.target].kind
        if kind in (PileKind.CELL, PileKind.FREECELL, PileKind.SCORPION) and not game.piles[move.target]:
            twins = [i for i, spec in enumerate(game.PILES) if spec.kind is kind and not game.piles[i]]
            if twins[-1] != move.target:
                move = Move(move.source, move.count, twins[-1])
                swapped += 1
        play(game, move)
    assert game.is_won()
    assert swapped > 0


def test_no_hint_in_a_won_game() -> None:
    assert hint(WinningHints(HINT_BUDGET), antares("home: KC KS KH KD")) is None


def test_no_hint_in_a_lost_position() -> None:
    game = antares(
        "s1: AC 9D\ns2: AS 9H\ns3: AH 9S\ns4: AD 9C\nf1: 5C\nf2: 5S\nf3: 5H\nf4: 5D\nc1: 2C\nc2: 2S\nc3: 2H\nc4: 2D"
    )
    assert hint(WinningHints(HINT_BUDGET), game) is None


# -- Scorpion: only with every card in sight ---------------------------------------------------------


def test_no_hint_at_a_scorpion_deal_even_a_winnable_one() -> None:
    game = Scorpion.new(5)
    assert isinstance(solve_position(game, CHECK_BUDGET), Solved)
    assert hint(WinningHints(HINT_BUDGET), game) is None


def test_no_hint_while_a_card_is_face_down() -> None:
    # Winnable, but only for someone who knows QS lies under KS.
    game = scorpion("1: <QS> KS\n2: JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS")
    assert isinstance(solve_position(game, CHECK_BUDGET), Solved)
    assert hint(WinningHints(HINT_BUDGET), game) is None


def test_no_hint_while_the_stock_is_undealt() -> None:
    # Every table card is face up; the deal wins, but that would tell the stock card.
    game = scorpion("1: KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S\nstock: AS\nhome: KC KH KD")
    assert isinstance(solve_position(game, CHECK_BUDGET), Solved)
    assert hint(WinningHints(HINT_BUDGET), game) is None


def test_fully_face_up_scorpion_position_gets_a_winning_hint() -> None:
    game = scorpion("1: QS KS\n2: JS TS 9S 8S 7S 6S 5S 4S 3S 2S AS\n3: KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H\n4: AH")
    hints = WinningHints(HINT_BUDGET)
    assert hint(hints, game) is not None
    follow(hints, game)
    assert game.is_won()


def test_hints_start_once_a_scorpion_deal_is_in_full_sight() -> None:
    game = Scorpion.new(5)
    result = solve_position(game, CHECK_BUDGET)
    assert isinstance(result, Solved)
    hints = WinningHints(HINT_BUDGET)
    for move in result.moves:
        if not any(game.hidden):
            break
        assert hint(hints, game) is None
        play(game, move)
    assert not game.is_won()
    follow(hints, game)
    assert game.is_won()
