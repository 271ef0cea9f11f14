"""A ranked attempt's log replayed against the solver's lines: choices, the share on the
line, and exploration (moves undone, positions revisited, dead ends)."""

from __future__ import annotations

import random

from server.competition.line_play import Play, line_steps, replay, standing_moves
from server.games import Antares, Game, Move
from server.solver.keys import antares_key
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line


def play(entries: list[str], lines: list[tuple[str, ...]] | None = None) -> Play:
    start = new_antares()
    return replay(Antares, str(ANTARES_DEAL), start.options, entries, [winning_line()] if lines is None else lines)


def at(moves: int) -> Game:
    """The position after the first ``moves`` moves of the line."""
    return Antares.replay(ANTARES_DEAL, new_antares().options, winning_line()[:moves])


def detour(game: Game) -> tuple[Move, Move]:
    """A legal move off the line from ``game`` and a move that takes the position back."""
    for move in game.legal_moves():
        after = game.copy()
        after.apply(move)
        for back in after.legal_moves():
            again = after.copy()
            again.apply(back)
            if antares_key(again) == antares_key(game):
                return move, back
    raise AssertionError("no reversible move here")


def test_the_solvers_line_is_all_on_the_line_and_explores_nothing() -> None:
    line = winning_line()
    result = play(list(line))
    assert (result.moves, result.standing, result.undos, result.exploration) == (len(line), len(line), 0, 0)
    assert result.won
    assert not result.broken
    assert result.choices == result.on_line > 10
    assert result.line_share == 1.0


def test_forced_moves_are_no_choices() -> None:
    line = winning_line()
    choices = sum(len(at(moves).legal_moves()) >= 2 for moves in range(len(line)))
    assert play(list(line)).choices == choices


def test_moves_made_and_undone_do_not_dilute_the_share_but_count_as_exploration() -> None:
    line = list(winning_line())
    game = at(10)
    off = next(m for m in game.legal_moves() if game.move_text(m) != line[10])
    entries = [*line[:10], game.move_text(off), "undo", *line[10:]]
    result = play(entries)
    assert result.line_share == 1.0
    assert (result.moves, result.standing, result.undos, result.exploration) == (len(line) + 1, len(line), 1, 1)


def test_a_move_to_another_empty_cell_is_still_on_the_line() -> None:
    line = list(winning_line())
    assert line[:2] == ["JD>c1", "6D>c2"]  # the line's first moves: to the first empty cells
    result = play(["JD>c3", "6D>c1"])
    assert (result.choices, result.on_line) == (2, 2)


def test_leaving_the_line_and_coming_back_revisits_a_position() -> None:
    line = list(winning_line())
    game = at(20)
    out, back = detour(game)
    after = game.copy()
    after.apply(out)
    entries = [*line[:20], game.move_text(out), after.move_text(back), *line[20:]]
    result = play(entries)
    assert result.revisits == 1
    assert result.undos == 0
    # The two moves off the line are standing choices; back on the line, the rest count.
    assert result.on_line == play(line).on_line
    assert result.choices >= result.on_line + 1
    assert result.won


def test_without_a_known_line_nothing_is_on_it() -> None:
    result = play(list(winning_line()), lines=[])
    assert result.on_line == 0
    assert result.choices > 0


def test_a_log_that_stops_replaying_is_broken_and_counted_up_to_there() -> None:
    line = list(winning_line())
    result = play([*line[:5], "KS>h", *line[5:]])
    assert result.broken
    assert result.moves == 5
    assert not result.won


def stuck_log() -> list[str]:
    """Moves to a lost position (no legal move left): random moves to positions not seen
    yet, from the first seed that gets stuck."""
    for seed in range(500):
        rng = random.Random(seed)
        game = new_antares()
        seen = {antares_key(game)}
        entries = []
        while fresh := [m for m in game.legal_moves() if antares_key(after(game, m)) not in seen]:
            move = rng.choice(fresh)
            entries.append(game.move_text(move))
            game.apply(move)
            seen.add(antares_key(game))
        if not game.legal_moves() and not game.is_won():
            return entries
    raise AssertionError("no random game got stuck")


def after(game: Game, move: Move) -> Game:
    twin = game.copy(history=False)
    twin.push(move)
    return twin


def test_a_lost_position_is_a_dead_end_and_resigning_is_no_move() -> None:
    entries = stuck_log()
    result = play([*entries, "resign resigned"])
    assert (result.moves, result.dead_ends, result.revisits) == (len(entries), 1, 0)
    backed_out = play([*entries, "undo", "undo"])
    assert backed_out.exploration == 3
    assert backed_out.standing == len(entries) - 2


def test_standing_moves_are_those_no_undo_took_back() -> None:
    assert standing_moves(["a", "b", "undo", "c", "undo", "undo", "d", "resign left"]) == {6}
    assert standing_moves(["undo", "a"]) == {1}


def test_line_steps_map_each_position_of_a_line_to_the_next() -> None:
    line = winning_line()
    steps = line_steps(new_antares(), [line, line[:3]])
    assert len(steps) == len(line)  # every position but the won one leads somewhere
    assert all(len(nexts) == 1 for nexts in steps.values())
    broken = line_steps(new_antares(), [("JD>c1", "KS>h", "6D>c2")])
    assert len(broken) == 1
