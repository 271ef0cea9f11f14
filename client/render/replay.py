"""Boards rebuilt from patches, without rules: a replay's steps, one board per step."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from protocol.messages import Patch, Replay

BoardList = list[list[int | None]]


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
