"""The studied-run verdict: its parts, weights and thresholds on made-up plays, what a log
explored besides the line it kept, and the whole check (:func:`assess`) on the known deal's
solver line paced, dressed up and explored around in several ways."""

from __future__ import annotations

import random

import pytest

from server.competition.line_play import Play
from server.competition.move_timing import POPULATION, PaceNorm
from server.competition.studied import FLAG_AT, WEIGHTS, Explored, Judgement, Verdict, assess, explore, judge
from server.games import Antares, Game
from server.solver.keys import key_function
from tests.known_deals import ANTARES_DEAL, new_antares, winning_line

START = 1_000_000


def paced(entries: list[str], gaps_ms: list[int], first_ms: int) -> list[int]:
    """Times for ``entries``: the first ``first_ms`` after :data:`START`, then ``gaps_ms``."""
    times = [START + first_ms]
    for gap in gaps_ms[: len(entries) - 1]:
        times.append(times[-1] + gap)
    return times


def like_a_person(rng: random.Random, n: int, median: float = 1500.0) -> list[int]:
    """Lognormal thinking times with a long think now and then."""
    return [
        int(median * rng.lognormvariate(0, 0.8) * (rng.uniform(3, 8) if rng.random() < 0.07 else 1)) for _ in range(n)
    ]


def steady(rng: random.Random, n: int, low: int = 300, high: int = 1000) -> list[int]:
    return [rng.randint(low, high) for _ in range(n)]


def check(entries: list[str], times: list[int], history: list[list[int]] | None = None) -> Judgement:
    start = new_antares()
    return assess(Antares, str(ANTARES_DEAL), start.options, entries, times, START, [winning_line()], history or [])


def a_play(on_line: int = 30, choices: int = 30, moves: int = 40, undos: int = 0) -> Play:
    """A play of ``moves`` standing moves, ``on_line`` of its ``choices`` on the line."""
    return Play(moves + undos, undos, moves, choices, on_line)


def kept(moves: int = 40, positions: int = 0) -> Explored:
    """``moves`` kept, ``positions`` explored off them by as many moves undone."""
    return Explored(kept=moves, positions=positions, undone=positions)


#: A person's usual pace: gaps of 1 s, the norm's median; no spread to compare.
USUAL = PaceNorm(median_ms=1000, spread=0.0, source="own")


def test_the_weights_make_the_line_necessary_and_not_sufficient() -> None:
    assert sum(WEIGHTS.values()) == pytest.approx(1.0)
    assert WEIGHTS["line"] < FLAG_AT  # the line alone does not flag
    assert sum(WEIGHTS.values()) - WEIGHTS["line"] < FLAG_AT  # nor everything but the line
    # The line with two fifths of the clean part does, and with either timing part short of full does not.
    assert WEIGHTS["line"] + WEIGHTS["clean"] * 0.6 >= FLAG_AT
    assert WEIGHTS["line"] + WEIGHTS["pace"] * 0.99 < FLAG_AT
    assert WEIGHTS["line"] + WEIGHTS["start"] * 0.99 < FLAG_AT


def test_a_clean_replay_of_the_line_is_flagged_however_it_is_paced() -> None:
    entries = ["m"] * 40
    times = paced(entries, like_a_person(random.Random(1), 40), first_ms=9000)
    judged = judge(a_play(), kept(), entries, times, START, POPULATION)
    assert judged.verdict is Verdict.FLAGGED
    assert (judged.parts["line"], judged.parts["clean"], judged.parts["start"]) == (1.0, 1.0, 0.0)
    assert judged.parts["pace"] < 0.1  # a person's pace
    assert judged.score == pytest.approx(0.70 + 0.15 * judged.parts["pace"], abs=0.001)
    assert judged.reasons[0] == f"score {judged.score:.2f} (flagged from 0.6)"
    assert "line: 30 of 30 choices on the solver's par line (1.00)" in judged.reasons


def test_the_line_share_ramps_from_half_to_nine_tenths() -> None:
    entries = ["m"] * 40
    times = paced(entries, [2000] * 40, first_ms=0)
    parts = [
        judge(a_play(on_line=n), kept(), entries, times, START, POPULATION).parts["line"] for n in (15, 21, 27, 30)
    ]
    assert parts == [0.0, 0.5, 1.0, 1.0]
    few = judge(a_play(choices=9, on_line=9), kept(), entries, times, START, POPULATION)
    assert few.parts["line"] == 0.0
    assert "line: 9 choices, too few to tell" in few.reasons


def test_the_exploration_that_clears_a_run_grows_with_its_length() -> None:
    # One position explored per 4 moves kept takes the clean part to 0 (3 in short runs).
    entries = ["m"] * 100
    times = paced(entries, [1000] * 100, first_ms=20_000)  # the player's usual pace, a long read
    play = a_play(choices=90, on_line=90, moves=100)
    cleans = [judge(play, kept(100, n), entries, times, START, USUAL).parts["clean"] for n in (0, 5, 10, 25, 40)]
    assert cleans == [1.0, 0.8, 0.6, 0.0, 0.0]
    # On the line, 10 positions explored in 100 moves are a replay dressed up; 11 are not.
    assert judge(play, kept(100, 10), entries, times, START, USUAL).verdict is Verdict.FLAGGED
    assert judge(play, kept(100, 11), entries, times, START, USUAL).verdict is Verdict.CLEAR
    short = [judge(a_play(), kept(8, n), entries, times, START, USUAL).parts["clean"] for n in range(4)]
    assert short == [1.0, 0.667, 0.333, 0.0]
    words = judge(play, kept(100, 5), entries, times, START, USUAL).reasons
    assert (
        "explored: 5 positions off the 100 moves kept (5 moves undone, 0 in loops);"
        " clean part 0 from 25 (one per 4 moves kept, at least 3)"
    ) in words


def test_a_clean_fast_quick_game_off_the_line_is_not_flagged() -> None:
    entries = ["m"] * 40
    times = paced(entries, steady(random.Random(3), 40), first_ms=200)
    judged = judge(a_play(on_line=3), kept(), entries, times, START, POPULATION)
    assert judged.parts == {"line": 0.0, "clean": 1.0, "pace": 1.0, "start": 1.0}
    assert judged.verdict is Verdict.CLEAR


def test_machine_speed_is_refused_whatever_the_line() -> None:
    entries = ["m"] * 40
    times = paced(entries, [40] * 40, first_ms=40)
    judged = judge(a_play(on_line=0), kept(), entries, times, START, POPULATION)
    assert judged.verdict is Verdict.REFUSED
    assert judged.reasons[0].startswith("machine speed: median 40 ms")
    assert judged.parts["pace"] == 1.0  # the evidence is kept


def test_short_attempts_score_nothing_unless_at_machine_speed() -> None:
    entries = ["m"] * 14
    times = paced(entries, [300] * 14, first_ms=10)
    judged = judge(a_play(moves=14, choices=14, on_line=14), kept(14), entries, times, START, POPULATION)
    assert (judged.verdict, judged.score, judged.reasons) == (Verdict.CLEAR, 0.0, [])
    undos = ["m", "undo"] * 10
    judged = judge(a_play(moves=5, undos=5), kept(0, 5), undos, paced(undos, [30] * 20, 30), START, POPULATION)
    assert judged.verdict is Verdict.REFUSED


def test_the_issues_replay_at_human_speed_is_flagged() -> None:
    # 0.3 to 1.0 s a move, random, started at once: the run found on the board unflagged.
    line = list(winning_line())
    judged = check(line, paced(line, steady(random.Random(4), len(line)), first_ms=600))
    assert judged.verdict is Verdict.FLAGGED
    assert judged.parts == {"line": 1.0, "clean": 1.0, "pace": 1.0, "start": 1.0}


def test_the_line_paced_like_a_person_is_flagged_and_at_machine_speed_refused() -> None:
    line = list(winning_line())
    rng = random.Random(5)
    judged = check(line, paced(line, like_a_person(rng, len(line)), first_ms=12_000))
    assert judged.verdict is Verdict.FLAGGED
    machine = check(line, paced(line, [11] * len(line), first_ms=40))  # 669 ms for the lot
    assert machine.verdict is Verdict.REFUSED


def test_timing_is_relative_so_a_quick_replay_scores_as_a_slow_one() -> None:
    line = list(winning_line())
    gaps = steady(random.Random(6), len(line), 160, 260)
    quick = check(line, paced(line, gaps, first_ms=150))
    slow = check(line, paced(line, [gap * 10 for gap in gaps], first_ms=1500))
    assert quick.verdict is slow.verdict is Verdict.FLAGGED
    assert quick.parts["clean"] == slow.parts["clean"] == 1.0
    assert quick.parts["start"] == slow.parts["start"] == 1.0


def test_pace_is_judged_against_the_players_own_races() -> None:
    line = list(winning_line())
    rng = random.Random(7)
    gaps = like_a_person(rng, len(line), median=700)
    times = paced(line, gaps, first_ms=5000)
    # Quick for people at large; this player's usual pace in their own races.
    assert check(line, times).parts["pace"] > 0.5
    own = [like_a_person(rng, 60, median=700) for _ in range(3)]
    assert check(line, times, own).parts["pace"] == 0.0


def test_a_person_off_the_line_who_explores_is_not_flagged() -> None:
    rng = random.Random(8)
    game = new_antares()
    entries: list[str] = []
    while len(entries) < 120 and (moves := game.legal_moves()):
        if game.move_count and rng.random() < 0.15:
            game.undo()
            entries.append("undo")
            continue
        move = rng.choice(moves)
        entries.append(game.move_text(move))
        game.apply(move)
    judged = check(entries, paced(entries, steady(rng, len(entries)), first_ms=300))
    assert judged.verdict is Verdict.CLEAR
    assert judged.parts["line"] == judged.parts["clean"] == 0.0


def test_a_norm_with_no_spread_judges_speed_only() -> None:
    entries = ["m"] * 40
    times = paced(entries, [1000] * 40, first_ms=9000)
    assert judge(a_play(), kept(), entries, times, START, USUAL).parts["pace"] == 0.0


def test_a_log_that_stopped_replaying_says_so() -> None:
    entries = ["m"] * 40
    times = paced(entries, [2000] * 40, first_ms=9000)
    judged = judge(Play(20, 0, 20, 15, 15, 0, 0, broken=True), kept(20), entries, times, START, POPULATION)
    assert judged.reasons[-1] == "log: an entry did not replay; counted up to it"


def explored_by(entries: list[str]) -> Explored:
    return explore(Antares, str(ANTARES_DEAL), new_antares().options, entries)


def detour(game: Game, line_move: str, length: int, rng: random.Random) -> list[str]:
    """``length`` random moves from ``game`` (the first not ``line_move``), then undone."""
    entries = []
    for step in range(length):
        moves = [m for m in game.legal_moves() if step or game.move_text(m) != line_move]
        if not moves:
            break
        move = rng.choice(moves)
        entries.append(game.move_text(move))
        game.apply(move)
    for _ in entries:
        game.undo()
    return entries + ["undo"] * len(entries)


def dressed_up(rng: random.Random, chance: float, longest: int) -> list[str]:
    """The known line with, before each move, a detour of 1 to ``longest`` random moves at
    ``chance``."""
    game = new_antares()
    entries: list[str] = []
    for text in winning_line():
        if rng.random() < chance:
            entries += detour(game, text, rng.randint(1, longest), rng)
        entries.append(text)
        game.apply(game.parse_move(text))
    return entries


def test_exploration_is_judged_on_the_line_kept() -> None:
    line = list(winning_line())
    assert explored_by(line) == Explored(kept=len(line))
    # A move made, undone and made again explored nothing; one off the line and undone did.
    redone = [*line[:5], "undo", *line[4:]]
    assert explored_by(redone) == Explored(kept=len(line), undone=1)
    off = detour(replayed(line[:5]), line[5], 3, random.Random(9))
    assert explored_by([*line[:5], *off, *line[5:]]) == Explored(kept=len(line), positions=3, undone=3)


def replayed(entries: list[str]) -> Game:
    game = new_antares()
    for entry in entries:
        game.apply(game.parse_move(entry))
    return game


def a_loop(game: Game) -> list[str] | None:
    """Two moves from ``game`` that bring it back where it was (a card there and back), if any."""
    key_of = key_function(Antares)
    for move in game.legal_moves():
        after = game.copy(history=False)
        after.apply(move)
        for back in after.legal_moves():
            again = after.copy(history=False)
            again.apply(back)
            if key_of(again) == key_of(game):
                return [game.move_text(move), after.move_text(back)]
    return None


def test_a_loop_kept_in_the_line_counts_as_explored() -> None:
    line = list(winning_line())
    at, loop = next((at, loop) for at in range(len(line)) if (loop := a_loop(replayed(line[:at]))))
    judged = explored_by([*line[:at], *loop, *line[at:]])
    assert judged == Explored(kept=len(line), positions=1, looped=2)


def test_a_replay_dressed_up_with_a_few_detours_is_flagged_and_an_explorer_is_not() -> None:
    rng = random.Random(10)
    game = new_antares()
    masked: list[str] = []
    for index, text in enumerate(winning_line()):
        if index in (12, 40):
            masked += detour(game, text, 1, rng)
        masked.append(text)
        game.apply(game.parse_move(text))
    judged = check(masked, paced(masked, like_a_person(rng, len(masked)), first_ms=12_000))
    assert judged.verdict is Verdict.FLAGGED
    assert judged.explored.positions == 2
    # A person who found the same line trying detours of a few moves at one place in four.
    explorer = dressed_up(rng, chance=0.25, longest=5)
    judged = check(explorer, paced(explorer, like_a_person(rng, len(explorer)), first_ms=12_000))
    assert judged.parts["line"] == 1.0
    assert judged.parts["clean"] == 0.0
    assert judged.verdict is Verdict.CLEAR
