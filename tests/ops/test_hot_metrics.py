"""The hot-path metrics write exactly the series prometheus-client's own types write."""

from __future__ import annotations

import re

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from server.ops.hot_metrics import HotCounter, HotHistogram

_BUCKETS = (0.001, 0.01, 0.1, 1.0)
_OBSERVED = (0.0005, 0.001, 0.002, 0.05, 0.5, 3.0, 0.01)


def _text(registry: CollectorRegistry) -> str:
    """The exposition with the creation times blanked (each type stamps its own)."""
    return re.sub(r"(_created(\{[^}]*\})?) \S+", r"\1 T", generate_latest(registry).decode())


def test_a_counter_is_exposed_as_prometheus_client_exposes_one() -> None:
    theirs, ours = CollectorRegistry(), CollectorRegistry()
    reference = Counter("requests", "Requests.", ["type", "outcome"], registry=theirs)
    hot = HotCounter("requests", "Requests.", ["type", "outcome"], registry=ours)
    for labels in [("move", "ok"), ("move", "ok"), ("hello", "bad-frame")]:
        reference.labels(*labels).inc()
        hot.child(*labels).inc()
    assert _text(ours) == _text(theirs)
    assert hot.value("move", "ok") == 2
    assert hot.value("move", "illegal-move") == 0


def test_a_histogram_is_exposed_as_prometheus_client_exposes_one() -> None:
    theirs, ours = CollectorRegistry(), CollectorRegistry()
    reference = Histogram("ack_seconds", "Acks.", buckets=_BUCKETS, registry=theirs)
    hot = HotHistogram("ack_seconds", "Acks.", buckets=_BUCKETS, registry=ours)
    assert _text(ours) == _text(theirs), "no observation yet"
    for seconds in _OBSERVED:
        reference.observe(seconds)
        hot.observe(seconds)
    assert _text(ours) == _text(theirs)


def test_a_labelled_histogram_is_exposed_as_prometheus_client_exposes_one() -> None:
    theirs, ours = CollectorRegistry(), CollectorRegistry()
    reference = Histogram("redis_seconds", "Round trips.", ["command"], buckets=_BUCKETS, registry=theirs)
    hot = HotHistogram("redis_seconds", "Round trips.", buckets=_BUCKETS, registry=ours, labels=["command"])
    assert _text(ours) == _text(theirs), "no child yet"
    for index, seconds in enumerate(_OBSERVED):
        command = "store" if index % 2 else "load"
        reference.labels(command).observe(seconds)
        hot.child(command).observe(seconds)
    assert _text(ours) == _text(theirs)


def test_odd_observations_and_an_explicit_infinite_bound_are_exposed_as_prometheus_client_does() -> None:
    theirs, ours = CollectorRegistry(), CollectorRegistry()
    bounds = (*_BUCKETS, float("inf"))
    reference = Histogram("odd_seconds", "Odd.", buckets=bounds, registry=theirs)
    hot = HotHistogram("odd_seconds", "Odd.", buckets=bounds, registry=ours)
    for seconds in (float("nan"), float("inf"), 0.5):
        reference.observe(seconds)
        hot.observe(seconds)
    assert _text(ours) == _text(theirs)


def test_label_values_must_match_the_label_names() -> None:
    hot = HotCounter("requests", "Requests.", ["type", "outcome"], registry=CollectorRegistry())
    with pytest.raises(ValueError, match="labels"):
        hot.child("move")
    with pytest.raises(ValueError, match="ascend"):
        HotHistogram("x", "X.", buckets=(1.0, 0.5), registry=CollectorRegistry())
