"""The anti-cheat bench's synthetic players: valid logs, each kind as described, and the
bench's report (a few runs; the figures are in bench/README.md, never checked here)."""

from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

import pytest

from bench.lib.people import (
    expert_log,
    explorer_log,
    masked_log,
    person_log,
    person_pacing,
    person_times,
    uniform_times,
)
from server.competition.move_timing import played_line
from server.games import Antares
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line

ROOT = Path(__file__).resolve().parent.parent.parent


def test_people_play_legal_logs_that_explore_and_experts_win_cleanly() -> None:
    rng = random.Random(1)
    entries = person_log(new_antares(), rng)
    assert "undo" in entries
    game = new_antares()
    for entry in entries:  # every entry replays
        if entry == "undo":
            game.undo()
        elif not entry.startswith("resign "):
            game.apply(game.parse_move(entry))
    assert game.is_won() or entries[-1] == "resign resigned"
    expert = expert_log(new_antares(), rng)
    assert "undo" not in expert
    assert Antares.replay(ANTARES_DEAL, new_antares().options, expert).is_won()


def test_masked_replays_undo_their_detours_and_times_follow_the_entries() -> None:
    rng = random.Random(2)
    line = winning_line()
    masked = masked_log(new_antares(), line, rng, detours=2)
    assert masked.count("undo") == 2
    assert played_line(masked) == list(line)
    times = person_times(person_pacing(rng), masked, rng, 1000)
    assert len(times) == len(masked)
    assert times == sorted(times)
    assert times[0] > 1000  # a reading pause first
    steady = uniform_times(masked, rng, 0, 300, 1000)
    assert all(300 <= b - a <= 1000 for a, b in zip([0, *steady], steady, strict=False))
    longer = masked_log(new_antares(), line, rng, detours=5, longest=4)
    assert 5 <= longer.count("undo") <= 20
    assert played_line(longer) == list(line)


def test_explorers_end_on_the_line_having_tried_detours_around_it() -> None:
    line = winning_line()
    explored = explorer_log(new_antares(), line, random.Random(3))
    assert played_line(explored) == list(line)
    assert explored.count("undo") > len(line) // 10


@pytest.mark.slow
def test_the_bench_prints_its_rates() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "bench.detector", "--runs", "2", "--deals", "1", "--budget", "1"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    hits, alarms = "hit rate (studied, studied-paced, studied-masked): ", "false alarms (people, experts, explorers): "
    for line in (hits, alarms, "machine speed refused"):
        assert line in result.stdout
