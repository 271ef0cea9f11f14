"""Smoke test of bench.rolling: a rolling restart of three nodes behind the shipped HAProxy
while 4 races run prints its table, each node's time from SIGTERM to the balancer marking it
DOWN, and no acknowledged move is lost (no timing assertions). Skipped without haproxy or
openssl on PATH (.ci/run installs haproxy)."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.bench.test_benches import bench


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("haproxy") is None or shutil.which("openssl") is None, reason="needs haproxy and openssl"
)
def test_rolling_restart_prints_its_table_and_loses_no_move() -> None:
    output = bench("bench.rolling", "--races", "4", "--drain", "1", "--before", "2.5", "--after", "1", timeout=100)
    assert re.search(r"^window +seconds +racers +acks +disconnected +drops +stall p50 ", output, re.MULTILINE)
    assert re.search(r"^before \(baseline\) ", output, re.MULTILINE)
    assert re.search(r"^rolling restart ", output, re.MULTILINE)
    summary = re.search(r"races 4, racers 8, acked moves (\d+), moves lost (\d+), races aborted (\d+),", output)
    assert summary is not None, output
    assert int(summary[1]) > 0
    assert summary[2] == "0", output
    # Each node on its own address, back on it after the restart; the balancer saw each drain.
    for node in (1, 2, 3):
        assert re.search(rf"^  node{node} \(127\.0\.0\.2{node} port \d+\): drain → DOWN: \d+\.\d\d s,", output, re.M), (
            output
        )
    assert re.search(r"^drain → DOWN \(.*\): max \d+\.\d\d s$", output, re.MULTILINE), output
