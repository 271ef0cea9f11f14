"""Survey statistics: Wilson intervals, percentiles and the summary, checked against hand and published values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.solver.statistics import DealRecord, Verdict, percentile, summarize, wilson_interval

S, W, U = Verdict.SOLVED, Verdict.UNWINNABLE, Verdict.UNKNOWN


@pytest.mark.parametrize(
    ("successes", "trials", "low", "high"),
    [
        # By hand: z^2 = 3.8416; 0/n has high = z^2/(n+z^2), n/n has low = n/(n+z^2).
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (5, 10, 0.2366, 0.7634),
        # Newcombe (1998), Statistics in Medicine 17:857-872, Table I, Wilson score method.
        (81, 263, 0.2553, 0.3662),
        (15, 148, 0.0624, 0.1605),
        (0, 20, 0.0, 0.1611),
        (1, 29, 0.0061, 0.1718),
    ],
)
def test_wilson_interval_matches_hand_and_published_values(
    successes: int, trials: int, low: float, high: float
) -> None:
    got_low, got_high = wilson_interval(successes, trials, z=1.96)
    assert got_low == pytest.approx(low, abs=5e-5)
    assert got_high == pytest.approx(high, abs=5e-5)


def test_wilson_interval_defaults_to_95_percent() -> None:
    assert wilson_interval(81, 263) == pytest.approx(wilson_interval(81, 263, z=1.96), abs=1e-4)
    assert wilson_interval(81, 263, z=2.576)[0] < wilson_interval(81, 263)[0]  # 99% is wider


def test_wilson_interval_of_no_trials_knows_nothing() -> None:
    assert wilson_interval(0, 0) == (0.0, 1.0)


@pytest.mark.parametrize(("successes", "trials"), [(-1, 10), (11, 10), (1, 0)])
def test_wilson_interval_rejects_impossible_counts(successes: int, trials: int) -> None:
    with pytest.raises(ValueError, match="successes <= trials"):
        wilson_interval(successes, trials)


@settings(deadline=None, max_examples=200)
@given(st.integers(1, 100_000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_contains_the_observed_share_and_is_symmetric(counts: tuple[int, int]) -> None:
    successes, trials = counts
    low, high = wilson_interval(successes, trials)
    assert 0.0 <= low <= successes / trials <= high <= 1.0
    mirror_low, mirror_high = wilson_interval(trials - successes, trials)
    assert low == pytest.approx(1 - mirror_high, abs=1e-12)
    assert high == pytest.approx(1 - mirror_low, abs=1e-12)


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([1, 2, 3, 4], 50, 2.5),
        ([1, 2, 3, 4], 0, 1.0),
        ([1, 2, 3, 4], 100, 4.0),
        ([1, 2, 3, 4], 25, 1.75),
        ([4, 1, 3, 2], 50, 2.5),  # any order
        (list(range(1, 11)), 90, 9.1),
        ([7.5], 90, 7.5),
        ([0.2, 0.1, 10.0], 50, 0.2),
    ],
)
def test_percentile_interpolates_between_ranks(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_needs_values_and_a_q_within_0_to_100() -> None:
    with pytest.raises(ValueError, match="no values"):
        percentile([], 50)
    with pytest.raises(ValueError, match=r"within 0\.\.100"):
        percentile([1.0], 101)


def record(deal: int, verdict: Verdict, seconds: float, par: int | None = None) -> DealRecord:
    return DealRecord(deal, verdict, seconds, nodes=100 * deal, par=par, found=par, par_seconds=0.1 if par else None)


# Ten deals: 5 solved, 3 unwinnable, 2 unknown; times 0.1 .. 1.0 and two budget-length unknowns.
RECORDS = [
    record(1, S, 0.1, 60),
    record(2, W, 0.2),
    record(3, S, 0.3, 70),
    record(4, S, 0.4, 65),
    record(5, W, 0.5),
    record(6, U, 10.0),
    record(7, S, 0.6, 90),
    record(8, W, 0.7),
    record(9, U, 10.0),
    record(10, S, 0.8, 75),
]


def test_summary_of_a_small_survey() -> None:
    summary = summarize(RECORDS)
    assert (summary.deals, summary.solved, summary.unwinnable, summary.unknown) == (10, 5, 3, 2)
    # Lower bound: 5 wins of 10 (only solved); upper bound: 7 of 10 (solved + unknown).
    assert summary.winnable_low == pytest.approx(0.2366, abs=1e-4)
    assert summary.winnable_high == pytest.approx(0.8922, abs=1e-4)
    assert (summary.observed_low, summary.observed_high) == (0.5, 0.7)
    # Sorted times 0.1 .. 0.8, 10, 10: the median lies between 0.5 and 0.6; p90 at rank 8.1.
    assert summary.seconds_median == pytest.approx(0.55)
    assert summary.seconds_p90 == pytest.approx(10.0)
    assert summary.seconds_max == 10.0
    # Pars of the solved deals only: 60, 65, 70, 75, 90.
    assert summary.par_mean == pytest.approx(72.0)
    assert summary.par_median == 70
    assert summary.par_p90 == pytest.approx(84.0)
    assert summary.par_max == 90


def test_summary_does_not_depend_on_the_order_records_arrive_in() -> None:
    assert summarize(RECORDS[::-1]) == summarize(RECORDS)


def test_summary_without_solved_deals_has_no_par() -> None:
    summary = summarize([record(1, W, 0.5), record(2, U, 10.0)])
    assert summary.par_mean is None
    assert summary.par_median is None
    assert summary.winnable_low == 0.0
    assert summary.winnable_high == pytest.approx(wilson_interval(1, 2)[1])


def test_summary_of_no_deals() -> None:
    summary = summarize([])
    assert (summary.deals, summary.solved, summary.unwinnable, summary.unknown) == (0, 0, 0, 0)
    assert (summary.winnable_low, summary.winnable_high) == (0.0, 1.0)
    assert summary.seconds_median is None
    assert summary.par_mean is None
