"""Arena tournaments as text for people (PROTOCOL.md, "Arena tournaments", ``arenas``,
``arena``): the list of arenas with when each runs, a standings line as table cells, the
player's own line in words, and the final word once an arena is over.

The client knows no rule of the arenas: points, streaks and ranks are the server's
:class:`~protocol.messages.ArenaLine`; only the guide says what they mean.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Final

from client.render.describe import count, time_left
from protocol.messages import ArenaInfo, ArenaLine, ArenaStandings

#: What an arena is, in two sentences (both clients' arena pages say it).
ARENA_GUIDE: Final = (
    "Race as often as you like while the arena is live: join, and you are paired with 2 to 4 "
    "players near your rating, again as soon as each race ends. A win is 2 points, second of 3 or 4 "
    "is 1; after two wins in a row (🔥) each race counts double until you do not win."
)

#: The mark of a player whose next race counts double.
STREAK_MARK: Final = "🔥 x2"

#: The line the page shows while the player waits to be paired.
WAITING: Final = "Waiting for your next race…"

#: The order of the list: live arenas first, then those to come, then those over.
_STATE_ORDER: Final = {"live": 0, "upcoming": 1, "over": 2}


def listed(arenas: Sequence[ArenaInfo]) -> list[ArenaInfo]:
    """``arenas`` in the order the list shows them: live ones ending soonest first, then the
    upcoming ones starting soonest first, then those over, the latest first."""

    def key(info: ArenaInfo) -> tuple[int, int]:
        moment = {"live": info.ends, "upcoming": info.starts, "over": -info.ends}[info.state]
        return _STATE_ORDER[info.state], moment

    return sorted(arenas, key=key)


def utc_clock(ms: int, now_ms: float) -> str:
    """``21:00 UTC`` on the day of ``now_ms`` (UTC), else ``2026-12-05 21:00 UTC``."""
    moment = datetime.fromtimestamp(ms / 1000, UTC)
    today = datetime.fromtimestamp(now_ms / 1000, UTC).date()
    return moment.strftime("%H:%M UTC" if moment.date() == today else "%Y-%m-%d %H:%M UTC")


def when_text(info: ArenaInfo, now_ms: float) -> str:
    """When ``info`` runs, from now: ``live · 12 min 30 s left``, ``starts 21:00 UTC (in
    45 min 00 s)`` or ``over since 21:30 UTC``."""
    if info.state == "live":
        return f"live · {time_left(info.ends - now_ms)} left"
    if info.state == "upcoming":
        return f"starts {utc_clock(info.starts, now_ms)} (in {time_left(info.starts - now_ms)})"
    return f"over since {utc_clock(info.ends, now_ms)}"


def arena_heading(info: ArenaInfo, now_ms: float) -> str:
    """What an arena's page says under its name: ``Scorpion · live · 12 min 30 s left · 41 players``."""
    return f"{info.variant.capitalize()} · {when_text(info, now_ms)} · {count(info.players, 'player')}"


def ordinal(rank: int) -> str:
    """``1st``, ``2nd``, ``3rd``, ``11th``, ``22nd``."""
    suffix = "th" if 10 <= rank % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(rank % 10, "th")
    return f"{rank}{suffix}"


#: The headings of :func:`line_cells`.
COLUMNS: Final = ("#", "Player", "Points", "Races", "Wins", "Streak", "Now")


def line_cells(line: ArenaLine, me: str | None) -> tuple[str, ...]:
    """A standings line as table cells (see :data:`COLUMNS`): ``(you)`` on the player's own
    (``me``: their player id), the streak mark, and ``racing`` while their race is on."""
    name = line.name + (" (you)" if line.player == me else "")
    now = "racing" if line.room is not None else ""
    streak = STREAK_MARK if line.streak else ""
    return str(line.rank), name, str(line.points), str(line.races), str(line.wins), streak, now


def standing_lines(top: ArenaStandings, around: ArenaStandings | None) -> list[ArenaLine | None]:
    """The lines to show: the top ones, then, if the player is below them, a gap (None) and
    the lines around theirs (``around``: the answer to ``arena`` with ``around``)."""
    lines: list[ArenaLine | None] = list(top.lines)
    last = top.lines[-1].rank if top.lines else 0
    below = [line for line in (around.lines if around is not None else []) if line.rank > last]
    if below:
        lines += [None, *below] if below[0].rank > last + 1 else below
    return lines


def me_text(reply: ArenaStandings) -> str:
    """The player's own line in words: ``You: 3rd · 6 points · 4 races, 2 wins · 🔥 your next
    race counts double``, or that they have not raced in it."""
    me = reply.me
    if me is None:
        return "You have not raced in this arena." if reply.arena.state == "over" else "You have not raced here yet."
    races = f"{count(me.races, 'race')}, {count(me.wins, 'win')}"
    words = [f"You: {ordinal(me.rank)}", count(me.points, "point"), races]
    if me.streak and reply.arena.state != "over":
        words.append("🔥 your next race counts double")
    return " · ".join(words)


def final_text(reply: ArenaStandings) -> str:
    """What an arena that is over says above its final standings ("" while it is not over)."""
    if reply.arena.state != "over":
        return ""
    first = next((line for line in reply.lines if line.rank == 1), None)
    if first is None:
        return "The arena is over: nobody raced in it."
    return f"The arena is over. Final standings: {first.name} won with {count(first.points, 'point')}."
