"""Boards rebuilt from patches, without rules: a replay's steps, one board per step, and the
piles of each game for a replay opened with no room at hand (a challenge's run, from the inbox)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from protocol.messages import Patch, PileInfo, Replay, Variant

BoardList = list[list[int | None]]

#: Each game's piles as its rooms' views list them (names and kinds, in board order).
_PILES: dict[Variant, list[tuple[str, str]]] = {
    "scorpion": [*((str(n), "scorpion") for n in range(1, 8)), ("stock", "stock")],
    "antares": [
        *((f"s{n}", "scorpion") for n in range(1, 5)),
        *((f"f{n}", "freecell") for n in range(1, 5)),
        *((f"c{n}", "cell") for n in range(1, 5)),
    ],
}


def game_piles(variant: Variant) -> list[PileInfo]:
    """The piles of ``variant``'s board, as a room's view gives them (for a replay whose room
    the client does not follow; the web client's replay page has the same table)."""
    foundations = [(name, "foundation") for name in ("hc", "hs", "hh", "hd")]
    return [PileInfo(name, kind) for name, kind in [*_PILES[variant], *foundations]]


def apply_patches(board: Sequence[Sequence[int | None]], patches: Iterable[Patch]) -> BoardList:
    """A new board: ``board`` with each patch applied (keep the first ``keep`` cards, lay ``add`` on them)."""
    piles = [list(pile) for pile in board]
    for patch in patches:
        piles[patch.pile][patch.keep :] = patch.add
    return piles


def replay_boards(replay: Replay) -> list[BoardList]:
    """The board before the first step, then after each step: ``len(replay.steps) + 1`` boards."""
    boards = [[list(pile) for pile in replay.board]]
    for step in replay.steps:
        boards.append(apply_patches(boards[-1], step.patches))
    return boards
