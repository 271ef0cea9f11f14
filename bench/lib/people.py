"""Synthetic ranked daily attempts for the anti-cheat bench (``bench.detector``): logs played
with the rules engine and timed by a seeded pacing model, no server involved.

Four kinds of player, each a function of a seeded :class:`random.Random`:

- **people** (:func:`person_log`): choose among the engine's hints (visible information
  only, like a person reading the table) with a skill-dependent chance of the best ones,
  otherwise any legal move (a mistake, or a look elsewhere); take a move back now and then
  (second thoughts), back out of dead ends and of long stretches without progress by
  undoing a few moves, and try something else there; resign when patience runs out;
- **experts** (:func:`expert_log`): a few moves of their own, then a winning line from
  there that is not the day's (the solver's first line found from that position, which is
  no par line): a clean, quick win off the day's solution, the hardest case for false alarms;
- **explorers** (:func:`explorer_log`): people who end up playing the day's solution
  itself, having tried detours of a few moves around it and taken them back: the honest
  case closest to a studied run;
- **studied** runs: the day's solution replayed (the bench's own kinds), paced uniformly
  (0.3 to 1.0 s between moves, started at once: the case found in issue 28) or like a
  person (their own pacing, a reading pause first: a cheater covering tracks), or with
  detours of random moves made and undone along the way (:func:`masked_log`: faking
  exploration).

Pacing (:class:`Pacing`): a person's median gap is drawn around 1.5 s (lognormal, 0.6 to 6
s), each gap is that median times a lognormal factor (sigma 0.55 to 0.95), now and then a
long think (3 to 10 times longer), undos come quicker, and the first move waits a reading
pause of about five median gaps. Each player also has 0 to 4 earlier races in the same
pacing: their own history (the detector's norm when it holds enough gaps).
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable
from dataclasses import dataclass

from server.competition.move_timing import gaps
from server.games import Game, Move, hint
from server.solver import Budget, Solved, solve_position
from server.solver.keys import key_function

#: Entries a synthetic person plays at most before resigning (the server allows 2,000).
MAX_ENTRIES = 600


@dataclass(frozen=True, slots=True)
class Pacing:
    """A person's tempo: median gap (ms), the sigma of each gap's lognormal factor, the
    chance of a long think, and the reading pause before the first move, in median gaps."""

    median_ms: float
    sigma: float
    pause_chance: float
    read_gaps: float


def person_pacing(rng: random.Random, faster: float = 1.0) -> Pacing:
    """A person's tempo, ``faster`` times quicker than most (experts play quicker)."""
    median = min(6000.0, max(600.0, rng.lognormvariate(math.log(1500), 0.35))) / faster
    return Pacing(median, rng.uniform(0.55, 0.95), rng.uniform(0.03, 0.10), rng.lognormvariate(math.log(5), 0.5))


def person_times(pacing: Pacing, entries: list[str], rng: random.Random, start_ms: int) -> list[int]:
    """When each entry is stored, from the race's start at ``start_ms``."""
    now = start_ms + pacing.median_ms * pacing.read_gaps
    times = []
    for index, entry in enumerate(entries):
        if index:
            factor = rng.lognormvariate(0.0, pacing.sigma)
            if entry == "undo":
                factor *= 0.5
            elif rng.random() < pacing.pause_chance:
                factor *= rng.uniform(3.0, 10.0)
            now += pacing.median_ms * factor
        times.append(int(now))
    return times


def uniform_times(entries: list[str], rng: random.Random, start_ms: int, low: float, high: float) -> list[int]:
    """Entries ``low`` to ``high`` ms apart (uniformly), the first as soon after the start."""
    now = float(start_ms)
    times = []
    for _ in entries:
        now += rng.uniform(low, high)
        times.append(int(now))
    return times


def history(pacing: Pacing, rng: random.Random, undo_share: float = 0.0) -> list[list[int]]:
    """The gaps of 0 to 4 earlier races (40 to 150 entries each) in ``pacing``, with this
    share of the entries undos (taken back quicker than a move is thought of)."""
    races = []
    for _ in range(rng.randint(0, 4)):
        count = rng.randint(40, 150)
        # Draws nothing without undos, so the other kinds' runs do not depend on it.
        entries = (
            [("undo" if rng.random() < undo_share else "x") for _ in range(count)] if undo_share else ["x"] * count
        )
        times = person_times(pacing, entries, rng, 0)
        races.append(gaps(times))
    return races


def _progress(game: Game) -> tuple[int, int]:
    progress = game.progress()
    return progress.home, progress.ordered


def _choose(game: Game, moves: list[Move], skill: float, rng: random.Random) -> Move:
    """A move: among the three best-looking hints with chance ``skill``, else any."""
    hinted = [h.move for h in hint(game) if h.move in moves][:3]
    if hinted and rng.random() < skill:
        return rng.choices(hinted, weights=(6, 2.5, 1.5)[: len(hinted)])[0]
    return rng.choice(moves)


def person_log(start: Game, rng: random.Random) -> list[str]:
    """A person's attempt from ``start`` (see the module docstring): its log entries."""
    game = start.copy(history=False)
    key_of = key_function(type(game))
    skill = rng.uniform(0.55, 0.95)
    second_thoughts = rng.uniform(0.0, 0.06)
    patience = rng.randint(25, 60)
    tried: dict[bytes, set[Move]] = {}
    entries: list[str] = []
    best, since = _progress(game), 0
    backouts = rng.randint(2, 12)
    while len(entries) < MAX_ENTRIES and not game.is_won():
        here = tried.setdefault(key_of(game), set())
        moves = [move for move in game.legal_moves() if move not in here]
        if not moves or since >= patience:
            if backouts == 0 or not game.move_count:
                break
            backouts -= 1
            for _ in range(min(game.move_count, rng.randint(1, 6))):
                game.undo()
                entries.append("undo")
            since = 0
            continue
        move = _choose(game, moves, skill, rng)
        here.add(move)
        text = game.move_text(move)
        game.apply(move)
        entries.append(text)
        if rng.random() < second_thoughts and not game.is_won():
            game.undo()
            entries.append("undo")
            continue
        progress = _progress(game)
        best, since = (progress, 0) if progress > best else (best, since + 1)
    if not game.is_won():
        entries.append("resign resigned")
    return entries


def _keeps_winnable(game: Game, move: Move) -> bool:
    after = game.copy(history=False)
    after.push(move)
    return isinstance(solve_position(after, Budget(seconds=0.3), par_seconds=0.0), Solved)


#: An expert's search from where they stand: bounded by positions, so an expert plays the same
#: line on any machine, however loaded (about 2 s of the pure-Python Antares search; the
#: seconds only stop a pathological search).
EXPERT_SEARCH = Budget(nodes=100_000, seconds=60.0)


def expert_log(start: Game, rng: random.Random) -> list[str]:
    """An expert's clean win: 0 to 8 moves of their own, then stretches of 2 to 8 moves along a
    winning line found from where they stand (the solver's first line, no par shortening),
    each followed by a move of their own liking (a hinted move off that line that keeps the
    game winnable). A person's attempt instead if the search finds nothing in time."""
    game = start.copy(history=False)
    entries: list[str] = []
    for _ in range(rng.randint(0, 8)):
        moves = game.legal_moves()
        if not moves or game.is_won():
            break
        move = _choose(game, moves, 0.9, rng)
        entries.append(game.move_text(move))
        game.apply(move)
    key_of = key_function(type(game))
    seen = {key_of(game)}
    while not game.is_won():
        solved = solve_position(game, EXPERT_SEARCH, par_seconds=0.0)
        if not isinstance(solved, Solved):
            return person_log(start, rng)
        # Near the end (or after too long) the rest of the line, so every expert finishes.
        rest = len(entries) > MAX_ENTRIES // 2
        stretch = solved.moves if rest else solved.moves[: rng.randint(2, 8)]
        for move in stretch:
            entries.append(game.move_text(move))
            game.apply(move)
            seen.add(key_of(game))
        if game.is_won():
            break
        for move in [h.move for h in hint(game) if h.move != solved.moves[len(stretch)]][:3]:
            after = game.copy(history=False)
            after.push(move)
            # Never back to where they were (a deviation the line would only undo).
            if key_of(after) not in seen and _keeps_winnable(game, move):
                entries.append(game.move_text(move))
                game.apply(move)
                seen.add(key_of(game))
                break
    return entries


def _detour(game: Game, line_move: Move, length: int, choose: Callable[[Game, list[Move]], Move]) -> list[str]:
    """Up to ``length`` moves from ``game`` picked by ``choose``, the first not ``line_move``,
    then as many undos: the entries, ``game`` back where it was."""
    entries: list[str] = []
    made = 0
    for step in range(length):
        moves = [move for move in game.legal_moves() if step or move != line_move]
        if not moves or game.is_won():
            break
        move = choose(game, moves)
        entries.append(game.move_text(move))
        game.apply(move)
        made += 1
    for _ in range(made):
        game.undo()
        entries.append("undo")
    return entries


def masked_log(start: Game, line: tuple[str, ...], rng: random.Random, detours: int, longest: int = 1) -> list[str]:
    """``line`` played from ``start`` with ``detours`` detours off it at random places, each of
    1 to ``longest`` random moves, undone at once (faked exploration)."""
    game = start.copy(history=False)
    at = set(rng.sample(range(len(line)), min(detours, len(line))))
    entries: list[str] = []
    for index, text in enumerate(line):
        move = game.parse_move(text)
        if index in at:
            length = 1 if longest == 1 else rng.randint(1, longest)
            entries += _detour(game, move, length, lambda _, moves: rng.choice(moves))
        entries.append(text)
        game.apply(move)
    return entries


def explorer_log(start: Game, line: tuple[str, ...], rng: random.Random) -> list[str]:
    """A person who finds ``line`` by exploring around it: before each of its moves, with a
    chance of 0.1 to 0.3 (the player's), a detour of 1 to 6 moves (chosen as a person does,
    mostly among the hints) that is undone, then the line's move."""
    game = start.copy(history=False)
    skill = rng.uniform(0.55, 0.95)
    curiosity = rng.uniform(0.1, 0.3)
    entries: list[str] = []
    for text in line:
        move = game.parse_move(text)
        if rng.random() < curiosity:
            entries += _detour(game, move, rng.randint(1, 6), lambda at, moves: _choose(at, moves, skill, rng))
        entries.append(text)
        game.apply(move)
    return entries
