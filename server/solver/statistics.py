"""Statistics of a survey: per-deal records, confidence intervals, percentiles, a summary.

Pure functions over plain records, so a survey's numbers can be checked by hand.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

#: The normal quantile of a two-sided 95% interval.
Z95: Final = 1.959963984540054


class Verdict(enum.Enum):
    """What the solver said about one deal."""

    SOLVED = "solved"
    UNWINNABLE = "unwinnable"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class DealRecord:
    """One deal of a survey: small and picklable, it travels back from a worker process.

    ``seconds`` and ``nodes`` are the search's, to its verdict; ``par``, ``found`` and
    ``par_seconds`` (the time spent shortening the line) are None unless solved.
    """

    deal: int
    verdict: Verdict
    seconds: float
    nodes: int
    par: int | None = None
    found: int | None = None
    par_seconds: float | None = None


def wilson_interval(successes: int, trials: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion, as ``(low, high)`` within [0, 1].

    With no trials nothing is known: ``(0.0, 1.0)``. Raises ValueError unless
    ``0 <= successes <= trials``.
    """
    if not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, not {successes} of {trials}")
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    # At the extremes the bounds are exactly 0 and 1: rounding would leave them a hair off
    # (a bound of 5e-17 above 0/3 would exclude the observed share).
    low = 0.0 if successes == 0 else max(0.0, centre - half)
    high = 1.0 if successes == trials else min(1.0, centre + half)
    return low, high


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0 <= q <= 100) of ``values``, by linear interpolation.

    The sorted values sit at ranks 0..n-1; percentile q lies at rank ``q/100 * (n-1)``,
    interpolated between its neighbours (the default of numpy and of Excel's
    PERCENTILE.INC). So q=0 is the minimum, q=100 the maximum, q=50 the median.
    Raises ValueError for an empty sequence or q outside [0, 100].
    """
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be within 0..100, not {q}")
    ordered = sorted(values)
    rank = q / 100 * (len(ordered) - 1)
    below = math.floor(rank)
    above = min(below + 1, len(ordered) - 1)
    fraction = rank - below
    return ordered[below] + (ordered[above] - ordered[below]) * fraction


@dataclass(frozen=True, slots=True)
class Summary:
    """What a survey found, over the deals it finished.

    ``winnable_low`` counts only solved deals as wins, ``winnable_high`` counts solved
    and unknown ones: the truth lies between ``solved/deals`` and
    ``(solved+unknown)/deals``, and the two bounds widen that range to a 95% Wilson
    interval. Time figures are the search time to the verdict, over all deals (None
    when there are none); par figures are over solved deals (None when there are none).
    """

    deals: int
    solved: int
    unwinnable: int
    unknown: int
    winnable_low: float
    winnable_high: float
    seconds_median: float | None
    seconds_p90: float | None
    seconds_max: float | None
    par_mean: float | None
    par_median: float | None
    par_p90: float | None = None
    par_max: int | None = None

    @property
    def observed_low(self) -> float:
        """The share of deals solved (0 when there are no deals)."""
        return self.solved / self.deals if self.deals else 0.0

    @property
    def observed_high(self) -> float:
        """The share of deals solved or unknown (1 when there are no deals)."""
        return (self.solved + self.unknown) / self.deals if self.deals else 1.0


def summarize(records: Sequence[DealRecord], z: float = Z95) -> Summary:
    """The :class:`Summary` of ``records`` (any order)."""
    counts = dict.fromkeys(Verdict, 0)
    for record in records:
        counts[record.verdict] += 1
    deals = len(records)
    solved, unknown = counts[Verdict.SOLVED], counts[Verdict.UNKNOWN]
    seconds = [record.seconds for record in records]
    pars = [record.par for record in records if record.verdict is Verdict.SOLVED and record.par is not None]
    return Summary(
        deals=deals,
        solved=solved,
        unwinnable=counts[Verdict.UNWINNABLE],
        unknown=unknown,
        winnable_low=wilson_interval(solved, deals, z)[0],
        winnable_high=wilson_interval(solved + unknown, deals, z)[1],
        seconds_median=percentile(seconds, 50) if seconds else None,
        seconds_p90=percentile(seconds, 90) if seconds else None,
        seconds_max=max(seconds) if seconds else None,
        par_mean=sum(pars) / len(pars) if pars else None,
        par_median=percentile(pars, 50) if pars else None,
        par_p90=percentile(pars, 90) if pars else None,
        par_max=max(pars) if pars else None,
    )
