"""A racer's hints: a winning move where every card is visible, never nothing while a move is legal."""

from __future__ import annotations

import random

from server.games import Antares, Autoplay, Options, Scorpion
from server.rooms.hints import hints_for
from server.solver.winning_hint import WinningHints


def test_antares_hints_never_run_dry_while_a_move_is_legal() -> None:
    """Issue 13: Antares hints used to run dry at move 7 with legal moves left."""
    chooser = random.Random(7)
    for deal in (24, 617):
        game = Antares.new(deal, Options(autoplay=Autoplay.SAFE))
        for _ in range(25):
            legal = game.legal_moves()
            if not legal or game.is_won():
                break
            hints = hints_for(game)
            assert hints, f"deal {deal}: no hint with {len(legal)} legal moves"
            legal_texts = {game.move_text(move) for move in legal}
            assert {hint.move for hint in hints} <= legal_texts
            game.push(chooser.choice(legal))


def test_the_first_antares_hint_is_on_a_winning_line_once_one_is_found() -> None:
    game = Antares.new(24, Options(autoplay=Autoplay.SAFE))
    winning = WinningHints()
    assert hints_for(game, winning)[0].reason != "it is on a winning line"  # hints never search
    assert winning.next_move(game) is not None  # the search (a worker process's, in the server)
    for _ in range(200):
        if game.is_won():
            break
        first = hints_for(game, winning)[0]
        assert first.reason == "it is on a winning line"
        game.push(game.parse_move(first.move))
    assert game.is_won()


def test_scorpion_hints_never_name_a_hidden_card() -> None:
    """With cards face down, no winning hint: only what the table shows."""
    game = Scorpion.new(617)
    assert all(hint.reason != "it is on a winning line" for hint in hints_for(game))
