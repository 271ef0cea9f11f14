"""Small figures every bench prints: percentiles, medians, ratios, durations."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def percentile(sorted_values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile of an already sorted list (nan when empty).

    Not :func:`server.solver.statistics.percentile` (interpolates, raises when empty): a latency is one measured."""
    if not sorted_values:
        return float("nan")
    rank = max(0, min(len(sorted_values) - 1, round(fraction * len(sorted_values) + 0.5) - 1))
    return sorted_values[rank]


def median(values: Sequence[float]) -> float:
    """The median (nan when empty)."""
    return statistics.median(values) if values else float("nan")


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f} ms"


def ratio(numerator: float, denominator: float) -> str:
    """``numerator / denominator`` as ``1.23x``, or ``n/a`` when it has no meaning."""
    if denominator <= 0 or numerator != numerator or denominator != denominator:
        return "n/a"
    return f"{numerator / denominator:.2f}x"


def latency_line(label: str, sorted_latencies: Sequence[float]) -> str:
    """``label: p50 … p90 … p99 … max … (n=…)`` of sorted latencies in seconds."""
    values = sorted_latencies
    top = values[-1] if values else float("nan")
    return (
        f"{label} p50 {ms(percentile(values, 0.5))}  p90 {ms(percentile(values, 0.9))}  "
        f"p99 {ms(percentile(values, 0.99))}  max {ms(top)}  (n={len(values)})"
    )
