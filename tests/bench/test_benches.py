"""Smoke tests: every bench runs for a second or two against real processes and prints its figures.

They keep the benches from rotting as the server changes; they check that the figures are
printed and the runs had no errors, never what the figures are (no timing assertions).
Marked slow: each starts a server (or two) of its own.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.lib.bots import local_legal_moves
from server.games import Antares, Game, Scorpion
from server.solver.compiled import built_here, native_antares
from tests.polling import COUNTDOWN

ROOT = Path(__file__).resolve().parent.parent.parent


def bench(*args: str, timeout: float = 100) -> str:
    """Run ``python -m bench.<args>`` and return its output, failing on a non-zero exit. The
    servers it starts inherit ``COUNTDOWN``: a smoke test does not wait out real countdowns."""
    env = {**os.environ, "COUNTDOWN": str(COUNTDOWN)}
    result = subprocess.run(
        [sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )
    assert result.returncode == 0, result.stdout + result.stderr
    return result.stdout


@pytest.mark.parametrize("variant", [Scorpion, Antares])
def test_bots_work_out_the_legal_moves_the_engine_lists(variant: type[Game]) -> None:
    # From the public board alone (face-down cards as None), along a game.
    game = variant.new(617)
    for _ in range(30):
        expected = [game.move_text(move) for move in game.legal_moves()]
        public = [list(pile) for pile in game.public_piles()]
        assert local_legal_moves(variant, public) == expected
        if not expected:
            break
        game.apply(game.legal_moves()[0])


SMALL_LOAD = ("--racers", "4", "--rooms", "2", "--seconds", "0.5", "--settle", "0", "--rate", "40")


@pytest.mark.slow
@pytest.mark.parametrize("target", ["--spawn", "--relay"])
@pytest.mark.parametrize("ask", [(), ("--no-legal-ask",)])
def test_load_runs_against_the_server_and_the_relay(target: str, ask: tuple[str, ...]) -> None:
    output = bench("bench.load", *SMALL_LOAD, "--workers", "1", target, *ask)
    assert "move -> ack:" in output
    assert "CPU per move" in output
    assert "errors in the window: none" in output


@pytest.mark.slow
def test_compare_prints_both_and_their_ratio() -> None:
    output = bench("bench.load", "--compare", *SMALL_LOAD, "--workers", "1", "--phases", "2")
    assert "paced, no legal-moves ask:" in output
    assert "server CPU per move" in output
    assert "errors in the window" not in output


@pytest.mark.slow
def test_ab_runs_two_checkouts_and_the_relay_in_turn() -> None:
    # This checkout twice (one with a flag), as a baseline commit's worktree would be given;
    # the relay on the server's pipelined connection.
    output = bench(
        "bench.ab", "--relay", "--flags", "relay=--pipelined", "--tree", "a=.", "--tree", "b=.",
        "--flags", "b=--grace 30", "--repeats", "1",
        *SMALL_LOAD, "--workers", "1", "--phases", "2",
    )  # fmt: skip
    assert "paced, no legal-moves ask: medians over 1 windows each" in output
    for name in ("relay", "a", "b"):
        assert f"\n  {name} " in output
    assert "CPU/move vs relay" in output


@pytest.mark.slow
def test_ab_in_turns_loads_every_target_at_once_and_compares_round_by_round() -> None:
    output = bench(
        "bench.ab", "--relay", "--tree", "a=.", "--tree", "b=.", "--turns", "0.5", "--repeats", "1",
        *SMALL_LOAD, "--workers", "1", "--phases", "1", "--seconds", "1",
    )  # fmt: skip
    assert "paced, legal moves asked: turns, 2 each" in output
    assert "vs relay; vs a, round by round" in output
    for name in ("relay", "a", "b"):
        assert re.search(rf"\n  {name} +\d+\.\d+ ms +\d+% +\d+ ", output), output
    assert "bot errors" not in output


@pytest.mark.slow
def test_idle_opens_and_measures() -> None:
    output = bench("bench.idle", "--connections", "20", "--hold", "0.5", "--processes", "1", "--spawn")
    assert "20 of 20 connections open" in output
    assert "failures: none" in output


#: The abuse benches' probe: one room of two bots is enough to time its moves.
SMALL_PROBE = ("--probe-rooms", "1", "--probe-rate", "20")


@pytest.mark.slow
def test_abuse_stalled_spectators() -> None:
    output = bench(
        "bench.abuse", "stalled", "--spawn", "--spectators", "3", "--seconds", "1", "--end-wait", "0.2", *SMALL_PROBE
    )
    assert "RSS each second (MB):" in output
    assert "their connections at the end:" in output


@pytest.mark.slow
def test_abuse_spectator_joins() -> None:
    output = bench("bench.abuse", "joins", "--spawn", "--spectators", "10", "--quiet", "0.5")
    assert "frames received by all spectators:" in output
    assert "server CPU for the joins:" in output


@pytest.mark.slow
def test_abuse_connection_burst() -> None:
    output = bench(
        "bench.abuse", "burst", "--spawn", "--connections", "20", "--bursts", "1", "--baseline", "0.5", "--pause", "0",
        "--settle", "0", *SMALL_PROBE,
    )  # fmt: skip
    assert "probe move->ack, burst 1" in output
    assert "failures" not in output


@pytest.mark.slow
def test_abuse_replay_flood() -> None:
    output = bench(
        "bench.abuse", "replay-flood", "--spawn", "--entries", "20", "--seconds", "0.5", "--baseline", "0.5",
        "--settle", "0", *SMALL_PROBE,
    )  # fmt: skip
    assert "a finished practice game of 20 log entries;" in output
    assert "probe move->ack, flooded" in output


@pytest.mark.slow
def test_fanout_against_the_bare_broadcast() -> None:
    output = bench(
        "bench.fanout", "--spawn", "--rooms", "2", "--rate", "20", "--counts", "1,2", "--seconds", "0.2",
        "--settle", "0.05", "--repeats", "2",
    )  # fmt: skip
    assert "bare us/delivery" in output
    # One row a count (the median of its two repeats), from windows between empty ones: 0, 1, 0, 1, 0, 2, 0, 2, 0.
    assert len([line for line in output.splitlines() if "deliveries/s)" in line]) == 2
    assert len([line for line in output.splitlines() if line.startswith("... 0 a room")]) == 2 * 5


@pytest.mark.slow
def test_challenges_measures_memory_and_the_inbox_read() -> None:
    output = bench("bench.challenges", "--challenges", "200", "--players", "40", "--reads", "20")
    assert "bytes a challenge" in output
    assert re.search(r"inbox / one key \(medians\): [\d.]+x", output), output


@pytest.mark.slow
def test_commits_compares_the_two_roads_of_a_room_commit() -> None:
    output = bench("bench.commits", "--commits", "200", "--concurrency", "1,4")
    assert "redis-py" in output
    assert "pipelined" in output
    assert len([line for line in output.splitlines() if line.rstrip().endswith("x")]) == 2


def test_wake_floor_prints_a_wake_ups_cost_for_each_period() -> None:
    output = bench("bench.wake_floor", "--frames", "20", "--periods", "1,4", "--repeats", "1")
    rows = [line for line in output.splitlines() if line.lstrip().endswith(tuple("0123456789")) and " ms " in line]
    assert len(rows) == 2, output


@pytest.mark.slow
def test_gc_share_times_the_collections_of_a_loaded_server_for_each_setting() -> None:
    output = bench("bench.gc_share", "--racers", "20", "--seconds", "1", "--thresholds", "5000,2,1000")
    assert re.search(r"5000,2,1000 .* s of .* \(.*%\) .* ms a move", output), output


#: The node benches' waits before the moves, which a smoke run does without.
NO_WAITS = ("--no-warm-up", "--idle", "0.2")


def strace_works() -> bool:
    """strace is installed and may trace this machine's processes (ptrace is allowed)."""
    if shutil.which("strace") is None:
        return False
    return subprocess.run(["strace", "-c", "-o", "/dev/null", "true"], capture_output=True, check=False).returncode == 0


@pytest.fixture(scope="module")
def nodes_output() -> str:
    """One run of bench.nodes for the tests of its figures: two pairs, counting the system
    calls where strace may trace (a run of nodes costs seconds of CPU)."""
    syscalls = ("--syscalls",) if strace_works() else ()
    return bench("bench.nodes", "--rooms", "2", "--seconds", "0.5", "--pairs", "2", *syscalls, *NO_WAITS)


@pytest.mark.slow
def test_nodes_compares_three_nodes_with_one_in_alternated_pairs(nodes_output: str) -> None:
    output = nodes_output
    assert output.count("1 node:") == output.count("3 nodes:") == 2
    assert "batches between nodes:" in output  # only three nodes send each other anything
    assert "forwarded move->ack" in output
    # The probe room has moves left whatever the bots did, so every failover is timed.
    failovers = re.findall(r"next ack on another node\): (\S+) ms", output)
    assert len(failovers) == 2
    assert all(math.isfinite(float(value)) for value in failovers)
    assert "-- median of 2 pairs: three nodes' CPU a move" in output


@pytest.mark.slow
@pytest.mark.skipif(not strace_works(), reason="needs strace, allowed to trace processes")
def test_nodes_counts_the_system_calls_of_a_move(nodes_output: str) -> None:
    counts = re.findall(r"system calls a move (\S+): (.*)", nodes_output)
    assert len(counts) == 2 * 2  # one node, then three, in each pair
    for total, top in counts:
        assert float(total) > 0
        assert "sendto" in top  # every move is sent to Redis and acknowledged


@pytest.mark.slow
def test_nodes_side_by_side_takes_turns_and_compares_round_by_round() -> None:
    output = bench("bench.nodes_side_by_side", "--rooms", "2", "--seconds", "1", "--turn", "0.25", "--no-warm-up")
    assert output.startswith("4 rounds of turns of 0.25 s")
    assert output.count("1 node:") == output.count("3 nodes:") == 1
    assert "forwarded move->ack" in output
    (failover,) = re.findall(r"next ack on another node\): (\S+) ms", output)
    assert math.isfinite(float(failover))
    assert re.search(r"over every turn; round by round median \S+x, quartiles", output)


@pytest.mark.slow
def test_nodes_split_reads_the_owner_and_the_client_node_apart() -> None:
    output = bench("bench.nodes_split", "--rooms", "2", "--seconds", "1", "--repeats", "1", *NO_WAITS)
    assert re.search(r"one node: \d+ moves; a move: node \S+ µs", output)
    assert re.search(r"A \(owner\) \S+ µs, \S+ wake-ups; B \(client's node\) \S+ µs", output)
    assert "forwarded move->ack" in output  # the second racers' moves all go to the owner
    assert "the owner against one node:" in output


def test_solver_speed_compares_a_baseline_the_build_and_the_source() -> None:
    output = bench(
        "bench.solver_speed", "--baseline", "HEAD", "--antares", "1", "--scorpion", "3", "--budget", "2",
        "--memory-deal", "3", "--memory-seconds", "0.3",
    )  # fmt: skip
    assert "baseline HEAD" in output
    assert "deals/s ratio" in output
    assert "positions per GiB" in output
    if built_here():
        assert "this tree, pure Python" in output
    if native_antares() is not None:
        assert "this tree, no C port" in output


@pytest.mark.slow
def test_handoff_times_a_drain_and_a_failover_and_no_racer_is_disconnected() -> None:
    output = bench("bench.handoff", "--rooms", "2", "--before", "0.5")
    for kind in ("drain (SIGTERM)", "failover (SIGKILL)"):
        [line] = [line for line in output.splitlines() if line.startswith(kind)]
        assert "stall per racer median" in line
        assert "disconnected 0 of" in line  # a client on a surviving node keeps its connection


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_arena_times_the_standings_compares_cpu_and_loses_no_points_when_a_node_dies() -> None:
    # A bot whose race was on the killed node waits for its end at most --over-wait seconds.
    output = bench(
        "bench.arena", "--bots", "6", "--nodes", "2", "--seconds", "8", "--windows", "2", "--settle", "0",
        "--rate", "10", "--moves", "5", "--measure", "1", "--workers", "1", "--node-ttl", "2", "--over-wait", "15",
        *NO_WAITS, timeout=200,
    )  # fmt: skip
    assert re.search(r"standings update after a race ends .* p99 [\d.]+ ms .*\(n=[1-9]", output), output
    assert re.search(r"server CPU per move: arena [\d.]+ ms .* arena / plain [\d.]+x", output), output
    assert "KiB per 1,000 players" in output
    assert "node killed (SIGKILL)" in output
    # A race that ended just before its node died is recorded by another node.
    assert re.search(r"lost points: 0, lost races: 0 \(", output), output
