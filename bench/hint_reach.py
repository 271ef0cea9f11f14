"""How far following hint 1 gets (issue 31): moves made, cards home, won or stuck.

    python -m bench.hint_reach [--game scorpion] [--deals 200] [--seconds 0.25] [--limit 3000]

A player who always plays the first hint, from the deal on, on the first ``--deals``
certified winnable deals of ``--game`` (server/supply/shipped/). Hints are what the server
gives (:func:`server.rooms.hints.hints_for`): where every card is visible, the next move of a
winning line searched for within ``--seconds`` (as a solver worker does, with no allowance
to run out; the line is then shortened within as many seconds more); else the engine's
ranking of the legal moves by what the player sees; else the first legal move. Each
ranking is followed in turn, on the same deals:

- ``before``: the engine's ranking of each move by its own score, without the look-ahead
  and keeping moves that change nothing, and the solver's first-found winning line (no
  shortening);
- ``after``: :func:`server.games.hint` and :func:`server.solver.winning_hint.search_line`
  as they are now.

A game ends won, ``stuck`` (no legal move left), ``loop`` (a position came back: the hints
would go round it for ever) or at ``--limit`` moves. Printed per ranking: how the games
ended, and the median and mean of the moves made, the cards home, the suits home and the
face-down cards still down at the end; then the longest stretch of moves without a card
going home (the median and largest over the deals), the winning-line searches made and the
seconds each took (search and shortening; it is the wall-clock time of a shared machine);
then what each call of the engine's ranking took (it runs on the server's event loop).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from server.games import Antares, Autoplay, Game, Move, Options, PileKind, Scorpion, hint
from server.games.hints import move_score
from server.rooms.hints import HINT_SEARCH_SECONDS
from server.solver import Budget, Solved, solve_position
from server.solver.winning_hint import WinningHints, search_line
from server.supply.shipped import shipped

Ranking = Callable[[Game], list[Move]]
Search = Callable[[Game, float], tuple[tuple[Move, ...] | None, float]]


@dataclass(frozen=True, slots=True)
class Reach:
    """Where following hint 1 ended on one deal."""

    deal: int
    end: str  # won, stuck, loop, limit
    moves: int
    home: int
    suits: int
    face_down: int
    longest_without_home: int
    searches: int
    search_seconds: float
    #: Seconds each call of the ranking took (the engine's hints run on the event loop).
    ranking_seconds: tuple[float, ...]


def follow(game: Game, ranking: Ranking, search: Search, seconds: float, limit: int, deal: int = 0) -> Reach:
    """Play hint 1 from ``game`` (changed) until the game ends, as :func:`hints_for` orders
    the hints: the winning line's move first, then ``ranking``, then the legal moves."""
    winning = WinningHints()
    seen: set[bytes] = set()
    searches = longest = run = 0
    searching = 0.0
    ranking_seconds = []
    end = "limit"
    for _ in range(limit):
        if game.is_won():
            end = "won"
            break
        key = _exact(game)
        if key in seen:
            end = "loop"
            break
        seen.add(key)
        if winning.needs_search(game):
            line, spent = search(game.copy(history=False), seconds)
            searches += 1
            searching += spent
            if line is not None:
                winning.learn(game, line)
        move = winning.remembered(game)
        if move is None:
            asked = time.perf_counter()
            ranked = ranking(game)
            ranking_seconds.append(time.perf_counter() - asked)
            ranked = ranked or game.legal_moves()[:1]
            if not ranked:
                end = "stuck"
                break
            move = ranked[0]
        home = _home(game)
        game.apply(move)
        run = 0 if _home(game) > home else run + 1
        longest = max(longest, run)
    else:
        if game.is_won():
            end = "won"
    home = _home(game)
    face_down = sum(game.hidden[i] for i, spec in enumerate(game.PILES) if spec.kind is not PileKind.STOCK)
    return Reach(
        deal, end, game.move_count, home, home // 13, face_down, longest, searches, searching, tuple(ranking_seconds)
    )


def _exact(game: Game) -> bytes:
    return bytes(game.hidden) + b"\xfe" + b"\xff".join(map(bytes, game.piles))


def _home(game: Game) -> int:
    return sum(len(game.piles[game.FOUNDATION + suit]) for suit in range(4))


def after_ranking(game: Game) -> list[Move]:
    return [h.move for h in hint(game)]


def first_found_line(game: Game, seconds: float) -> tuple[tuple[Move, ...] | None, float]:
    """:func:`search_line` before issue 31: the search's first line, as it came."""
    start = time.perf_counter()
    result = solve_position(game, Budget(seconds=seconds), par_seconds=0.0)
    return (result.moves if isinstance(result, Solved) else None), time.perf_counter() - start


def before_ranking(game: Game) -> list[Move]:
    """The engine's ranking without its look-ahead (each move's own score), and without
    leaving out moves that change nothing."""
    scored = [(move, move_score(game, move)[0]) for move in game.legal_moves()]
    return [move for move, score in sorted(scored, key=lambda pair: -pair[1]) if score > 0]


# -- the table ------------------------------------------------------------------------------------

RANKINGS: dict[str, tuple[Ranking, Search]] = {
    "before": (before_ranking, first_found_line),
    "after": (after_ranking, search_line),
}


def new_game(name: str, deal: int) -> Game:
    if name == "scorpion":
        return Scorpion.new(deal)
    return Antares.new(deal, Options(autoplay=Autoplay.SAFE))


def measure(name: str, deals: Sequence[int], seconds: float, limit: int) -> dict[str, list[Reach]]:
    return {
        label: [follow(new_game(name, deal), ranking, search, seconds, limit, deal) for deal in deals]
        for label, (ranking, search) in RANKINGS.items()
    }


def table(reaches: dict[str, list[Reach]]) -> str:
    ends = ("won", "stuck", "loop", "limit")
    header = f"{'':<8}" + "".join(f"{end:>7}" for end in ends)
    header += f"{'moves':>13}{'cards home':>13}{'suits home':>13}{'face down':>13}{'no home in a row':>18}"
    header += f"{'searches':>10}{'s/search':>10}"
    lines = [header, f"{'':<8}{'':>28}" + f"{'median mean':>13}" * 4 + f"{'median max':>18}{'all':>10}{'mean':>10}"]
    for label, rows in reaches.items():
        counts = "".join(f"{sum(r.end == end for r in rows):>7}" for end in ends)
        figures = "".join(
            f"{_median(values):>7} {statistics.mean(values):>5.1f}"
            for values in (
                [r.moves for r in rows],
                [r.home for r in rows],
                [r.suits for r in rows],
                [r.face_down for r in rows],
            )
        )
        stretch = [r.longest_without_home for r in rows]
        searches = sum(r.searches for r in rows)
        per_search = sum(r.search_seconds for r in rows) / max(1, searches)
        lines.append(
            f"{label:<8}{counts}{figures}{_median(stretch):>11} {max(stretch):>6}{searches:>10}{per_search:>10.3f}"
        )
    for label, rows in reaches.items():
        times = sorted(t for r in rows for t in r.ranking_seconds)
        if times:
            p50, p99 = times[len(times) // 2], times[min(len(times) - 1, int(len(times) * 0.99))]
            lines.append(
                f"{label}: the engine's ranking, {len(times)} calls: median {p50 * 1000:.2f} ms,"
                f" p99 {p99 * 1000:.2f} ms, max {times[-1] * 1000:.2f} ms"
            )
    return "\n".join(lines)


def _median(values: Sequence[int]) -> str:
    return f"{statistics.median(values):g}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", choices=("scorpion", "antares"), default="scorpion")
    parser.add_argument("--deals", type=int, default=200, help="the first N shipped certified deals")
    parser.add_argument("--seconds", type=float, default=HINT_SEARCH_SECONDS, help="each winning-line search")
    parser.add_argument("--limit", type=int, default=3000, help="moves a game may take")
    parser.add_argument("--verbose", action="store_true", help="a line per deal too")
    args = parser.parse_args(argv)
    deals = shipped(args.game)[: args.deals]
    started = time.perf_counter()
    reaches = measure(args.game, deals, args.seconds, args.limit)
    print(
        f"{args.game}: following hint 1 on the first {len(deals)} shipped certified deals"
        f" ({deals[0]}-{deals[-1]}), winning-line searches of {args.seconds:g} s, at most {args.limit} moves"
    )
    if args.verbose:
        for label, rows in reaches.items():
            for r in rows:
                print(f"  {label} {r.deal}: {r.end} after {r.moves} moves, {r.home} home, {r.face_down} face down")
    print(table(reaches))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
