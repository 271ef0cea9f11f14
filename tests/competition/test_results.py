"""Race ranking: finishers by time then moves, the others by progress, seat for exact ties."""

from __future__ import annotations

import random

from server.competition.results import Standing, rank


def finisher(seat: int, ms: int, moves: int) -> Standing:
    return Standing(seat, f"R{seat}", ms, moves, home=52, ordered=0)


def racer(seat: int, home: int, ordered: int, moves: int) -> Standing:
    return Standing(seat, f"R{seat}", None, moves, home=home, ordered=ordered)


def seats(standings: list[Standing]) -> list[int]:
    return [result.seat for result in rank(standings)]


def test_faster_finisher_wins_even_with_more_moves() -> None:
    assert seats([finisher(0, 90_000, 50), finisher(1, 80_000, 120)]) == [1, 0]


def test_fewer_moves_break_equal_times() -> None:
    assert seats([finisher(0, 80_000, 70), finisher(1, 80_000, 60)]) == [1, 0]


def test_every_finisher_ranks_above_every_non_finisher() -> None:
    assert seats([racer(0, 51, 0, 10), finisher(1, 10**7, 999)]) == [1, 0]


def test_non_finishers_by_home_then_ordered_then_fewer_moves() -> None:
    standings = [
        racer(0, home=10, ordered=5, moves=30),
        racer(1, home=12, ordered=0, moves=90),
        racer(2, home=10, ordered=7, moves=50),
        racer(3, home=10, ordered=5, moves=20),
    ]
    assert seats(standings) == [1, 2, 3, 0]


def test_seat_breaks_exact_ties() -> None:
    assert seats([finisher(3, 5, 5), finisher(1, 5, 5)]) == [1, 3]
    assert seats([racer(2, 4, 4, 4), racer(0, 4, 4, 4)]) == [0, 2]


def test_results_carry_places_and_what_each_racer_did() -> None:
    results = rank([racer(1, home=8, ordered=3, moves=40), finisher(0, 61_000, 77)])
    assert [(r.place, r.seat, r.name, r.finished, r.time_ms, r.moves, r.home) for r in results] == [
        (1, 0, "R0", True, 61_000, 77, 52),
        (2, 1, "R1", False, None, 40, 8),
    ]


def test_order_does_not_depend_on_input_order() -> None:
    standings = [finisher(0, 7, 3), finisher(1, 7, 3), racer(2, 3, 1, 9), racer(3, 3, 1, 9), racer(4, 5, 0, 2)]
    expected = rank(standings)
    rng = random.Random(5)
    for _ in range(20):
        rng.shuffle(standings)
        assert rank(standings) == expected


def test_no_racers_no_results() -> None:
    assert rank([]) == []
