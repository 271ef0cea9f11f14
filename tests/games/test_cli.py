"""The engine's command line: ``python -m server.games deal <variant> <deal>``."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GOLDEN_DIR = ROOT / "seeds" / "deals"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "server.games", *args], cwd=ROOT, capture_output=True, text=True, check=False
    )


@pytest.mark.parametrize(("variant", "number"), [("scorpion", "617"), ("antares", "24")])
def test_deal_prints_the_golden_layout(variant: str, number: str) -> None:
    result = run("deal", variant, number)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN_DIR / f"{variant}-{number}.txt").read_text()
    assert result.stderr == ""


def test_deal_accepts_the_ms_form() -> None:
    result = run("deal", "scorpion", "MS617")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN_DIR / "scorpion-617.txt").read_text()


@pytest.mark.parametrize(
    ("number", "words"),
    [("0", "start at 1"), ("abc", "'abc' is not a deal number"), (f"ms{2**33}", "ms deal numbers go up to")],
)
def test_bad_deal_number_exits_2_with_a_message(number: str, words: str) -> None:
    result = run("deal", "scorpion", number)
    assert result.returncode == 2
    assert result.stdout == ""
    assert result.stderr.startswith("error: ")
    assert words in result.stderr
    assert "Traceback" not in result.stderr


def test_a_huge_deal_text_gives_a_layout_or_a_message_never_a_traceback() -> None:
    result = run("deal", "scorpion", "0" * 5000 + "617")
    assert "Traceback" not in result.stderr
    if result.returncode == 0:
        assert result.stdout == (GOLDEN_DIR / "scorpion-617.txt").read_text()
    else:
        assert result.returncode == 2
        assert result.stderr.startswith("error: ")


def test_unknown_variant_exits_2_naming_the_choices() -> None:
    result = run("deal", "klondike", "1")
    assert result.returncode == 2
    assert result.stdout == ""
    assert "scorpion" in result.stderr
    assert "antares" in result.stderr
