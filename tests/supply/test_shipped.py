"""The certified deals shipped with the server are exactly the deals our surveys solved."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from server.supply.shipped import draw_shipped, listing, shipped, solved_deals

SURVEYS = Path(__file__).resolve().parents[2] / "seeds" / "winnability"


@pytest.mark.parametrize("game", ["scorpion", "antares"])
def test_the_shipped_deals_are_the_solved_deals_of_the_widest_survey(game: str) -> None:
    widest = max(SURVEYS.glob(f"{game}-1-*.csv"), key=lambda path: int(path.stem.rsplit("-", 1)[1]))
    with widest.open(newline="") as survey:
        solved = solved_deals(csv.DictReader(survey))
    assert list(shipped(game)) == solved


def test_a_listing_reads_back_as_the_same_deals() -> None:
    deals = [1, 2, 3, 5, 7, 8, 10]
    text = listing(deals, "a survey")
    assert text.splitlines()[1:] == ["1-3", "5", "7-8", "10"]


def test_drawn_deals_are_shipped_ones_of_the_game() -> None:
    drawn = {draw_shipped("scorpion") for _ in range(200)}
    assert len(drawn) > 50
    assert all(int(deal) in set(shipped("scorpion")) for deal in drawn)
    with pytest.raises(ValueError, match="no such game"):
        shipped("klondike")
