"""A survey's histograms as a PNG image, drawn with matplotlib (the optional ``[plots]`` extra).

Two panels: the search time per deal on log-scaled bins, stacked by verdict, and
the par of solved deals. matplotlib (the optional ``[plots]`` extra) is imported only when an image is
drawn, with its file-only ``Agg`` backend, so the solver and the server never need it and the
solver's command line starts without it; :func:`survey_png` raises :class:`PlotsUnavailable` with
the install command when it is missing.
"""

from __future__ import annotations

import importlib.util
import io
import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final, cast

from server.solver.statistics import DealRecord, Verdict

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

#: Size of the image in pixels (at :data:`DPI`).
WIDTH: Final = 720
HEIGHT: Final = 540
DPI: Final = 100
VERDICT_COLORS: Final = {Verdict.SOLVED: "#2e9646", Verdict.UNWINNABLE: "#cd3c32", Verdict.UNKNOWN: "#a0a0a0"}
PAR_COLOR: Final = "#3264be"


class PlotsUnavailable(RuntimeError):
    """matplotlib is not installed: ``pip install -e '.[plots]'``."""


def plots_available() -> bool:
    """Whether matplotlib can be imported (the ``[plots]`` extra is installed)."""
    return importlib.util.find_spec("matplotlib") is not None


def survey_png(records: Sequence[DealRecord], title: str = "") -> bytes:
    """The two histograms of ``records`` as PNG bytes (WIDTH x HEIGHT pixels)."""
    figure = _new_figure()
    times, pars = figure.subplots(2, 1)
    if title:
        figure.suptitle(title)
    _time_panel(times, records)
    _par_panel(pars, [r.par for r in records if r.verdict is Verdict.SOLVED and r.par is not None])
    out = io.BytesIO()
    figure.savefig(out, format="png", dpi=DPI)
    return out.getvalue()


def _new_figure() -> Figure:
    """A WIDTH x HEIGHT figure on the Agg backend (it draws to memory, no display needed).

    matplotlib is loaded here, when the first image is drawn, not with the module: the solver's
    command line imports this module and starts without loading it."""
    try:  # the optional [plots] extra
        matplotlib = importlib.import_module("matplotlib")
        figures = importlib.import_module("matplotlib.figure")
    except ImportError as error:  # pragma: no cover - without the extra
        raise PlotsUnavailable("histograms need matplotlib: pip install -e '.[plots]'") from error
    matplotlib.use("Agg")
    return cast("Figure", figures.Figure(figsize=(WIDTH / DPI, HEIGHT / DPI), dpi=DPI, layout="constrained"))


def time_bins(seconds: Sequence[float]) -> list[float]:
    """Bin edges for times: four a decade, from the decade below the fastest to above the slowest."""
    positive = [s for s in seconds if s > 0] or [1e-3]
    low = math.floor(math.log10(min(positive)))
    high = math.ceil(math.log10(max(positive)))
    if high <= low:
        high = low + 1
    return [10 ** (low + i / 4) for i in range(4 * (high - low) + 1)]


def _time_panel(axes: Axes, records: Sequence[DealRecord]) -> None:
    bins = time_bins([r.seconds for r in records])
    groups = [[max(r.seconds, bins[0]) for r in records if r.verdict is verdict] for verdict in Verdict]
    axes.hist(
        groups,
        bins=bins,
        stacked=True,
        color=[VERDICT_COLORS[v] for v in Verdict],
        label=[f"{v.value} ({len(g)})" for v, g in zip(Verdict, groups, strict=True)],
    )
    axes.set_xscale("log")
    axes.set_xlabel("search time to the verdict (s)")
    axes.set_ylabel("deals")
    axes.legend(loc="upper right")
    axes.grid(axis="y", alpha=0.3)


def _par_panel(axes: Axes, pars: Sequence[int]) -> None:
    if pars:
        width = max(1, math.ceil((max(pars) - min(pars) + 1) / 40))
        bins = list(range(min(pars), max(pars) + width + 1, width))
        axes.hist(pars, bins=bins, color=PAR_COLOR)
    else:
        axes.text(0.5, 0.5, "no solved deal", ha="center", va="center", transform=axes.transAxes)
    axes.set_xlabel("par (moves) of solved deals")
    axes.set_ylabel("deals")
    axes.grid(axis="y", alpha=0.3)
