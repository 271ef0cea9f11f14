"""The solver's command line: ``python -m server.solver solve|survey ...``."""

from __future__ import annotations

import csv
import os
import shlex
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from server.games import Antares
from server.solver.__main__ import main, parse_seconds
from tests.solver.test_survey import read_png

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.solver", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


# -- solve ----------------------------------------------------------------------------------


def test_solve_prints_a_solution_that_wins_when_played() -> None:
    result = run("solve", "antares", "24", "--budget", "5s")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "antares, autoplay safe, budget 5s, deal 24"
    assert lines[1] == "verdict   solved"
    par, found = lines[2].removeprefix("par").replace("moves (first found", "").rstrip(")").split()
    numbered = [line for line in lines[lines.index("solution") + 1 :] if line[:5].strip().isdigit()]
    moves = [text for line in numbered for text in line.split()[1:]]
    assert len(moves) == int(par) <= int(found)
    game = Antares.new(24)
    for text in moves:
        game.apply(game.parse_move(text))
    assert game.is_won()
    assert lines[-2].startswith("nodes     ")
    assert lines[-1].startswith("time      ")
    assert result.stderr == ""


def test_solve_reports_an_unknown_when_the_budget_runs_out(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "antares", "19", "--nodes", "1", "--autoplay", "off"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "antares, autoplay off, budget 10s or 1 nodes, deal 19"
    assert out[1] == "verdict   unknown (the node budget ran out)"
    assert "solution" not in out


def test_solve_reports_an_unwinnable_deal(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["solve", "SCORPION", "4", "--budget", "5"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "scorpion, budget 5s, deal 4"  # no autoplay in Scorpion
    assert out[1].startswith("verdict   unwinnable")


@pytest.mark.parametrize("command", [["solve", "scorpion", "4"], ["survey", "scorpion", "1-3"]])
@pytest.mark.parametrize("autoplay", ["all", "off", "safe"])
def test_autoplay_is_refused_for_scorpion_in_one_line_saying_why(
    command: list[str], autoplay: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command, "--autoplay", autoplay]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "error: --autoplay is for Antares only: in Scorpion no card is ever played to a foundation"
        " (a completed suit goes home by itself, all 13 cards at once)\n"
    )


@pytest.mark.parametrize("unbuffered", ["1", ""])
def test_solve_into_a_pipe_closed_early_ends_quietly(unbuffered: str) -> None:
    """``solve ... | head``: the reader goes away before the solution is printed (here it is
    gone before the first line). No traceback, no ``Exception ignored``, and success."""
    env = {**os.environ, "PYTHONUNBUFFERED": unbuffered}  # each write fails, or the last flush
    process = subprocess.Popen(
        [sys.executable, "-m", "server.solver", "solve", "antares", "24", "--par", "0"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    assert process.stderr is not None
    process.stdout.close()
    said = process.stderr.read()
    process.stderr.close()
    assert process.wait(60) == 0
    assert said == ""


def test_solve_piped_into_head_prints_its_first_lines_and_nothing_else() -> None:
    command = f"{shlex.quote(sys.executable)} -m server.solver solve antares 24 --par 0 | head -n 2"
    result = subprocess.run(command, shell=True, cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert result.stdout.splitlines() == ["antares, autoplay safe, budget 10s, deal 24", "verdict   solved"]
    assert result.stderr == ""


# -- budgets ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"), [("10s", 10.0), ("500ms", 0.5), ("2m", 120.0), ("3", 3.0), ("2.5", 2.5), (" 1.5S ", 1.5)]
)
def test_parse_seconds_reads_durations(text: str, seconds: float) -> None:
    assert parse_seconds(text) == seconds


@pytest.mark.parametrize(("text", "words"), [("10h", "not a duration"), ("", "not a duration"), ("0s", "more than 0")])
def test_parse_seconds_rejects_other_text(text: str, words: str) -> None:
    with pytest.raises(ValueError, match=words):
        parse_seconds(text)


# -- errors -----------------------------------------------------------------------------------


def test_unknown_variant_exits_2_naming_the_choices() -> None:
    result = run("solve", "klondike", "1")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "klondike" in result.stderr
    assert "antares" in result.stderr
    assert "scorpion" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["solve", "antares", "0"], "deal numbers start at 1"),
        (["solve", "antares", "12x"], "'12x' is not a deal number"),
        (["solve", "antares", "1", "--budget", "10h"], "'10h' is not a duration"),
        (["solve", "antares", "1", "--budget", "0"], "more than 0 seconds"),
        (["solve", "antares", "1", "--nodes", "0"], "'0' is not a positive whole number"),
        (["solve", "antares", "1", "--autoplay", "some"], "autoplay is one of off, safe, all"),
        (["survey", "scorpion", "5-3"], "reversed range"),
        (["survey", "scorpion", "1-x"], "is not a list of deals"),
        (["survey", "scorpion", "1-3", "--workers", "0"], "'0' is not a positive whole number"),
        (["survey", "scorpion", "1-3", "--budget", "fast"], "'fast' is not a duration"),
        (["survey"], "the following arguments are required"),
    ],
)
def test_bad_input_exits_2_with_a_message(argv: list[str], words: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert words in captured.err


def test_survey_that_cannot_write_its_csv_stops_before_solving(tmp_path: Path) -> None:
    result = run("survey", "scorpion", "1-3", "--csv", str(tmp_path / "missing" / "out.csv"))
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: cannot write ")
    assert "No such file or directory" in result.stderr
    assert "Traceback" not in result.stderr


# -- survey -----------------------------------------------------------------------------------


def test_survey_prints_statistics_and_writes_csv_and_png(tmp_path: Path) -> None:
    csv_path, png_path = tmp_path / "out.csv", tmp_path / "out.png"
    result = run(
        "survey", "antares", "1-4", "--budget", "5s", "--workers", "2", "--csv", str(csv_path), "--png", str(png_path)
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "antares, autoplay safe, budget 5s CPU, 2 workers"
    assert lines[1].startswith("deals 1-4: 4 finished in ")
    assert lines[2].split() == ["solved", "4", "100.0%"]
    assert lines[3].split() == ["unwinnable", "0", "0.0%"]
    assert lines[4].split() == ["unknown", "0", "0.0%"]
    # Wilson for 4 of 4: 51.0% to 100%.
    assert lines[5] == "winnable    100.0% of deals; 95% confidence interval 51.0% to 100.0% (Wilson)"
    assert lines[6].startswith("time/deal   median ")
    assert lines[7].startswith("par         mean ")
    assert lines[7].endswith("moves (over 4 solved deals)")
    # Not a terminal: progress comes as plain lines on stderr, the last one complete.
    progress = result.stderr.splitlines()
    assert progress[-1].startswith("[####################] 4/4 solved 4 unwinnable 0 unknown 0 in ")
    assert "\r" not in result.stderr

    with csv_path.open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [row["deal"] for row in rows] == ["1", "2", "3", "4"]
    for row in rows:
        assert row["verdict"] == "solved"
        assert int(row["par"]) <= int(row["found"])
        assert float(row["seconds"]) > 0
        assert int(row["nodes"]) > 0
        assert float(row["par_seconds"]) >= 0
    pars = sorted(int(row["par"]) for row in rows)
    assert f"median {(pars[1] + pars[2]) / 2:g}, " in lines[7]

    width, height, _ = read_png(png_path.read_bytes())
    assert (width, height) == (720, 540)


def test_ctrl_c_stops_a_survey_and_prints_what_was_done() -> None:
    # A new session stands for a terminal's process group: Ctrl-C reaches every process in it.
    process = subprocess.Popen(
        # Enough deals that a busy machine cannot finish them between the first line and Ctrl-C.
        [sys.executable, "-m", "server.solver", "survey", "scorpion", "1-400", "--budget", "1s", "--workers", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert process.stderr is not None
    first_progress = process.stderr.readline()  # a line each 40 deals: the survey is under way
    assert first_progress.startswith("[##")
    os.killpg(process.pid, signal.SIGINT)
    out, err = process.communicate(timeout=30)
    assert process.returncode == 130
    assert "Traceback" not in err
    lines = out.splitlines()
    assert lines[1].startswith("interrupted: ")
    done = int(lines[1].split()[1])
    assert 40 <= done < 400
    counts = {line.split()[0]: int(line.split()[1]) for line in lines[2:5]}
    assert sum(counts.values()) == done


def test_an_interrupted_survey_resumes_from_its_csv(tmp_path: Path) -> None:
    csv_path = tmp_path / "out.csv"
    # What a survey killed after two deals leaves: two rows and a third cut short.
    csv_path.write_text(
        "deal,verdict,seconds,nodes,par,found,par_seconds\n7,solved,0.5,100,60,70,0.1\n9,unwinnable,0.25,50,,,\n10,solv",
        encoding="utf-8",
    )
    result = run("survey", "scorpion", "7-10", "--budget", "5s", "--workers", "1", "--csv", str(csv_path))
    assert result.returncode == 0, result.stderr
    assert "resuming: 2 of 4 deals already in" in result.stderr
    assert result.stdout.splitlines()[0] == "scorpion, budget 5s CPU, 1 worker"
    with csv_path.open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [row["deal"] for row in rows] == ["7", "8", "9", "10"]
    assert (rows[0]["nodes"], rows[2]["nodes"]) == ("100", "50")  # kept, not solved again
    # Searched now (deal 10 is proved lost before any move is tried, so nodes may be 0).
    assert {rows[1]["verdict"], rows[3]["verdict"]} <= {"solved", "unwinnable"}
    assert int(rows[1]["nodes"]) > 0


def test_a_fresh_survey_ignores_its_csv(tmp_path: Path) -> None:
    csv_path = tmp_path / "out.csv"
    csv_path.write_text("deal,verdict,seconds,nodes,par,found,par_seconds\n4,solved,0.5,100,60,70,0.1\n")
    result = run("survey", "scorpion", "4", "--csv", str(csv_path), "--fresh", "--nodes", "100000")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "scorpion, budget 10s or 100,000 nodes CPU, 1 worker"
    with csv_path.open(newline="") as stream:
        assert [row["verdict"] for row in csv.DictReader(stream)] == ["unwinnable"]


def test_retry_unknown_solves_the_unknown_deals_again(tmp_path: Path) -> None:
    csv_path = tmp_path / "out.csv"
    # Deal 2 was left unknown by a smaller budget; deal 3's verdict stands.
    csv_path.write_text(
        "deal,verdict,seconds,nodes,par,found,par_seconds\n2,unknown,0.1,500,,,\n3,unwinnable,0.25,50,,,\n",
        encoding="utf-8",
    )
    result = run("survey", "scorpion", "2-3", "--workers", "1", "--csv", str(csv_path), "--retry-unknown")
    assert result.returncode == 0, result.stderr
    assert "resuming: 1 of 2 deals already in" in result.stderr
    with csv_path.open(newline="") as stream:
        rows = list(csv.DictReader(stream))
    assert [(row["deal"], row["verdict"]) for row in rows] == [("2", "unwinnable"), ("3", "unwinnable")]
    assert rows[1]["nodes"] == "50"  # kept, not solved again


def test_a_csv_that_is_not_a_survey_is_not_resumed(tmp_path: Path) -> None:
    csv_path = tmp_path / "out.csv"
    csv_path.write_text("name,score\nx,1\n")
    result = run("survey", "scorpion", "4", "--csv", str(csv_path))
    assert result.returncode == 2
    assert "cannot resume" in result.stderr
    assert csv_path.read_text() == "name,score\nx,1\n"  # left as it was
