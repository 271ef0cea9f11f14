"""Leaderboards and statistics as text for people: what each board ranks by, an entry's
figure, and a player's statistics as labelled rows. Shared by the UI's tables and the
``leaderboard`` and ``stats`` commands, so both say the same thing."""

from __future__ import annotations

from typing import Final

from client.render.describe import CARDS, count, precise_duration, rating_text
from protocol.messages import Leaderboard, LeaderboardEntry, LeaderboardName, PlayerStats, RoomView, Variant

GAMES: Final[tuple[Variant, ...]] = ("scorpion", "antares")

#: Every board, in the order the UI offers them, with its title.
BOARDS: Final[dict[LeaderboardName, str]] = {
    "daily": "Today's daily",
    "best-time": "Best daily time",
    "wins": "Daily wins",
    "streak": "Longest streak",
    "rating": "Rating",
    "weekly": "Weekly",
    "season": "Season",
}

#: The boards of a period (a week, a season), which the UI browses period by period.
PERIOD_BOARDS: Final[dict[LeaderboardName, str]] = {"weekly": "week", "season": "season"}

#: The heading of the figure column of each board.
FIGURES: Final[dict[LeaderboardName, str]] = {
    "daily": "Time",
    "best-time": "Best time",
    "wins": "Wins",
    "streak": "Days",
    "rating": "Rating",
    "weekly": "Wins",
    "season": "Wins",
}


#: How each board orders its entries, ties included (the server's rule: PROTOCOL.md, Leaderboards).
ORDERS: Final[dict[LeaderboardName, str]] = {
    "daily": "Finishers by time, then fewer moves, then who finished first; "
    "then the others by cards home, cards in order, fewer moves.",
    "best-time": "Best ranked daily time, fastest first; equal times in a fixed order (by player id).",
    "wins": "Ranked daily attempts won, most first; equal counts in a fixed order (by player id).",
    "streak": "Longest run of UTC days in a row with a daily win; equal runs in a fixed order (by player id).",
    "rating": "Glicko-2 rating, highest first. Accounts only: guests are rated, shown once they register.",
    "weekly": "Ranked daily challenges won in the week, most first, then the lower total time of those wins; "
    "equal in both: by player id. Weeks start on Monday 00:00 UTC.",
    "season": "Ranked daily challenges won in the season, most first, then the lower total time of those wins; "
    "equal in both: by player id. Seasons are calendar quarters (UTC).",
}

#: How a race ranks its racers (the server's rule: server/competition/results.py, PROTOCOL.md).
RACE_RANKING: Final = (
    "Ranking: finishers by time, then fewer moves; the others by cards home, then cards in order, "
    "then fewer moves; an exact tie goes to the earlier seat."
)

#: Why a guest is on no board, and the way onto them.
GUEST_NOT_ON_BOARDS: Final = (
    "You play as a guest, and only accounts are on the boards: register (home menu, "
    '"Register an account") to be ranked; you keep your statistics and rating.'
)


def results_notes(view: RoomView) -> list[str]:
    """What the results table needs said: how it ranks (ties included) and, when it has no
    rating column, why (the server's rules on what is rated, PROTOCOL.md, Ratings)."""
    results = view.results or []
    if view.daily is not None:
        if not view.daily.ranked:
            return ["A practice attempt is on no board, and not rated."]
        return [f"The day's board ranks: {ORDERS['daily']}", "No rating: daily attempts rank on the daily boards."]
    notes = [RACE_RANKING]
    people = [result for result in results if not result.bot]
    if any(result.rating is not None for result in results):
        if len(people) < len(results):
            notes.append("Bots are never rated (-).")
    elif any(result.ghost for result in results):
        notes.append("No rating: a race against a ghost (a recorded run) is never rated.")
    elif len(results) < 2:
        notes.append("No rating: a race alone is not rated (a rated race has two racers or more).")
    elif view.options.deal is not None:
        notes.append("No rating: a race on a chosen deal is practice, and practice is not rated.")
    elif len(people) < 2:
        notes.append("No rating: a race against a bot is not rated (bots never are; a rated race needs two people).")
    return notes


def figure(board: LeaderboardName, entry: LeaderboardEntry) -> str:
    """The figure ``board`` ranks ``entry`` by: a time as m:ss.cc, a count, or a rating.

    On a daily board a racer who did not finish is ranked by cards home (the entry's value)."""
    if board == "daily":
        if entry.finished is False:
            return f"{entry.home if entry.home is not None else int(entry.value)}/{CARDS} home"
        return precise_duration(entry.value)
    if board == "best-time":
        return precise_duration(entry.value)
    if board == "wins":
        return str(int(entry.value))
    if board == "streak":
        return count(int(entry.value), "day")
    if board in PERIOD_BOARDS:
        return count(int(entry.value), "win")
    return rating_text(entry.value)


def detail(board: LeaderboardName, entry: LeaderboardEntry) -> str:
    """What else an entry tells: a daily entry's moves, a weekly or season entry's total
    time; empty for other boards."""
    if board == "daily" and entry.moves is not None:
        return count(entry.moves, "move")
    if board in PERIOD_BOARDS and entry.total_time_ms is not None:
        return f"in {precise_duration(entry.total_time_ms)}"
    return ""


def board_title(reply: Leaderboard, around: bool) -> str:
    """``Antares · Today's daily (2025-06-01) · top 10``, ``Antares · Weekly (2025-W22,
    2025-05-26 to 2025-06-01) · top 10`` or ``… · around you``."""
    day = f" ({reply.date})" if reply.date else ""
    if reply.period is not None:
        day = f" ({reply.period.name}, {reply.period.first_day} to {reply.period.last_day})"
    scope = "around you" if around else f"top {len(reply.entries)}" if reply.entries else "top"
    return f"{reply.variant.capitalize()} · {BOARDS[reply.board]}{day} · {scope}"


def leaderboard_lines(reply: Leaderboard, around: bool) -> list[str]:
    """The board as plain lines: a title, then ``rank. name  figure  detail`` per entry,
    ``(you)`` on the player's own line."""
    lines = [board_title(reply, around) + ":"]
    if not reply.entries:
        lines.append("  you are not on this board yet" if around else "  nobody is on this board yet")
    for entry in reply.entries:
        you = "  (you)" if reply.me is not None and entry.player == reply.me.player else ""
        more = detail(reply.board, entry)
        parts = [f"{entry.rank:>3}. {entry.name}", figure(reply.board, entry), *([more] if more else [])]
        lines.append("  ".join(parts) + you)
    return lines


def stats_rows(stats: PlayerStats) -> list[tuple[str, str]]:
    """A player's statistics in one game as (label, value) rows."""
    return [
        ("Races started", str(stats.races_started)),
        ("Races won", str(stats.races_won)),
        ("Races finished", str(stats.races_finished)),
        ("Daily attempts", str(stats.daily_attempts)),
        ("Daily wins", str(stats.daily_wins)),
        ("Best time", precise_duration(stats.best_time_ms)),
        ("Daily streak", count(stats.current_streak, "day")),
        ("Longest streak", count(stats.longest_streak, "day")),
        ("Rating", f"{round(stats.rating)} ± {round(stats.rating_deviation)}"),
    ]


def stats_lines(stats: PlayerStats) -> list[str]:
    """The statistics as plain lines: a title, then ``label: value``."""
    rows = stats_rows(stats)
    width = max(len(label) for label, _ in rows)
    title = f"{stats.name} · {stats.variant.capitalize()}:"
    return [title, *(f"  {label + ':':<{width + 1}} {value}" for label, value in rows)]
