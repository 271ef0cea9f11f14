"""The survey's parts: deal ranges, the progress bar, the report, the CSV, the PNG, the worker pool."""

from __future__ import annotations

import csv
import io
import struct
import time
import zlib

import pytest

from server.games import Antares, Options, Scorpion
from server.solver import Budget, Solved, Unwinnable, solve
from server.solver.histogram import HEIGHT, WIDTH, survey_png, time_bins
from server.solver.progress import Progress, format_seconds
from server.solver.statistics import DealRecord, Verdict, summarize
from server.solver.survey import (
    MAX_SURVEY_DEALS,
    format_budget,
    parse_deals,
    report,
    run_survey,
    solve_deal,
    write_csv,
)

S, W, U = Verdict.SOLVED, Verdict.UNWINNABLE, Verdict.UNKNOWN

# -- deal ranges ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "deals"),
    [
        ("7", [7]),
        ("1-5", [1, 2, 3, 4, 5]),
        ("1-3,20,30-32", [1, 2, 3, 20, 30, 31, 32]),
        (" 1 - 3 , 5 ", [1, 2, 3, 5]),
        ("5-5", [5]),
        ("10,1-3", [10, 1, 2, 3]),  # in the order written
        ("1-5,3,4-6", [1, 2, 3, 4, 5, 6]),  # each deal once
        ("31999-32001", [31999, 32000, 32001]),  # across the change of generator
    ],
)
def test_parse_deals_reads_numbers_and_ranges(text: str, deals: list[int]) -> None:
    assert parse_deals(text) == deals


def test_parse_deals_reads_a_thousand_deal_range() -> None:
    assert parse_deals("1-1000") == list(range(1, 1001))


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("", "is not a list of deals"),
        ("abc", "is not a list of deals"),
        ("1-", "is not a list of deals"),
        ("-3", "is not a list of deals"),
        ("1,,2", "is not a list of deals"),
        ("1-2-3", "is not a list of deals"),
        ("ms5", "is not a list of deals"),
        ("1.5", "is not a list of deals"),
        ("5-3", "reversed range"),
        ("0", "deal numbers start at 1"),
        ("0-10", "deal numbers start at 1"),
        ("1" + "0" * 20, "at most 20 digits"),
        (f"1-{MAX_SURVEY_DEALS + 1}", "more than 1,000,000 deals"),
    ],
)
def test_parse_deals_explains_what_is_wrong(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_deals(text)


# -- formatting ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(0.0123, "12ms"), (0.999, "999ms"), (1.567, "1.57s"), (12.34, "12.3s"), (133, "2m13s"), (3900, "1h05m")],
)
def test_format_seconds_reads_naturally(seconds: float, text: str) -> None:
    assert format_seconds(seconds) == text


def test_format_budget_names_both_limits() -> None:
    assert format_budget(Budget(nodes=500_000, seconds=10)) == "10s or 500,000 nodes"
    assert format_budget(Budget(seconds=0.5)) == "500ms"  # no node cap unless asked for


def record(deal: int, verdict: Verdict, seconds: float, par: int | None = None) -> DealRecord:
    if par is None:
        return DealRecord(deal, verdict, seconds, nodes=1000 + deal)
    return DealRecord(deal, verdict, seconds, nodes=1000 + deal, par=par, found=par + 4, par_seconds=0.25)


RECORDS = [record(3, S, 0.25, 61), record(1, W, 1.5), record(2, U, 10.01), record(4, S, 0.05, 70)]


def test_report_gives_counts_winnability_times_and_par() -> None:
    lines = report(summarize(RECORDS))
    assert lines[0].split() == ["solved", "2", "50.0%"]
    assert lines[1].split() == ["unwinnable", "1", "25.0%"]
    assert lines[2].split() == ["unknown", "1", "25.0%"]
    # Wilson: 2 of 4 gives a low of 15.0%, 3 of 4 a high of 95.4%.
    assert lines[3] == "winnable    50.0% to 75.0% of deals; 95% confidence interval 15.0% to 95.4% (Wilson)"
    assert lines[4] == "time/deal   median 875ms, p90 7.46s, max 10.0s (search to the verdict)"
    assert lines[5] == "par         mean 65.5, median 65.5, p90 69.1, max 70 moves (over 2 solved deals)"


def test_report_without_unknowns_gives_one_observed_share() -> None:
    lines = report(summarize([record(1, S, 0.1, 50), record(2, W, 0.1)]))
    assert lines[3].startswith("winnable    50.0% of deals; 95% confidence interval 9.5% to 90.5%")
    assert lines[5] == "par         mean 50.0, median 50, p90 50, max 50 moves (over 1 solved deal)"


def test_report_of_nothing_says_so() -> None:
    assert report(summarize([])) == ["no deal was finished"]


def test_csv_has_one_row_per_deal_in_deal_order() -> None:
    stream = io.StringIO()
    write_csv(RECORDS, stream)
    rows = list(csv.reader(io.StringIO(stream.getvalue())))
    assert rows[0] == ["deal", "verdict", "seconds", "nodes", "par", "found", "par_seconds"]
    assert rows[1:] == [
        ["1", "unwinnable", "1.500000", "1001", "", "", ""],
        ["2", "unknown", "10.010000", "1002", "", "", ""],
        ["3", "solved", "0.250000", "1003", "61", "65", "0.250000"],
        ["4", "solved", "0.050000", "1004", "70", "74", "0.250000"],
    ]


# -- progress -----------------------------------------------------------------------------


class Clock:
    """A clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        self.now += 1.0
        return self.now


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_in_a_log_writes_a_line_each_tenth() -> None:
    stream = io.StringIO()
    progress = Progress(20, stream, Clock())
    for deal in range(1, 21):
        progress.add(record(deal, S if deal % 4 else U, 0.1))
    progress.finish()
    lines = stream.getvalue().splitlines()
    assert len(lines) == 10
    assert "\r" not in stream.getvalue()
    assert lines[0].startswith("[##..................] 2/20 solved 2 unwinnable 0 unknown 0 eta ")
    assert lines[-1].startswith("[####################] 20/20 solved 15 unwinnable 0 unknown 5 in ")


def test_progress_estimates_the_time_left() -> None:
    progress = Progress(4, io.StringIO(), Clock())  # starts at t=1
    progress.add(record(1, W, 0.1))  # its log line reads t=2
    # Read at t=3: one deal took 2s, so the 3 left take 6s.
    assert progress.line().endswith("eta 6.00s")


def test_progress_on_a_terminal_draws_a_rich_bar() -> None:
    stream = Terminal()
    progress = Progress(3, stream, Clock())
    for deal in (1, 2, 3):
        progress.add(record(deal, W, 0.1))
    progress.finish()
    text = stream.getvalue()
    assert "3/3" in text
    assert "unwinnable 3" in text


def test_progress_of_a_resumed_survey_counts_earlier_deals_as_done() -> None:
    stream = io.StringIO()
    progress = Progress(10, stream, Clock(), done_before=8)
    progress.add(record(9, W, 0.1))
    assert progress.done == 9
    assert stream.getvalue().startswith("[##################..] 9/10 solved 0 unwinnable 1 unknown 0 eta ")


# -- the PNG --------------------------------------------------------------------------------


def read_png(data: bytes) -> tuple[int, int, bytes]:
    """Check a PNG's structure (signature, chunk checksums, 8-bit RGB or RGBA header); return its size
    and raw (filtered) pixel rows."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, chunks = 8, []
    while position < len(data):
        (length,) = struct.unpack(">I", data[position : position + 4])
        kind, body = data[position + 4 : position + 8], data[position + 8 : position + 8 + length]
        (crc,) = struct.unpack(">I", data[position + 8 + length : position + 12 + length])
        assert crc == zlib.crc32(kind + body)
        chunks.append((kind, body))
        position += 12 + length
    assert chunks[0][0] == b"IHDR"
    assert chunks[-1] == (b"IEND", b"")
    width, height, depth, color, compression, filtering, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert (depth, compression, filtering, interlace) == (8, 0, 0, 0)
    assert color in (2, 6)  # RGB or RGBA
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    assert len(raw) == height * (1 + width * (3 if color == 2 else 4))
    return width, height, raw


def test_time_bins_cover_every_time_four_to_a_decade() -> None:
    bins = time_bins([0.004, 0.2, 9.0])
    assert bins[0] == pytest.approx(0.001)
    assert bins[-1] == pytest.approx(10.0)
    assert len(bins) == 4 * 4 + 1
    assert time_bins([]) == time_bins([0.0]) == pytest.approx([10 ** (-3 + i / 4) for i in range(5)])


@pytest.mark.parametrize(
    "records",
    [
        RECORDS,
        [],  # empty axes
        [record(1, W, 0.0)],  # a zero time still has a place on the log scale
        [record(d, S, 0.01 * d, 40 + d % 90) for d in range(1, 400)],  # many par values
    ],
)
def test_survey_png_is_a_valid_image(records: list[DealRecord]) -> None:
    width, height, raw = read_png(survey_png(records, "scorpion deals 1-400"))
    assert (width, height) == (WIDTH, HEIGHT)
    assert len(set(raw)) > 2  # something was drawn


# -- solving deals ----------------------------------------------------------------------------


def test_solve_deal_records_what_the_solver_says() -> None:
    # CPU seconds: the par line's shortening then does the same work on a busy machine.
    budget = Budget(seconds=5, clock=time.process_time)
    won = solve_deal(Antares, 24, Options(), budget)
    result = solve(Antares, 24, Options(), budget)
    assert isinstance(result, Solved)
    assert won is not None
    assert (won.deal, won.verdict, won.par, won.nodes) == (24, S, result.par, result.stats.nodes)
    assert won.found == result.found
    assert won.par_seconds is not None
    lost = solve_deal(Scorpion, 4, None, budget)
    assert isinstance(solve(Scorpion, 4, None, budget), Unwinnable)
    assert lost is not None
    assert lost == DealRecord(4, W, lost.seconds, lost.nodes)


def test_solve_deal_records_an_unknown_when_the_budget_runs_out() -> None:
    record = solve_deal(Scorpion, 3, None, Budget(nodes=1))
    assert record is not None
    assert record.verdict is U
    assert record.par is None


def test_run_survey_solves_every_deal_in_worker_processes() -> None:
    seen: list[int] = []
    run = run_survey(Scorpion, [4, 1], None, Budget(seconds=5), workers=2, on_record=lambda r: seen.append(r.deal))
    assert [r.deal for r in run.records] == [1, 4]  # in deal order
    assert [r.verdict for r in run.records] == [W, W]
    assert sorted(seen) == [1, 4]
    assert not run.interrupted
    assert run.seconds > 0


def test_run_survey_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        run_survey(Scorpion, [1], None, Budget(), workers=0)
