"""The anti-cheat detector's hit and false-alarm rates on synthetic ranked daily attempts.

Run: ``python -m bench.detector [--runs 200] [--deals 8] [--seed 1] [--budget 5]``.

No server: each run is a log played with the rules engine on one of ``--deals`` daily deals
(the first candidates the solver certifies winnable for a bench secret and consecutive
days, the solution its par line within ``--budget`` CPU seconds, as the daily preparation
does with ``--solver-budget``; the par line is shortened for a fifth of that time, so a much
slower machine may find other lines and other figures), timed by a seeded pacing model
(:mod:`bench.lib.people`) and judged by :func:`server.competition.studied.assess` against
that solution and the player's own earlier races, exactly as the server judges a ranked
entry. ``--runs`` runs of each kind:

- ``people``, ``experts`` and ``explorers`` (the day's solution found by exploring around
  it, paced like a person): must not be flagged (the false alarms);
- ``studied`` (the day's solution, 0.3 to 1.0 s between moves, started at once),
  ``studied-paced`` (the same line paced like a person, after a reading pause) and
  ``studied-masked`` (paced like a person, with two random moves made and undone on the
  way): must be flagged (the hits);
- ``studied-other``: a solver line that is not the day's (the first line found from the
  start, no par shortening), paced like ``studied``; ``studied-masked-5``: five random moves
  made and undone; ``studied-masked-long``: five detours of 1 to 4 random moves each, undone:
  where the check stops, reported apart;
- ``machine``: the day's solution 2 to 20 ms a move: must be refused.

It prints, per kind, how many were flagged and refused, the scores' quartiles, the share of
choices on the day's line (median, max) and how many won; then the hit rate, the
false-alarm rate, the limits and the machine-speed refusals.
"""

from __future__ import annotations

import argparse
import itertools
import random
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

from bench.lib.people import (
    expert_log,
    explorer_log,
    history,
    masked_log,
    person_log,
    person_pacing,
    person_times,
    uniform_times,
)
from server.competition.daily import DAILY_OPTIONS, candidates, solution_texts
from server.competition.studied import Judgement, Verdict, assess
from server.games import Antares, Deal, Game
from server.solver import Budget, Solved, solve

SECRET = b"anti-cheat bench"
FIRST_DAY = "2026-12-01"
#: The race starts at this (arbitrary) server time.
START_MS = 1_000_000


@dataclass(frozen=True, slots=True)
class Day:
    """A bench daily deal: the deal, its solution (the par line) and another solver line."""

    deal: Deal
    solution: tuple[str, ...]
    other: tuple[str, ...]


def days(count: int, budget: float) -> list[Day]:
    """The first ``count`` bench days' deals, each the first certified candidate of its day."""
    found = []
    for offset in range(count):
        date = f"2026-12-{offset + 1:02d}" if offset < 31 else f"2027-01-{offset - 30:02d}"
        for deal in candidates(SECRET, date, "antares"):
            # CPU seconds: the par line is shortened for a fifth of the budget, and a busy
            # machine must not make it another line than on a quiet one (as far as it can).
            cpu = Budget(seconds=budget, clock=time.process_time)
            par = solve(Antares, deal, DAILY_OPTIONS, cpu)
            first = solve(Antares, deal, DAILY_OPTIONS, cpu, par_seconds=0.0)
            if isinstance(par, Solved) and isinstance(first, Solved):
                other = solution_texts(Antares, deal, first)
                found.append(Day(deal, solution_texts(Antares, deal, par), other))
                break
    return found


Run = Callable[[Day, Game, random.Random], tuple[list[str], list[int], list[list[int]]]]


def people(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    pacing = person_pacing(rng)
    entries = person_log(start, rng)
    return entries, person_times(pacing, entries, rng, START_MS), history(pacing, rng)


def experts(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    pacing = person_pacing(rng, faster=1.6)
    entries = expert_log(start, rng)
    return entries, person_times(pacing, entries, rng, START_MS), history(pacing, rng)


def explorers(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    pacing = person_pacing(rng)
    entries = explorer_log(start, day.solution, rng)
    # Their earlier races explored as much: as many quick undos in the norm.
    earlier = history(pacing, rng, entries.count("undo") / len(entries))
    return entries, person_times(pacing, entries, rng, START_MS), earlier


def studied(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    entries = list(day.solution)
    return entries, uniform_times(entries, rng, START_MS, 300, 1000), history(person_pacing(rng), rng)


def studied_paced(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    pacing = person_pacing(rng)
    entries = list(day.solution)
    return entries, person_times(pacing, entries, rng, START_MS), history(pacing, rng)


def studied_other(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    entries = list(day.other)
    return entries, uniform_times(entries, rng, START_MS, 300, 1000), history(person_pacing(rng), rng)


def masked(detours: int, longest: int) -> Run:
    """A studied kind: the day's solution with ``detours`` detours of 1 to ``longest`` random
    moves, undone, paced like a person."""

    def run(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
        pacing = person_pacing(rng)
        entries = masked_log(start, day.solution, rng, detours, longest)
        return entries, person_times(pacing, entries, rng, START_MS), history(pacing, rng)

    return run


def machine(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    entries = list(day.solution)
    return entries, uniform_times(entries, rng, START_MS, 2, 20), []


KINDS: dict[str, Run] = {
    "people": people,
    "experts": experts,
    "explorers": explorers,
    "studied": studied,
    "studied-paced": studied_paced,
    "studied-masked": masked(2, 1),
    "studied-other": studied_other,
    "studied-masked-5": masked(5, 1),
    "studied-masked-long": masked(5, 4),
    "machine": machine,
}
HITS = ("studied", "studied-paced", "studied-masked")
FALSE_ALARMS = ("people", "experts", "explorers")
LIMITS = ("studied-other", "studied-masked-5", "studied-masked-long")


def judge_runs(kind: str, runs: int, bench_days: list[Day], seed: int) -> list[Judgement]:
    """``runs`` runs of ``kind``, cycling through the days, each with its own seeded random."""
    judged = []
    for number, day in zip(range(runs), itertools.cycle(bench_days), strict=False):
        rng = random.Random(f"{seed}:{kind}:{number}")
        start = Antares.new(day.deal, DAILY_OPTIONS)
        entries, times, earlier = KINDS[kind](day, start, rng)
        judged.append(assess(Antares, day.deal, DAILY_OPTIONS, entries, times, START_MS, [day.solution], earlier))
    return judged


def caught(judged: list[Judgement]) -> int:
    return sum(j.verdict is not Verdict.CLEAR for j in judged)


def share(count: int, total: int) -> str:
    return f"{count}/{total} = {count / total:.1%}"


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.detector", description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=200, help="runs of each kind")
    parser.add_argument("--deals", type=int, default=8, help="daily deals the runs cycle through")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--budget", type=float, default=5.0, help="solver seconds for each day's solution")
    args = parser.parse_args()
    began = time.perf_counter()
    bench_days = days(args.deals, args.budget)
    print(f"{len(bench_days)} deals, solutions of {', '.join(str(len(d.solution)) for d in bench_days)} moves")
    results: dict[str, list[Judgement]] = {}
    for kind in KINDS:
        judged = results[kind] = judge_runs(kind, args.runs, bench_days, args.seed)
        flagged = sum(j.verdict is Verdict.FLAGGED for j in judged)
        refused = sum(j.verdict is Verdict.REFUSED for j in judged)
        q1, median, q3 = statistics.quantiles([j.score for j in judged], n=4)
        shares = [j.play.line_share for j in judged]
        print(
            f"{kind:19} runs {len(judged):4}  flagged {flagged:4}  refused {refused:4}"
            f"  score quartiles {q1:.2f} {median:.2f} {q3:.2f}  max {max(j.score for j in judged):.2f}"
            f"  line share median {statistics.median(shares):.2f} max {max(shares):.2f}"
            f"  won {sum(j.play.won for j in judged)}"
        )
    hits = [j for kind in HITS for j in results[kind]]
    alarms = [j for kind in FALSE_ALARMS for j in results[kind]]
    print(f"hit rate ({', '.join(HITS)}): {share(caught(hits), len(hits))}")
    print(f"false alarms ({', '.join(FALSE_ALARMS)}): {share(caught(alarms), len(alarms))}")
    for kind in LIMITS:
        print(f"{kind} (a known limit): {share(caught(results[kind]), len(results[kind]))}")
    machines = results["machine"]
    refused = sum(j.verdict is Verdict.REFUSED for j in machines)
    print(f"machine speed refused: {share(refused, len(machines))}")
    print(f"({time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    main()
