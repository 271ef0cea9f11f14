"""The certified winnable deals shipped with the server: the floor of the winnable pool.

Our surveys (seeds/winnability.md) decided every deal of a numbered range of each game; the
deals solved there are listed in ``server/supply/shipped/<game>.txt`` (a deal number or a
range ``first-last`` per line, from the survey's CSV by :func:`listing`). A race that wants
a winnable deal takes one from the pool the solver keeps filling with random deals; when
that pool is empty (a fresh start, a burst of races) or the player has drawn their share of
it, the race gets one of these instead, drawn at random: certified like the others, never a
wait. Their numbers are public (the surveys are), which is why they are the floor and not
the pool: a player who recognised one from its layout could know its solution.

    python -m server.supply.shipped seeds/winnability/scorpion-1-32000.csv > server/supply/shipped/scorpion.txt
"""

from __future__ import annotations

import csv
import functools
import secrets
import sys
from collections.abc import Iterable, Sequence
from importlib import resources

from server.games.variants import VARIANTS


@functools.cache
def shipped(game: str) -> tuple[int, ...]:
    """The shipped certified deal numbers of ``game``, in order (read once)."""
    if game not in VARIANTS:
        raise ValueError(f"no such game: {game!r}")
    text = resources.files("server.supply").joinpath("shipped", f"{game}.txt").read_text()
    deals: list[int] = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            first, _, last = line.partition("-")
            deals.extend(range(int(first), int(last or first) + 1))
    return tuple(deals)


def draw_shipped(game: str) -> str:
    """A shipped certified deal of ``game``, drawn from a secure random source."""
    deals = shipped(game)
    return str(deals[secrets.randbelow(len(deals))])


def solved_deals(rows: Iterable[dict[str, str]]) -> list[int]:
    """The deal numbers a survey CSV's rows say were solved, in order."""
    return sorted(int(row["deal"]) for row in rows if row["verdict"] == "solved")


def listing(deals: Sequence[int], source: str) -> str:
    """``deals`` (sorted) as the shipped file writes them: runs as ``first-last``, under a
    line naming the survey they come from."""
    lines: list[str] = [f"# the deals solved in {source} (python -m server.supply.shipped)"]
    start = previous = None
    for deal in [*deals, None]:
        if deal is not None and previous is not None and deal == previous + 1:
            previous = deal
            continue
        if start is not None:
            lines.append(str(start) if start == previous else f"{start}-{previous}")
        start = previous = deal
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    with open(sys.argv[1], newline="") as survey:
        sys.stdout.write(listing(solved_deals(csv.DictReader(survey)), sys.argv[1]))
