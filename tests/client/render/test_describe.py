"""Racers and results as text: a bot is marked wherever its name shows."""

from __future__ import annotations

from client.render.describe import racer_lines, results_lines, shown_name
from protocol.messages import Progress, Racer, Result


def test_a_bot_is_marked_in_the_racers_panel_and_the_results() -> None:
    ann = Racer(seat=0, player="p1", name="Ann", progress=Progress(home=0, ordered=0, moves=3))
    bot = Racer(seat=1, player="p2", name="Bot (easy)", progress=Progress(home=13, ordered=0, moves=9), bot=True)
    assert (shown_name(ann), shown_name(bot)) == ("Ann", "Bot (easy)")
    panel = racer_lines([ann, bot], me=0, started=1).plain
    assert "Ann (you)" in panel
    assert "Bot (easy)" in panel
    assert "(bot)" not in panel
    results = [
        Result(place=1, seat=1, name="Bot (easy)", finished=False, time_ms=None, moves=9, home=13, bot=True),
        Result(place=2, seat=0, name="Ann", finished=False, time_ms=None, moves=3, home=0),
    ]
    lines = results_lines(results)
    assert lines[0].startswith("  1. Bot (easy): ")
    assert lines[1].startswith("  2. Ann: ")
