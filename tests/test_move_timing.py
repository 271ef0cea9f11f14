"""Anti-cheat signals from move times and lines (pure), and account-name skeletons."""

from __future__ import annotations

import random

from server.competition.move_timing import gaps, played_line, signals
from server.storage.name_skeleton import name_skeleton

LINE = [f"{i}C>c" for i in range(30)]


def times_from(gaps_ms: list[int]) -> list[int]:
    times = [1_000_000]
    for gap in gaps_ms:
        times.append(times[-1] + gap)
    return times


def test_a_human_looking_game_raises_nothing() -> None:
    rng = random.Random(7)
    human = times_from([rng.randint(800, 9000) for _ in range(29)])
    assert signals(LINE, human, par_line=["AS>h"]) == []


def test_fast_moves_are_flagged() -> None:
    rng = random.Random(7)
    reasons = signals(LINE, times_from([rng.randint(20, 200) for _ in range(29)]), par_line=[])
    assert any(reason.startswith("fast") for reason in reasons)


def test_metronome_regular_moves_are_flagged_even_when_slow() -> None:
    reasons = signals(LINE, times_from([2000 + (i % 3) * 10 for i in range(29)]), par_line=[])
    assert [reason.split(":")[0] for reason in reasons] == ["regular"]


def test_short_games_say_nothing_about_timing() -> None:
    assert signals(LINE[:5], times_from([50] * 4), par_line=[]) == []


def test_the_solvers_line_is_flagged_and_undone_moves_do_not_hide_it() -> None:
    entries = [LINE[0], "undo", *LINE[:3], "resign resigned"]
    assert played_line(entries) == LINE[:3]
    reasons = signals(entries, times_from([5000, 700, 12000, 3000, 900]), par_line=LINE[:3])
    assert reasons == ["line: the 3 moves are exactly the solver's par line"]


def test_gaps_are_differences() -> None:
    assert gaps([10, 15, 40]) == [5, 25]
    assert gaps([10]) == []


def test_names_collide_across_case_width_space_and_look_alike_scripts() -> None:
    ann = name_skeleton("Ann")
    assert name_skeleton("ANN") == ann
    assert name_skeleton("\u0410nn") == ann  # Cyrillic capital A
    assert name_skeleton("\uff21\uff4e\uff4e") == ann  # full-width
    assert name_skeleton("A nn") == ann
    assert name_skeleton("paypal") == name_skeleton("p\u0430yp\u0430l")  # Cyrillic small a
    assert name_skeleton("Bob") != ann
    assert name_skeleton("Anna") != ann
