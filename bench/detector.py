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

- ``people``, ``experts``: must not be flagged (the false alarms);
- ``studied`` (the day's solution, 0.3 to 1.0 s between moves, started at once) and
  ``studied-paced`` (the same line paced like a person, after a reading pause): must be
  flagged (the hits);
- ``studied-other``: a solver line that is not the day's (the first line found from the
  start, no par shortening), paced like ``studied``, and ``studied-masked``: the day's
  solution with two moves made and undone on the way, paced like a person: known limits,
  reported apart;
- ``machine``: the day's solution 2 to 20 ms a move: must be refused.

It prints, per kind, how many were flagged and refused, the scores' quartiles, the share of
choices on the day's line (median, max) and how many won; then the hit rate (both studied
kinds), the false-alarm rate (people and experts), the limits and the machine-speed refusals.
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


def studied_masked(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    pacing = person_pacing(rng)
    entries = masked_log(start, day.solution, rng, detours=2)
    return entries, person_times(pacing, entries, rng, START_MS), history(pacing, rng)


def machine(day: Day, start: Game, rng: random.Random) -> tuple[list[str], list[int], list[list[int]]]:
    entries = list(day.solution)
    return entries, uniform_times(entries, rng, START_MS, 2, 20), []


KINDS: dict[str, Run] = {
    "people": people,
    "experts": experts,
    "studied": studied,
    "studied-paced": studied_paced,
    "studied-other": studied_other,
    "studied-masked": studied_masked,
    "machine": machine,
}
HITS = ("studied", "studied-paced")
FALSE_ALARMS = ("people", "experts")
LIMITS = ("studied-other", "studied-masked")


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
            f"{kind:14} runs {len(judged):4}  flagged {flagged:4}  refused {refused:4}"
            f"  score quartiles {q1:.2f} {median:.2f} {q3:.2f}  max {max(j.score for j in judged):.2f}"
            f"  line share median {statistics.median(shares):.2f} max {max(shares):.2f}"
            f"  won {sum(j.play.won for j in judged)}"
        )
    hits = [j for kind in HITS for j in results[kind]]
    alarms = [j for kind in FALSE_ALARMS for j in results[kind]]
    print(f"hit rate (studied, studied-paced): {caught(hits)}/{len(hits)} = {caught(hits) / len(hits):.1%}")
    print(f"false alarms (people, experts): {caught(alarms)}/{len(alarms)} = {caught(alarms) / len(alarms):.1%}")
    for kind in LIMITS:
        judged = results[kind]
        print(f"{kind} (a known limit): {caught(judged)}/{len(judged)} = {caught(judged) / len(judged):.1%}")
    machines = results["machine"]
    refused = sum(j.verdict is Verdict.REFUSED for j in machines)
    print(f"machine speed refused: {refused}/{len(machines)} = {refused / len(machines):.1%}")
    print(f"({time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    main()
