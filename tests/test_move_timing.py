"""The timing half of the anti-cheat check (pure), and account-name skeletons."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from server.competition.move_timing import (
    POPULATION,
    PaceNorm,
    gaps,
    machine_speed,
    norm_of,
    pace_part,
    play_times,
    played_line,
    spread,
    start_part,
)
from server.storage.name_skeleton import name_skeleton

LINE = [f"{i}C>c" for i in range(30)]


def times_from(gaps_ms: list[int], start: int = 1_000_000) -> list[int]:
    times = [start]
    for gap in gaps_ms:
        times.append(times[-1] + gap)
    return times


def person_gaps(rng: random.Random, n: int, median: float = 2000.0) -> list[int]:
    return [int(median * rng.lognormvariate(0, 0.9)) for _ in range(n)]


def test_gaps_are_differences() -> None:
    assert gaps([10, 15, 40]) == [5, 25]
    assert gaps([10]) == []


def test_the_played_line_leaves_out_undone_moves_and_resignations() -> None:
    entries = [LINE[0], "undo", *LINE[:3], "undo", "resign resigned"]
    assert played_line(entries) == LINE[:2]


def test_a_resignation_says_nothing_about_pace() -> None:
    assert play_times(["a", "undo", "resign left"], [1, 2, 90_000]) == [1, 2]
    assert play_times(["a", "b"], [1]) == []  # times missing: none


def test_machine_speed_by_the_median_gap_over_fifteen_moves() -> None:
    fast = times_from([100] * 20)
    assert machine_speed(fast, None) == "machine speed: median 100 ms between moves over 21 moves"
    assert machine_speed(fast[:14], None) is None  # too short to tell
    assert machine_speed(times_from([400] * 20), fast[0] - 500) is None


def test_machine_speed_by_the_total_time_from_the_start() -> None:
    # Half the moves instant, the others paced: the median looks human, the total does not.
    bursts = times_from([200, 5] * 8 + [200] * 3)
    assert statistics.median(gaps(bursts)) == 200
    assert machine_speed(bursts, bursts[0] - 50) == "machine speed: 20 moves in 2290 ms from the start"
    assert machine_speed(bursts, bursts[0] - 2000) is None  # a reading pause first: not impossible


def test_the_spread_is_the_deviation_of_the_logarithms() -> None:
    assert spread([1000, 1000, 1000]) == 0.0
    assert spread([1000, 4000]) == pytest.approx(math.log(2))
    assert spread([0, 20]) == 0.0  # below the floor, the same
    assert spread([5]) == 0.0


def test_the_norm_is_the_players_own_only_with_enough_gaps() -> None:
    rng = random.Random(3)
    assert norm_of([]) is POPULATION
    assert norm_of([[800] * 10, [900] * 10]) is POPULATION
    own = norm_of([person_gaps(rng, 30, 700), person_gaps(rng, 30, 700)])
    assert own.source == "own"
    assert 400 < own.median_ms < 1100
    assert 0.6 < own.spread < 1.2
    # Each race's own spread: a fast race and a slow one do not make an uneven player.
    paced = norm_of([[500] * 30, [3000] * 30])
    assert paced.spread == 0.0


def test_people_pace_says_nothing_and_a_steady_or_fast_replay_does() -> None:
    rng = random.Random(7)
    part, _ = pace_part(person_gaps(rng, 60), POPULATION)
    assert part == 0.0
    steady = [rng.randint(300, 1000) for _ in range(60)]  # the replay: 0.3 to 1.0 s
    part, words = pace_part(steady, POPULATION)
    assert part == 1.0
    assert "population norm" in words
    assert pace_part(steady[:10], POPULATION) == (0.0, "")  # too short to tell


def test_pace_is_relative_to_the_players_own_norm() -> None:
    rng = random.Random(11)
    quick = person_gaps(rng, 60, median=600)
    assert pace_part(quick, POPULATION)[0] == 1.0  # fast for people in general
    mine = PaceNorm(median_ms=600, spread=0.9, source="own")
    part, words = pace_part(quick, mine)
    assert part == 0.0  # but this player's usual pace
    assert "own norm" in words


def test_a_first_move_as_quick_as_any_other_is_a_studied_start() -> None:
    between = [1000] * 30
    assert start_part(900, between)[0] == 1.0
    assert start_part(8000, between)[0] == 0.0
    assert start_part(2750, between)[0] == pytest.approx(0.5)
    assert start_part(None, between) == (0.0, "")
    assert start_part(100, between[:5]) == (0.0, "")


def test_names_collide_across_case_width_space_and_look_alike_scripts() -> None:
    ann = name_skeleton("Ann")
    assert name_skeleton("ANN") == ann
    assert name_skeleton("\u0410nn") == ann  # Cyrillic capital A
    assert name_skeleton("\uff21\uff4e\uff4e") == ann  # full-width
    assert name_skeleton("A nn") == ann
    assert name_skeleton("paypal") == name_skeleton("p\u0430yp\u0430l")  # Cyrillic small a
    assert name_skeleton("Bob") != ann
    assert name_skeleton("Anna") != ann
