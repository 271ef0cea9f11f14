"""Every key of the terminal UI, screen by screen, as the help screen lists them (and the
README's tables). A test checks that each key bound on a screen is listed here."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from rich.text import Text

from client.render.board import TOP_KINDS
from protocol.messages import PileInfo

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
            ("↑ ↓", "a card deeper or shallower (↑ opens a long column's folded +N); past the deepest: the top row"),
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
            (": / /", "type a move (Scorpion: QS>5, deal; Antares: 8D>s4, 7H>c1, c2>h), Enter; Esc: the board"),
            ("u", "undo (a move you undo still counts in your moves)"),
            ("h", "hint: the suggested cards light up; again: the next one"),
            ("d", "deal the stock (Scorpion)"),
            ("R R", "resign (press twice)"),
            ("F2", "the rules of this game"),
            ("r", "ready / not ready (before the race)"),
            ("s", "start now, without waiting for every seat (creator only)"),
            ("b", "once you have finished or resigned: the next racer's board"),
            ("o", "results (after the race)"),
            ("a", "an arena's race: back to the arena's page (there too from the results)"),
            ("q q", "leave the room (twice during a race: leaving resigns)"),
        ),
    ),
    (
        "Results and replays",
        (
            ("Enter / p", "replay the selected racer's game"),
            ("m", "rematch"),
            ("c", "challenge the selected racer (another person) to a deal they play later"),
            ("b", "back to the boards"),
            ("q", "home"),
            ("→ / n  ← / p", "replay: step forward or back"),
            ("Home / End", "replay: jump to the start or the end"),
            ("Space", "replay: play or pause"),
            ("g", "replay: race this run (its ghost, on its recorded timing)"),
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
            ("n / p", "lobby: the next or previous page; weekly and season boards: the next or previous period"),
            ("b", "boards: the next board"),
            ("a", "boards: the entries around you, or the top"),
            ("s / l", "daily: start an attempt / its leaderboard"),
            ("f", "daily: race the ghost of yesterday's fastest run"),
        ),
    ),
    (
        "Play hub (p on the home menu: every way to race)",
        (
            ("p", "home menu: the Play hub, every way to race in one place"),
            ("Enter", "open the highlighted way to race, or play a challenge waiting for you"),
            ("r", "ask again for the challenges waiting for you"),
        ),
    ),
    (
        "Challenges (from the home menu)",
        (
            ("Enter", "play an invitation; once both runs are in, replay your run"),
            ("v", "replay your rival's run"),
            ("c / t / a", "challenge someone / take a challenge by its id / an async match"),
            ("r", "refresh the inbox"),
        ),
    ),
    (
        "Arena tournaments (from the home menu)",
        (
            ("Enter", "the list: the arena's page; its standings: watch the selected racer's race"),
            ("j / l", "join (you are paired again after each race) / leave"),
            ("w", "watch the selected racer's race (15 s late; yours: back to it)"),
            ("g", "back to your race"),
            ("r", "refresh"),
        ),
    ),
    (
        "Bracket tournaments (from the home menu)",
        (
            ("Enter", "the list: the bracket's page"),
            ("j / l", "register / unregister (before the start)"),
            ("p", "play your run of the open round (start it within 2 minutes of the round's opening)"),
            ("r", "refresh"),
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


def move_examples(piles: Sequence[PileInfo]) -> list[str]:
    """Moves in notation made from the pile names the server sends (no rules: what is legal is
    the server's call): a card onto a tableau pile, ``deal`` if there is a stock, a card to a
    cell and a cell's card home if there are cells. Scorpion: ``QS>5, deal``; Antares:
    ``QS>f1, 7H>c1, c2>h``; without piles, both games' examples."""
    if not piles:
        return ["QS>5", "deal", "8D>s4", "c2>h"]
    tableau = [pile.name for pile in piles if pile.kind not in TOP_KINDS]
    cells = [pile.name for pile in piles if pile.kind == "cell"]
    examples = [f"QS>{tableau[min(4, len(tableau) - 1)]}"] if tableau else []
    if any(pile.kind == "stock" for pile in piles):
        examples.append("deal")
    if cells:
        examples += [f"7H>{cells[0]}", f"{cells[min(1, len(cells) - 1)]}>h"]
    return examples


def notation_prompt(piles: Sequence[PileInfo]) -> str:
    """The placeholder of the race screen's move box."""
    return f"type a move ({', '.join(move_examples(piles))}), Enter · ':' to come here"


def race_legend(stock: bool) -> str:
    """The key legend beside the board during a race (lines of at most 27 characters: the
    side panel); ``d deal`` only in a game with a stock."""
    return "\n".join(
        [
            "←→↑↓   move the cursor",
            "Enter  pick up / put down",
            "f home · : type a move",
            "u undo · h hint" + (" · d deal" if stock else ""),
            "R R resign · q q leave",
            "? all keys · F2 rules",
            "+N     N cards folded (↑)",
        ]
    )
