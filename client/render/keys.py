"""Every key of the terminal UI, screen by screen, as the help screen lists them (and the
README's tables). A test checks that each key bound on a screen is listed here."""

from __future__ import annotations

from typing import Final

from rich.text import Text

#: (section, [(keys, what they do)]), in the order the help screen shows them.
KEYS: Final[tuple[tuple[str, tuple[tuple[str, str], ...]], ...]] = (
    (
        "Everywhere",
        (
            ("? / F1", "this help (in a text box, ? is just typed)"),
            ("Esc / q", "back, or leave the screen"),
            ("Ctrl+Q", "quit the client"),
        ),
    ),
    (
        "Your board during a race",
        (
            ("← →", "previous or next pile in the row"),
            ("↑ ↓", "a card deeper or shallower; past the deepest: the top row"),
            ("1 … 9", "top card of pile n"),
            (
                "Enter / Space",
                "pick up the cursor's card and those on it; then drop them",
            ),
            ("f", "send the picked card (or the one under the cursor) home"),
            ("mouse click", "the same as moving the cursor there and pressing Enter"),
        ),
    ),
    (
        "The race screen",
        (
            (": / /", "type a move (QS>5, deal, c2>h), Enter; Esc: the board"),
            ("u", "undo (a move you undo still counts in your moves)"),
            ("h", "hint: the suggested cards light up; again: the next one"),
            ("d", "deal the stock (Scorpion)"),
            ("R R", "resign (press twice)"),
            ("F2", "the rules of this game"),
            ("r", "ready / not ready (before the race)"),
            ("s", "start now, without waiting for every seat (creator only)"),
            ("b", "once you have finished or resigned: the next racer's board"),
            ("o", "results (after the race)"),
            ("q q", "leave the room (twice during a race: leaving resigns)"),
        ),
    ),
    (
        "Results and replays",
        (
            ("Enter / p", "replay the selected racer's game"),
            ("m", "rematch"),
            ("b", "back to the boards"),
            ("q", "home"),
            ("→ / n  ← / p", "replay: step forward or back"),
            ("Home / End", "replay: jump to the start or the end"),
            ("Space", "replay: play or pause"),
        ),
    ),
    (
        "Watching a room",
        (
            ("← → / Tab", "move between the racers' boards"),
            ("z", "only the focused board, full size"),
            ("j", "join the race while it is waiting"),
            ("o", "results"),
        ),
    ),
    (
        "Menus and lists",
        (
            ("↑ ↓ Enter", "choose"),
            ("Tab / Shift+Tab", "next or previous field of a form"),
            ("Space", "tick or untick a box ([X] ticked, [ ] not)"),
            ("j", "lobby: join the selected room"),
            ("r", "lobby, boards, daily: refresh"),
            ("g", "daily, boards: the other game; lobby: both games, Scorpion only, Antares only"),
            ("n / p", "lobby: the next or previous page"),
            ("b", "boards: the next board"),
            ("a", "boards: the entries around you, or the top"),
            ("s / l", "daily: start an attempt / its leaderboard"),
        ),
    ),
    (
        "Your account (from the home menu)",
        (
            ("Enter", "in a form: the next box; on the last one, send the form"),
            ("t / e", "log out: on this device / everywhere"),
        ),
    ),
    (
        "Help and rules",
        (
            ("s / a", "here: the rules of Scorpion / Antares"),
            ("g", "rules: the other game"),
        ),
    ),
)


def help_text() -> Text:
    """The help screen's text: each section's keys in a column, then what they do."""
    text = Text()
    for section, keys in KEYS:
        text.append(f"{section}\n", "bold")
        for key, what in keys:
            text.append(f"  {key:<16}", "bold cyan")
            text.append(f"{what}\n")
        text.append("\n")
    return text


#: The key legend beside the board during a race (lines of at most 27 characters: the side panel).
RACE_LEGEND: Final = """\
←→↑↓   move the cursor
Enter  pick up / put down
f      send home
:      type a move
u undo · h hint · d deal
R R resign · q q leave
? all keys · F2 rules"""
