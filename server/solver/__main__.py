"""Command line of the solver.

``python -m server.solver solve antares 123456 [--budget 10s] [--nodes N] [--par 1s]
[--clock wall|cpu] [--autoplay safe]`` solves one deal and prints the verdict, par and the
winning line in move notation.

``python -m server.solver survey scorpion 1-1000 [--budget 10s] [--par 1s] [--workers N]
[--csv out.csv [--fresh]] [--png out.png]`` solves many deals in parallel and prints their
statistics. The budget counts CPU seconds by default (``--clock cpu``); there is no node
cap unless ``--nodes`` asks for one. Each deal's row is written to the CSV as it finishes,
and a survey run again with the same CSV solves only the deals it does not hold yet (so an
interrupted survey resumes, and one that is complete only prints its report). ``--png``
needs the ``[plots]`` extra (matplotlib).

Bad input exits with status 2 and a message on stderr; Ctrl-C exits with 130 (a
survey first prints what it finished).
"""

from __future__ import annotations

import argparse
import csv
import os
import re
import sys
import time
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from contextlib import ExitStack
from typing import Final, TextIO

from server.games import VARIANTS, Autoplay, Deal, Game, Options, variant_class
from server.solver.histogram import plots_available, survey_png
from server.solver.progress import Progress, format_seconds
from server.solver.results import Budget, Result, Solved, Unknown, Unwinnable
from server.solver.solve import solve
from server.solver.statistics import DealRecord, Verdict, summarize
from server.solver.survey import csv_row, format_budget, parse_deals, read_csv, report, run_survey, write_csv

#: Exit status of an interrupted command, as shells report a process ended by SIGINT.
INTERRUPTED: Final = 130
#: Moves per line when printing a solution.
MOVES_PER_LINE: Final = 10

_DURATION = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ms|s|m)?")
_UNIT_SECONDS: Final = {"ms": 0.001, "s": 1.0, "m": 60.0, None: 1.0}

#: The clocks a budget may count on.
_CLOCKS: Final = {"wall": time.perf_counter, "cpu": time.process_time}

_UNKNOWN_REASONS: Final = {
    "nodes": "the node budget ran out",
    "seconds": "the time budget ran out",
    "memory": "the position table is full",
    "interrupted": "interrupted",
}


def parse_seconds(text: str) -> float:
    """A positive duration: ``"10s"``, ``"500ms"``, ``"2m"`` or plain seconds (``"2.5"``)."""
    match = _DURATION.fullmatch(text.strip().lower())
    if match is None:
        raise ValueError(f"{text!r} is not a duration: write 10s, 500ms, 2m or a number of seconds")
    seconds = float(match.group(1)) * _UNIT_SECONDS[match.group(2)]
    if seconds <= 0:
        raise ValueError(f"a budget must be more than 0 seconds, not {text!r}")
    return seconds


def _par_seconds(text: str) -> float:
    """A duration as :func:`parse_seconds` reads it, or ``"0"``: no time at all."""
    return 0.0 if text.strip() in ("0", "0s") else parse_seconds(text)


def _positive_int(text: str) -> int:
    if not text.strip().isascii() or not text.strip().isdigit() or int(text) < 1:
        raise ValueError(f"{text!r} is not a positive whole number")
    return int(text)


def _deal_list(text: str) -> tuple[str, list[int]]:
    """The deals as written (for the report) and as numbers."""
    return text.strip(), parse_deals(text)


def _argument(parse: Callable[[str], object]) -> Callable[[str], object]:
    """``parse`` as an argparse type: its ValueError message becomes argparse's error."""

    def convert(text: str) -> object:
        try:
            return parse(text)
        except ValueError as error:  # includes the engine's InvalidDeal and InvalidNotation
            raise argparse.ArgumentTypeError(str(error)) from None

    return convert


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m server.solver", description="Solitaire Race solver tools.")
    commands = parser.add_subparsers(dest="command", required=True)
    solve_command = commands.add_parser("solve", help="solve one deal and print its winning line")
    _add_variant(solve_command)
    solve_command.add_argument("deal", type=_argument(Deal.parse), help="deal number: N or msN")
    _add_budget(solve_command, clock="wall")
    survey_command = commands.add_parser("survey", help="solve many deals in parallel and print statistics")
    _add_variant(survey_command)
    survey_command.add_argument("deals", type=_argument(_deal_list), help="deal numbers: 1-1000, 7 or 1-10,20,30-35")
    _add_budget(survey_command, clock="cpu")
    cpus = os.cpu_count() or 1
    survey_command.add_argument(
        "--workers", type=_argument(_positive_int), default=cpus, help=f"worker processes (default {cpus})"
    )
    survey_command.add_argument(
        "--csv",
        metavar="PATH",
        help="write one row per deal to this CSV file as each finishes; an existing one is resumed:"
        " the deals it holds are not solved again",
    )
    survey_command.add_argument("--fresh", action="store_true", help="with --csv: start over, ignore what it holds")
    survey_command.add_argument(
        "--retry-unknown",
        action="store_true",
        help="with --csv: solve again the deals it holds as unknown (after a solver change, or with a larger"
        " budget); their new rows replace the old",
    )
    survey_command.add_argument("--png", metavar="PATH", help="draw histograms of time and par to this PNG file")
    return parser


def _add_variant(command: argparse.ArgumentParser) -> None:
    command.add_argument("variant", type=str.lower, choices=sorted(VARIANTS), help="the game")


def _add_budget(command: argparse.ArgumentParser, clock: str) -> None:
    defaults = Budget()
    command.add_argument(
        "--clock",
        choices=sorted(_CLOCKS),
        default=clock,
        help="what the time budget counts: wall-clock time, or the CPU time of the process solving"
        f" (fair on a shared machine) (default {clock})",
    )
    command.add_argument(
        "--budget",
        type=_argument(parse_seconds),
        default=defaults.seconds,
        help=f"time per deal: 10s, 500ms, 2m or seconds (default {format_seconds(defaults.seconds)})",
    )
    command.add_argument(
        "--nodes",
        type=_argument(_positive_int),
        default=None,
        help="node limit per deal (default: none, the time budget decides)",
    )
    command.add_argument(
        "--par",
        type=_argument(_par_seconds),
        default=None,
        help="time to shorten a winning line: 1s, 500ms, or 0 to keep the line as found"
        " (default a fifth of the budget, at least 0.5s)",
    )
    command.add_argument(
        "--autoplay",
        type=_argument(Autoplay.parse),
        default=None,
        help=f"Antares only: off, safe or all (default {Options().autoplay.value})",
    )


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    variant = variant_class(args.variant)
    if args.autoplay is not None and not variant.BUILDS_FOUNDATIONS:
        print(
            f"error: --autoplay is for Antares only: in {variant.VARIANT.capitalize()} no card is ever played"
            " to a foundation (a completed suit goes home by itself, all 13 cards at once)",
            file=sys.stderr,
        )
        return 2
    options = None if args.autoplay is None else Options(autoplay=args.autoplay)
    budget = Budget(nodes=args.nodes, seconds=args.budget, clock=_CLOCKS[args.clock])
    try:
        if args.command == "solve":
            status = _solve(variant, args.deal, options, budget, sys.stdout, args.par)
            sys.stdout.flush()  # here, where a closed pipe can be told from an error
            return status
        deals_text, deals = args.deals
        status = _survey(
            variant,
            deals_text,
            deals,
            options,
            budget,
            args.workers,
            args.csv,
            args.png,
            args.fresh,
            args.par,
            args.retry_unknown,
        )
        sys.stdout.flush()
        return status
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return INTERRUPTED
    except BrokenProcessPool:
        print("error: a worker process died (killed, or out of memory: try fewer --workers)", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # Output piped into a command that stopped reading (``| head``): not an error of ours.
        # What is left unwritten goes nowhere, so that the exit does not fail on it again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


def _describe(variant: type[Game], options: Options | None, budget: Budget) -> str:
    """``antares, autoplay safe, budget 10s CPU`` (or ``budget 10s or 2,000,000 nodes``, wall-clock)."""
    text = variant.VARIANT
    if variant.BUILDS_FOUNDATIONS:  # autoplay only changes games whose foundations players build
        text += f", autoplay {(options or Options()).autoplay.value}"
    cpu = " CPU" if budget.clock is time.process_time else ""
    return f"{text}, budget {format_budget(budget)}{cpu}"


def _solve(
    variant: type[Game], deal: Deal, options: Options | None, budget: Budget, out: TextIO, par: float | None = None
) -> int:
    result = solve(variant, deal, options, budget, par)
    out.write(f"{_describe(variant, options, budget)}, deal {deal}\n")
    out.write(f"{'verdict':<10}{_verdict_text(result)}\n")
    if isinstance(result, Solved):
        out.write(f"{'par':<10}{result.par} moves (first found {result.found})\n")
        game = variant.new(deal, options)
        texts = []
        for move in result.moves:
            texts.append(game.move_text(move))  # in the position where the move is played
            game.apply(move)
        out.write("solution\n")
        for first in range(0, len(texts), MOVES_PER_LINE):
            out.write(f"{first + 1:>5}. {' '.join(texts[first : first + MOVES_PER_LINE])}\n")
    out.write(f"{'nodes':<10}{result.stats.nodes:,}\n")
    time_text = f"{format_seconds(result.stats.seconds)} search"
    if isinstance(result, Solved):
        time_text += f", {format_seconds(result.par_seconds)} shortening the line"
    out.write(f"{'time':<10}{time_text}\n")
    return 0


def _verdict_text(result: Result) -> str:
    if isinstance(result, Solved):
        return "solved"
    if isinstance(result, Unwinnable):
        return "unwinnable (proven: every reachable position was searched)"
    assert isinstance(result, Unknown)
    return f"unknown ({_UNKNOWN_REASONS.get(result.reason, result.reason)})"


def _survey(
    variant: type[Game],
    deals_text: str,
    deals: list[int],
    options: Options | None,
    budget: Budget,
    workers: int,
    csv_path: str | None,
    png_path: str | None,
    fresh: bool = False,
    par: float | None = None,
    retry_unknown: bool = False,
) -> int:
    try:
        earlier = [] if fresh or csv_path is None else _earlier_records(csv_path)
    except ValueError as error:
        print(f"error: cannot resume from {csv_path}: {error} (use --fresh to start over)", file=sys.stderr)
        return 2
    if png_path and not plots_available():
        print("error: --png needs matplotlib: pip install -e '.[plots]'", file=sys.stderr)
        return 2
    wanted = set(deals)
    resumed = {
        record.deal: record
        for record in earlier
        if record.deal in wanted and not (retry_unknown and record.verdict is Verdict.UNKNOWN)
    }
    todo = [deal for deal in deals if deal not in resumed]
    with ExitStack() as files:
        # Open the outputs first: a survey can run for hours, and should not fail at the end.
        try:
            csv_file = files.enter_context(open(csv_path, "w", newline="", encoding="utf-8")) if csv_path else None
            png_file = files.enter_context(open(png_path, "wb")) if png_path else None
        except OSError as error:
            print(f"error: cannot write {error.filename}: {error.strerror}", file=sys.stderr)
            return 2
        if csv_file is not None:
            write_csv(earlier, csv_file)  # rewritten whole: drops a row cut short by a kill
            csv_file.flush()
        writer = csv.writer(csv_file, lineterminator="\n") if csv_file is not None else None

        def on_record(record: DealRecord) -> None:
            progress.add(record)
            if writer is not None and csv_file is not None:
                writer.writerow(csv_row(record))
                csv_file.flush()  # each finished deal survives an interruption

        if resumed:
            print(f"resuming: {len(resumed)} of {len(deals)} deals already in {csv_path}", file=sys.stderr)
        progress = Progress(len(deals), sys.stderr, done_before=len(resumed))
        try:
            run = run_survey(variant, todo, options, budget, workers, on_record, par)
        finally:
            progress.finish()
        records = sorted([*resumed.values(), *run.records], key=lambda record: record.deal)
        workers = min(workers, max(1, len(todo)))
        print(f"{_describe(variant, options, budget)}, {workers} worker{'s' if workers > 1 else ''}")
        done = len(records)
        if run.interrupted:
            print(
                f"interrupted: {done} of {len(deals)} deals of {deals_text} finished in {format_seconds(run.seconds)}"
            )
        else:
            print(f"deals {deals_text}: {done} finished in {format_seconds(run.seconds)}")
        for line in report(summarize(records)):
            print(line)
        if csv_file is not None:
            csv_file.seek(0)
            csv_file.truncate()
            kept = {record.deal: record for record in earlier}
            kept.update((record.deal, record) for record in run.records)
            write_csv(list(kept.values()), csv_file)  # in deal order
        if png_file is not None:
            png_file.write(survey_png(records, f"{variant.VARIANT} deals {deals_text}"))
    return INTERRUPTED if run.interrupted else 0


def _earlier_records(csv_path: str) -> list[DealRecord]:
    """The records an earlier run of the survey left in ``csv_path`` (none if no such file)."""
    try:
        with open(csv_path, newline="", encoding="utf-8") as stream:
            return read_csv(stream)
    except FileNotFoundError:
        return []


if __name__ == "__main__":
    raise SystemExit(main())
