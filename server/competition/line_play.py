"""The play half of the anti-cheat check: a ranked attempt's log replayed through the
engine against the solver's lines (pure: no I/O).

A player who studied the deal (on a second account, say) and replays a solver's line makes
the solver's move at every choice, never takes a move back and never walks into a dead
end. :func:`replay` counts exactly that:

- a *choice* is a standing move (one not undone later) played from a position with two
  legal moves or more (a forced move tells nothing);
- a choice is *on the line* when a solver's line passes through the position before it
  and the position after it, one step apart: the same position up to piles the rules
  cannot tell apart (:func:`server.solver.keys.key_function`), so a line is followed
  whichever empty cell a card went to, and a player who left the line and came back to
  it is on it again;
- *exploration* is every move later undone, every move back to a position seen before,
  and every dead end reached (a position with no legal move, not won).

Only standing moves count towards the share, so moves made and undone to look human do
not dilute it. The replay costs about 30 microseconds an entry (measured on a 200-entry
log), so some 60 ms for the longest log the server keeps (2,000): run it off the event loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from server.games import Deal, Game, GameError, Options
from server.solver.keys import key_function


@dataclass(frozen=True, slots=True)
class Play:
    """What a replayed log shows. ``moves`` counts every move entry (undone ones too);
    ``standing`` those left at the end; ``choices`` and ``on_line`` are standing moves (see
    the module docstring); ``broken`` is True when the log stopped replaying (an entry the
    engine refused: the counts cover the part before it)."""

    moves: int = 0
    undos: int = 0
    standing: int = 0
    choices: int = 0
    on_line: int = 0
    revisits: int = 0
    dead_ends: int = 0
    won: bool = False
    broken: bool = False

    @property
    def exploration(self) -> int:
        """Moves undone, moves back to a position seen before, and dead ends."""
        return self.undos + self.revisits + self.dead_ends

    @property
    def line_share(self) -> float:
        """The share of the choices that were on a solver's line (0 without choices)."""
        return self.on_line / self.choices if self.choices else 0.0


def line_steps(start: Game, lines: Sequence[Sequence[str]]) -> dict[bytes, set[bytes]]:
    """For each position on one of ``lines`` (move texts, played from ``start``), the
    positions one step further along them, as position keys. A line that stops replaying
    counts up to there."""
    key_of = key_function(type(start))
    steps: dict[bytes, set[bytes]] = {}
    for line in lines:
        game = start.copy(history=False)
        before = key_of(game)
        for text in line:
            try:
                game.apply(game.parse_move(text))
            except GameError:
                break
            after = key_of(game)
            steps.setdefault(before, set()).add(after)
            before = after
    return steps


def standing_moves(entries: Sequence[str]) -> set[int]:
    """The indexes of the move entries of ``entries`` that no later undo took back."""
    stack: list[int] = []
    for index, entry in enumerate(entries):
        if entry == "undo":
            if stack:
                stack.pop()
        elif not entry.startswith("resign "):
            stack.append(index)
    return set(stack)


def replay(
    variant: type[Game], deal: Deal | str, options: Options, entries: Sequence[str], lines: Sequence[Sequence[str]]
) -> Play:
    """Replay the log ``entries`` (move texts, ``undo``, ``resign ...``) of ``deal`` against
    the solver's ``lines`` (move texts from the deal's start, like a daily's solution)."""
    game = variant.new(deal, options)
    key_of = key_function(variant)
    steps = line_steps(game, lines)
    standing = standing_moves(entries)
    moves = undos = kept = choices = on_line = revisits = dead_ends = 0
    before = key_of(game)
    seen = {before}
    legal = len(game.legal_moves())
    for index, entry in enumerate(entries):
        if entry.startswith("resign "):
            continue
        try:
            if entry == "undo":
                game.undo()
            else:
                game.apply(game.parse_move(entry))
        except GameError:
            return Play(moves, undos, kept, choices, on_line, revisits, dead_ends, won=False, broken=True)
        after = key_of(game)
        legal_after = len(game.legal_moves())
        if entry == "undo":
            undos += 1
        else:
            moves += 1
            if index in standing:
                kept += 1
                if legal >= 2:
                    choices += 1
                    on_line += after in steps.get(before, ())
            if after in seen:
                revisits += 1
            elif not legal_after and not game.is_won():
                dead_ends += 1
            seen.add(after)
        before, legal = after, legal_after
    return Play(moves, undos, kept, choices, on_line, revisits, dead_ends, won=game.is_won())
