"""Leaderboard figures and the daily challenge's fairness check, as the player reads them."""

from __future__ import annotations

from client.render.describe import rating_text
from client.render.fairness import yesterday_text
from client.render.standings import board_title, detail, figure, leaderboard_lines
from protocol.fairness import commitment
from protocol.messages import BoardPeriod, DailyReveal, Leaderboard, LeaderboardEntry


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


def test_a_weekly_or_season_board_shows_the_wins_their_total_time_and_the_period() -> None:
    ann = LeaderboardEntry(rank=1, player="p1", name="Ann", value=3, total_time_ms=184_560)
    bob = LeaderboardEntry(rank=2, player="p2", name="Bob", value=1, total_time_ms=59_990)
    assert (figure("weekly", ann), detail("weekly", ann)) == ("3 wins", "in 3:04.56")
    assert (figure("season", bob), detail("season", bob)) == ("1 win", "in 0:59.99")
    week = BoardPeriod(name="2026-W49", first_day="2026-11-30", last_day="2026-12-06", previous="2026-W48", next=None)
    reply = Leaderboard(id=1, variant="antares", board="weekly", entries=[ann, bob], me=bob, period=week)
    assert board_title(reply, around=False) == "Antares · Weekly (2026-W49, 2026-11-30 to 2026-12-06) · top 2"
    assert leaderboard_lines(reply, around=False)[1:] == [
        "  1. Ann  3 wins  in 3:04.56",
        "  2. Bob  1 win  in 0:59.99  (you)",
    ]


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
