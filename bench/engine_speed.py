"""Rules-engine throughput on random play: legal_moves, check, push+pop, apply+undo, progress.

Run: ``python -m bench.engine_speed [--seconds 2] [--games 100] [--repeats 3]``. It plays
random legal moves through many deals of both games, recording the positions, then times
each operation over the recorded positions on one core and prints calls per second (and,
for push+pop and apply+undo, pairs per second): the median of ``--repeats`` measurements.

Another checkout's engine, with this bench (the script runs from its path, and ``server``
is imported from the checkout it is started in)::

    cd ../wt-old && .venv/bin/python ../main/bench/engine_speed.py --repeats 3   # ../main: this checkout

On a shared machine, run the two one after the other a few times and compare medians.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable

from server.games import VARIANTS, Game, Move, Options


def sample_positions(variant: type[Game], games: int, seed: int) -> list[tuple[Game, Move]]:
    """Positions reached by random play, each with one of its legal moves."""
    rng = random.Random(seed)
    samples = []
    for deal in range(1, games + 1):
        game = variant.new(deal, Options())
        for _ in range(60):
            moves = game.legal_moves()
            if not moves:
                break
            move = rng.choice(moves)
            samples.append((game.copy(), move))
            game.push(move)
    return samples


def rate(samples: list[tuple[Game, Move]], operation: Callable[[Game, Move], object], seconds: float) -> float:
    """Operations per second over ``samples``, repeated until ``seconds`` have passed."""
    done = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        for game, move in samples:
            operation(game, move)
        done += len(samples)
    return done / (time.perf_counter() - start)


def push_pop(game: Game, move: Move) -> None:
    game.push(move)
    game.pop()


def apply_undo(game: Game, move: Move) -> None:
    game.apply(move)
    game.undo()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per measurement")
    parser.add_argument("--games", type=int, default=100, help="deals sampled per game")
    parser.add_argument("--repeats", type=int, default=1, help="measurements of each operation (median shown)")
    args = parser.parse_args()
    print(f"{'game':<9} {'operation':<13} {'per second':>12}  {'us each':>8}")
    for name, variant in VARIANTS.items():
        samples = sample_positions(variant, args.games, seed=1)
        operations: dict[str, Callable[[Game, Move], object]] = {
            "legal_moves": lambda game, _move: game.legal_moves(),
            "check": lambda game, move: game.check(move),
            "push+pop": push_pop,
            "apply+undo": apply_undo,
            "progress": lambda game, _move: game.progress(),
        }
        for label, operation in operations.items():
            per_second = statistics.median(rate(samples, operation, args.seconds) for _ in range(args.repeats))
            print(f"{name:<9} {label:<13} {per_second:>12,.0f}  {1e6 / per_second:>8.2f}")


if __name__ == "__main__":
    main()
