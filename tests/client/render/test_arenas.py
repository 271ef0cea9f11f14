"""Arenas in words: the list with live arenas first, when each runs, a standings line with the
streak mark and the race to follow, the lines around yours after the top, your own line, and
the final word once an arena is over."""

from __future__ import annotations

import msgspec

from client.render.arenas import (
    STREAK_MARK,
    arena_heading,
    final_text,
    line_cells,
    listed,
    me_text,
    ordinal,
    standing_lines,
    when_text,
)
from protocol.messages import ArenaInfo, ArenaLine, ArenaStandings

NOW = 1_796_504_400_000  # 2026-12-05 21:00 UTC
MINUTE = 60_000

LIVE = ArenaInfo(
    id="LIVE", variant="scorpion", name="Live", starts=NOW - 10 * MINUTE, ends=NOW + 20 * MINUTE, state="live"
)


def arena(id: str, state: str, starts: int, ends: int) -> ArenaInfo:
    return msgspec.structs.replace(LIVE, id=id, state=state, starts=starts, ends=ends)


def line(rank: int, points: int, player: str = "", streak: bool = False, room: str | None = None) -> ArenaLine:
    player = player or f"p{rank}"
    return ArenaLine(
        rank=rank, player=player, name=player.upper(), points=points, races=3, wins=2, streak=streak, room=room
    )


def test_live_arenas_come_first_then_the_next_ones_then_the_latest_over() -> None:
    later = arena("LATER", "upcoming", NOW + 120 * MINUTE, NOW + 150 * MINUTE)
    soon = arena("SOON", "upcoming", NOW + 60 * MINUTE, NOW + 90 * MINUTE)
    old = arena("OLD", "over", NOW - 180 * MINUTE, NOW - 150 * MINUTE)
    recent = arena("RECENT", "over", NOW - 60 * MINUTE, NOW - 30 * MINUTE)
    assert [a.id for a in listed([old, later, recent, LIVE, soon])] == ["LIVE", "SOON", "LATER", "RECENT", "OLD"]
    assert when_text(LIVE, NOW) == "live · 20 min 00 s left"
    assert arena_heading(LIVE, NOW) == "Scorpion · live · 20 min 00 s left · 0 players"
    assert when_text(soon, NOW) == "starts 22:00 UTC (in 1 h 00 min)"
    assert when_text(recent, NOW) == "over since 20:30 UTC"
    tomorrow = arena("TOMORROW", "upcoming", NOW + 24 * 60 * MINUTE, NOW + 25 * 60 * MINUTE)
    assert when_text(tomorrow, NOW).startswith("starts 2026-12-06 21:00 UTC")


def test_a_line_marks_you_a_streak_and_a_race_on() -> None:
    assert line_cells(line(1, 14, "ann", streak=True, room="K7Q2M9XD"), "ann") == (
        "1",
        "ANN (you)",
        "14",
        "3",
        "2",
        STREAK_MARK,
        "racing",
    )
    assert line_cells(line(2, 4, "bob"), "ann")[1:] == ("BOB", "4", "3", "2", "", "")
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101)] == [
        "1st",
        "2nd",
        "3rd",
        "4th",
        "11th",
        "12th",
        "13th",
        "21st",
        "22nd",
        "101st",
    ]


def test_the_lines_around_yours_follow_the_top_after_a_gap() -> None:
    top = ArenaStandings(id=1, arena=LIVE, lines=[line(n, 20 - n) for n in range(1, 11)], me=line(14, 6, "me"))
    around = ArenaStandings(id=2, arena=LIVE, lines=[line(n, 20 - n) for n in range(12, 17)], me=line(14, 6, "me"))
    shown = standing_lines(top, around)
    assert [None if x is None else x.rank for x in shown] == [*range(1, 11), None, *range(12, 17)]
    next_to_top = ArenaStandings(id=2, arena=LIVE, lines=[line(n, 20 - n) for n in range(9, 14)])
    assert [None if x is None else x.rank for x in standing_lines(top, next_to_top)] == list(range(1, 14))
    assert standing_lines(top, None) == top.lines


def test_your_line_in_words_and_the_final_word() -> None:
    mine = ArenaStandings(id=1, arena=LIVE, lines=[line(1, 8)], me=line(3, 6, "me", streak=True))
    assert me_text(mine) == "You: 3rd · 6 points · 3 races, 2 wins · 🔥 your next race counts double"
    assert me_text(ArenaStandings(id=1, arena=LIVE, lines=[])) == "You have not raced here yet."
    assert final_text(mine) == ""
    over = msgspec.structs.replace(LIVE, state="over")
    assert final_text(ArenaStandings(id=1, arena=over, lines=[line(1, 8, "ann")])) == (
        "The arena is over. Final standings: ANN won with 8 points."
    )
    assert final_text(ArenaStandings(id=1, arena=over, lines=[])) == "The arena is over: nobody raced in it."
    # Over, a streak no longer promises anything.
    assert "double" not in me_text(msgspec.structs.replace(mine, arena=over))
