"""Smoke test of bench.hostile: the baseline and every attack run for a moment through the shipped
balancer and each prints its row. No timing assertions (the bench itself is the measurement)."""

from __future__ import annotations

import shutil

import pytest

from bench.lib.hostile_attacks import ATTACKS
from tests.bench.test_benches import bench

HEADER = "phase              tried    ok failed"


@pytest.mark.slow
@pytest.mark.skipif(
    shutil.which("haproxy") is None or shutil.which("openssl") is None, reason="needs haproxy and openssl on PATH"
)
def test_hostile_prints_the_baseline_and_every_attack() -> None:
    output = bench("bench.hostile", "--seconds", "1", "--baseline", "0.5", "--settle", "0", "--connections", "40")
    lines = output.splitlines()
    table = lines[lines.index(next(line for line in lines if line.startswith(HEADER))) + 1 :]
    rows = {line.split()[0]: line.split()[1:] for line in table if not line.startswith(("-", " "))}
    assert list(rows) == ["baseline", *ATTACKS, "together"]
    for phase, cells in rows.items():
        tried, succeeded, failed = (int(cell) for cell in cells[:3])
        assert tried > 0, phase
        assert tried == succeeded + failed, phase
    for attack in [*ATTACKS, "together"]:
        assert f"-- {attack} (" in output
    assert "  attack: " in output
    assert "loop crashed" not in output
