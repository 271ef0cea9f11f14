"""Leaderboard figures and the daily challenge's fairness check, as the player reads them."""

from __future__ import annotations

from client.render.describe import rating_text
from client.render.fairness import yesterday_text
from client.render.standings import figure
from protocol.fairness import commitment
from protocol.messages import DailyReveal, LeaderboardEntry


def entry(
    value: float, finished: bool | None = None, moves: int | None = None, home: int | None = None
) -> LeaderboardEntry:
    return LeaderboardEntry(rank=1, player="p1", name="Ann", value=value, finished=finished, moves=moves, home=home)


def test_boards_show_times_to_the_hundredth_and_non_finishers_by_cards_home() -> None:
    assert figure("daily", entry(83_456, finished=True, moves=90, home=52)) == "1:23.45"
    assert figure("daily", entry(30, finished=False, moves=200, home=30)) == "30/52 home"
    assert figure("best-time", entry(3_723_009)) == "62:03.00"
    assert figure("wins", entry(3)) == "3"
    assert figure("streak", entry(1)) == "1 day"
    assert figure("rating", entry(1523.4)) == "1523"


def test_a_rating_shows_with_its_change() -> None:
    assert rating_text(1523.4, 22.6) == "1523 (+23)"
    assert rating_text(1477.2, -22.6) == "1477 (-23)"
    assert rating_text(1500.0, 0.2) == "1500 (±0)"


def reveal(deal: str, salt: str, published: str) -> DailyReveal:
    return DailyReveal(date="2025-06-01", deal=deal, salt=salt, commitment=published, solution=["JD>c1", "QD>s2"])


def test_yesterdays_deal_is_checked_against_the_commitment_seen_before_the_reveal() -> None:
    honest = commitment("antares", "123", "ab" * 16)
    text = yesterday_text("antares", reveal("123", "ab" * 16, honest), first_seen=honest)
    assert "deal 123" in text
    assert "The solver's solution: 2 moves: JD>c1 QD>s2" in text
    assert "✓ Fair" in text
    assert "which you saw yesterday" in text

    # Not seen here yesterday: checked against the commitment the server quotes, and said so.
    assert "as the server quotes it" in yesterday_text("antares", reveal("123", "ab" * 16, honest), None)

    # A deal that does not match, or a commitment other than the one published yesterday.
    assert "NOT FAIR" in yesterday_text("antares", reveal("124", "ab" * 16, honest), first_seen=honest)
    other = commitment("antares", "124", "cd" * 16)
    swapped = yesterday_text("antares", reveal("124", "cd" * 16, other), first_seen=honest)
    assert "NOT FAIR" in swapped
    assert "yesterday this server committed to" in swapped
