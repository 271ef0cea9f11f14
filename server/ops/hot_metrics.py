"""Counters and histograms for the hottest paths: plain numbers, handed to Prometheus when scraped.

prometheus-client's own :class:`~prometheus_client.Counter` takes a lock at every count, and
its :class:`~prometheus_client.Histogram` takes two and walks its buckets in Python: a few
microseconds, paid two or three times by every move (a request counted, its ack timed, its
Redis round trip timed). These keep a child's figures in a list and a float, counted with no
lock, and are registered as a :class:`~prometheus_client.registry.Collector` that writes the
same series as prometheus-client's own types (``_total`` and ``_created``; ``_bucket``,
``_count``, ``_sum`` and ``_created``), so dashboards and alerts cannot tell them apart.

Counts come from the event loop's thread, and a scrape reads them there too (``/metrics`` is
served by the loop). Servers on loops in several threads of one process (as the tests run
two nodes) share these metrics and may lose counts to one another.
"""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Generic, TypeVar

from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector, CollectorRegistry
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

Cell = TypeVar("Cell")


class _Family(Collector, Generic[Cell]):
    """A metric's name, help and label names, and its cells by label values, each made by
    ``make`` when first asked for; registered in ``registry``."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labels: Sequence[str],
        registry: CollectorRegistry,
        make: Callable[[], Cell],
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.label_names = tuple(labels)
        self._cells: dict[tuple[str, ...], Cell] = {}
        self._make = make
        registry.register(self)

    def child(self, *values: str) -> Cell:
        """The cell of these label values (keep it: looking it up costs more than counting)."""
        if len(values) != len(self.label_names):
            raise ValueError(f"{self.name} has labels {self.label_names}, not {values}")
        cell = self._cells.get(values)
        if cell is None:
            cell = self._cells[values] = self._make()
        return cell


class CountCell:
    """One child of a :class:`HotCounter`: ``cell.inc()`` counts one."""

    __slots__ = ("created", "value")

    def __init__(self) -> None:
        self.value = 0
        self.created = time.time()

    def inc(self) -> None:
        self.value += 1


class HotCounter(_Family[CountCell]):
    """A counter with label names ``labels``; :meth:`child` gives the cell of some label values
    (there is no ``labels()``, as prometheus-client's types have: a cell is kept, not looked up)."""

    def __init__(self, name: str, documentation: str, labels: Sequence[str], registry: CollectorRegistry) -> None:
        super().__init__(name, documentation, labels, registry, CountCell)

    def value(self, *values: str) -> int:
        """The count of these label values (0 if never counted)."""
        cell = self._cells.get(values)
        return 0 if cell is None else cell.value

    def collect(self) -> Iterator[Metric]:
        family = CounterMetricFamily(self.name, self.documentation, labels=self.label_names)
        for values, cell in list(self._cells.items()):
            family.add_metric(values, cell.value, created=cell.created)
        yield family


class HistogramCell:
    """One child of a :class:`HotHistogram`: ``cell.observe(seconds)``."""

    __slots__ = ("bounds", "counts", "created", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound
        self.sum = 0.0
        self.created = time.time()

    def observe(self, amount: float) -> None:
        self.sum += amount
        if amount == amount:  # not NaN, which is in no bucket (as prometheus-client has it)
            # A bucket counts what is at most its bound: the first bound not below ``amount``.
            self.counts[bisect.bisect_left(self.bounds, amount)] += 1


class HotHistogram(_Family[HistogramCell]):
    """A histogram with upper bounds ``buckets`` (ascending) and label names ``labels``; with no
    labels its one child exists from the start, as prometheus-client's does."""

    def __init__(
        self,
        name: str,
        documentation: str,
        buckets: Sequence[float],
        registry: CollectorRegistry,
        labels: Sequence[str] = (),
    ) -> None:
        bounds = tuple(float(bound) for bound in buckets if bound != float("inf"))  # +Inf is always there
        if list(bounds) != sorted(set(bounds)):
            raise ValueError(f"{name}: buckets must ascend, without repeats")
        self._bounds = bounds
        super().__init__(name, documentation, labels, registry, lambda: HistogramCell(bounds))
        if not self.label_names:
            self.child()

    def observe(self, amount: float) -> None:
        """Observe ``amount`` in the one child of a histogram without labels."""
        self._cells[()].observe(amount)

    def collect(self) -> Iterator[Metric]:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.label_names)
        for values, cell in list(self._cells.items()):
            counts = list(cell.counts)  # one moment's figures, whatever is counted meanwhile
            cumulative = 0
            buckets: list[tuple[str, float]] = []
            for bound, count in zip([*self._bounds, float("inf")], counts, strict=True):
                cumulative += count
                # prometheus-client's own spelling of a bound (``+Inf``, ``1.0``), untyped there.
                buckets.append((floatToGoString(bound), cumulative))  # type: ignore[no-untyped-call]
            family.add_metric(values, buckets, cell.sum)
            labels = dict(zip(self.label_names, values, strict=True))
            family.samples.append(Sample(f"{self.name}_created", labels, cell.created))
        yield family
