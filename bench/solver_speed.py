"""Solver speed: positions per second and deals per second, this tree against a baseline.

Run: ``python -m bench.solver_speed [--baseline 7d9b562] [--antares 1-30,533,597,639,723,897,932]
[--scorpion 1-30] [--budget 10] [--memory-deal 39] [--memory-seconds 5]``. The baseline is a
git commit (by default the last one before issue 15): its ``server/`` is extracted with
``git archive`` into a temporary directory, and the same measurement runs on it and on this tree, each in
its own process on one core, one after the other, in this one run (for Scorpion
also this tree's Python search compiled by mypyc without the C core,
``SOLITAIRE_NO_CORE=1``, and its source run as written, ``SOLITAIRE_PURE_PYTHON=1``; for
Antares also this tree without the C port of its position, ``SOLITAIRE_NO_CORE=1``). Each
deal is solved by ``solve()`` with no par shortening (search to the verdict only); the
figures are totals over the deals: positions (nodes) per second of search, deals
per second, and the median time to a verdict, all in CPU seconds of the solving
process (steadier than wall-clock time on a shared machine). The budget is CPU time
in this tree; the baseline knows only wall-clock budgets, so on a busy machine its
unknown deals stop after less CPU time than ours (which flatters its deals/s). It also
prints what a stored position costs in memory (tracemalloc's peak over the
positions, for each game), and so how many fit in a GB.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path

from server.solver.compiled import (
    NO_CORE_VARIABLE,
    PURE_PYTHON_VARIABLE,
    built_here,
    native_antares,
    native_core,
    stale_builds,
)
from server.solver.survey import parse_deals

ROOT = Path(__file__).resolve().parent.parent
#: The last commit before issue 15 ("far faster Antares search").
DEFAULT_BASELINE = "7d9b562"

#: Runs in the measured tree's own process: only the API both trees share.
MEASURE = r"""
import json, statistics, sys, time
from server.games import variant_class
from server.solver import Budget, Solved, Unwinnable, solve
variant = variant_class(sys.argv[1])
deals = [int(d) for d in sys.argv[2].split(",")]
try:  # a budget of CPU seconds where the tree knows it, which a shared machine cannot cut short
    budget = Budget(seconds=float(sys.argv[3]), clock=time.process_time)
    clock = "cpu"
except TypeError:  # the baseline's budget is wall-clock time only
    budget = Budget(seconds=float(sys.argv[3]))
    clock = "wall"
nodes = 0
seconds = []
verdicts = {"solved": 0, "unwinnable": 0, "unknown": 0}
for deal in deals:
    cpu = time.process_time()
    try:
        result = solve(variant, deal, None, budget, par_seconds=0.0)
    except TypeError:  # the baseline's solve() takes no par_seconds
        from server.solver.solve import solve_position
        result = solve_position(variant.new(deal, None), budget, par_seconds=0.0)
    nodes += result.stats.nodes
    seconds.append(time.process_time() - cpu)
    name = "solved" if isinstance(result, Solved) else "unwinnable" if isinstance(result, Unwinnable) else "unknown"
    verdicts[name] += 1
print(json.dumps({"nodes": nodes, "seconds": sum(seconds), "median": statistics.median(seconds),
                  "deals": len(deals), "verdicts": verdicts, "clock": clock}))
"""

#: Bytes a stored position costs: tracemalloc's peak over the positions stored, for a
#: Scorpion search that exhausts its space and an Antares search that runs out of time
#: (argv: the Scorpion deal, the Antares search's CPU seconds).
MEMORY = r"""
import json, sys, time, tracemalloc
from server.games import Antares, Autoplay, Options, Scorpion
from server.solver.antares_search import search_antares
from server.solver.results import Budget
from server.solver.scorpion_search import depth_first_scorpion
figures = {}
for name, run in (
    ("scorpion", lambda: depth_first_scorpion(Scorpion.new(int(sys.argv[1])),
                                              Budget(seconds=120, clock=time.process_time))),
    ("antares", lambda: search_antares(Antares.new(6525, Options(autoplay=Autoplay.SAFE)),
                                       Budget(seconds=float(sys.argv[2]), clock=time.process_time))),
):
    tracemalloc.start()
    result = run()
    figures[name] = {"nodes": result.stats.nodes, "peak": tracemalloc.get_traced_memory()[1]}
    tracemalloc.stop()
print(json.dumps(figures))
"""


def _deal_list(text: str) -> str:
    """``"1-3,7"`` as ``"1,2,3,7"``, the argument the measured tree's process reads."""
    return ",".join(map(str, parse_deals(text)))


def _extract(commit: str, into: Path) -> None:
    archive = subprocess.run(["git", "archive", commit, "server"], cwd=ROOT, check=True, capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")


def _run(tree: Path, code: str, *args: str, mode: str = "") -> dict[str, object]:
    """Runs ``code`` on ``tree``; ``mode`` names an environment variable to set (a way of
    running the search)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    if mode:
        env[mode] = "1"
    out = subprocess.run([sys.executable, "-c", code, *args], cwd=tree, env=env, check=True, capture_output=True)
    result: dict[str, object] = json.loads(out.stdout)
    return result


def _line(name: str, figures: dict[str, object]) -> str:
    nodes, seconds, deals = float(figures["nodes"]), float(figures["seconds"]), float(figures["deals"])  # type: ignore[arg-type]
    median = float(figures["median"])  # type: ignore[arg-type]
    return (
        f"  {name:<28}{nodes / seconds:>12,.0f} positions/s {deals / seconds:>9.2f} deals/s "
        f"median {median * 1000:>8.1f} ms  {figures['verdicts']} (budget on the {figures['clock']} clock)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git commit to compare against")
    parser.add_argument("--antares", default="1-30,533,597,639,723,897,932", help="Antares deals")
    parser.add_argument("--scorpion", default="1-30", help="Scorpion deals")
    parser.add_argument("--budget", type=float, default=10.0, help="seconds per deal")
    parser.add_argument("--memory-deal", type=int, default=39, help="Scorpion deal for the memory figure")
    parser.add_argument(
        "--memory-seconds", type=float, default=5.0, help="CPU seconds of the Antares search for the memory figure"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as temporary:
        baseline = Path(temporary)
        _extract(args.baseline, baseline)
        print(f"solver speed, {args.budget:g}s per deal, search to the verdict (no par), one core, CPU seconds")
        stale = stale_builds()
        built = [Path(path).stem for path in built_here() if path not in stale]
        print(f"this tree runs compiled (mypyc): {', '.join(built) or 'nothing'}")
        core = native_core() is not None
        print(f"this tree's Scorpion search runs in its C core: {'yes' if core else 'no'}")
        ported = native_antares() is not None
        print(f"this tree's Antares position runs in C: {'yes' if ported else 'no'}")
        for variant, deals in (("antares", args.antares), ("scorpion", args.scorpion)):
            listed = _deal_list(deals)
            before = _run(baseline, MEASURE, variant, listed, str(args.budget))
            after = _run(ROOT, MEASURE, variant, listed, str(args.budget))
            print(f"{variant} deals {deals}")
            print(_line(f"baseline {args.baseline}", before))
            if variant == "scorpion" and built_here():
                # The same search, its source run by the interpreter instead of mypyc's build.
                pure = _run(ROOT, MEASURE, variant, listed, str(args.budget), mode=PURE_PYTHON_VARIABLE)
                print(_line("this tree, pure Python", pure))
            if variant == "antares" and ported:
                python = _run(ROOT, MEASURE, variant, listed, str(args.budget), mode=NO_CORE_VARIABLE)
                print(_line("this tree, no C port", python))
            if variant == "scorpion" and core:
                mypyc = _run(ROOT, MEASURE, variant, listed, str(args.budget), mode=NO_CORE_VARIABLE)
                print(_line("this tree, mypyc, no C core", mypyc))
            print(_line("this tree", after))
            speedup = (float(after["deals"]) / float(after["seconds"])) / (  # type: ignore[arg-type]
                float(before["deals"]) / float(before["seconds"])  # type: ignore[arg-type]
            )
            print(f"  deals/s ratio (this tree / baseline): {speedup:.1f}x")
        memory = _run(ROOT, MEMORY, str(args.memory_deal), str(args.memory_seconds))
        for variant, figures in memory.items():
            nodes, peak = figures["nodes"], figures["peak"]  # type: ignore[index]
            what = f"deal {args.memory_deal}" if variant == "scorpion" else f"deal 6525, {args.memory_seconds:g} s"
            if not nodes or not peak:  # decided at the deal: nothing stored to measure
                print(f"memory: {variant} {what}, {nodes:,} positions: nothing to measure")
                continue
            print(
                f"memory: {variant} {what}, {nodes:,} positions, peak {peak / 2**20:.0f} MiB: "
                f"{peak / nodes:.0f} bytes a position, {2**30 / (peak / nodes) / 1e6:.1f} million positions per GiB"
            )


if __name__ == "__main__":
    main()
