"""The daily deal: the same for everyone on a day, different every day, certified winnable, committed fairly.

Picks use the real solver: the secret and dates below were chosen so that their first
certified candidates are decided in well under a second (Scorpion's 2024-05-17 pick
skips two candidates the solver proves unwinnable).
"""

from __future__ import annotations

import itertools

import pytest

from protocol.fairness import verify
from server.competition.daily import (
    DAILY_OPTIONS,
    END_DEAL,
    FIRST_DEAL,
    NoWinnableDeal,
    candidates,
    check_date,
    daily_salt,
    next_date,
    pick_daily,
    utc_date,
)
from server.games import Deal, Game, InvalidNotation, Options, variant_class
from server.solver import Budget, Result, Solved, Stats, Unknown, Unwinnable, solve

SECRET = b"test secret: daily deals"
BUDGET_SECONDS = 2.0


def first(count: int, secret: bytes, date: str, game: str) -> list[Deal]:
    return list(itertools.islice(candidates(secret, date, game), count))


# -- candidates --------------------------------------------------------------------------


def test_candidates_are_the_same_for_the_same_secret_date_and_game() -> None:
    assert first(20, SECRET, "2024-05-17", "scorpion") == first(20, SECRET, "2024-05-17", "scorpion")
    # The game's name is read like everywhere else (case, spaces), so it names the same deals.
    assert first(5, SECRET, "2024-05-17", " Scorpion") == first(5, SECRET, "2024-05-17", "scorpion")


@pytest.mark.parametrize(
    ("secret", "date", "game"),
    [
        (SECRET, "2024-05-18", "scorpion"),  # the next day
        (SECRET, "2025-05-17", "scorpion"),  # the same day a year later
        (SECRET, "2024-05-17", "antares"),  # the other game
        (b"another server's secret", "2024-05-17", "scorpion"),
    ],
)
def test_candidates_differ_for_another_day_game_or_secret(secret: bytes, date: str, game: str) -> None:
    ours = set(first(20, SECRET, "2024-05-17", "scorpion"))
    assert ours.isdisjoint(first(20, secret, date, game))


def test_candidates_are_distinct_plain_deals_in_pysolfc_random_range() -> None:
    deals = first(200, SECRET, "2024-05-17", "antares")
    assert len(set(deals)) == 200
    for deal in deals:
        assert FIRST_DEAL <= deal.number < END_DEAL
        assert not deal.ms
        assert Deal.parse(str(deal)) == deal


@pytest.mark.parametrize("date", ["2024-5-17", "20240517", "2024-02-30", "17.05.2024", "", "2024-05-17 "])
def test_dates_must_be_written_one_way(date: str) -> None:
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        next(candidates(SECRET, date, "scorpion"))
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        check_date(date)


def test_unknown_games_are_refused() -> None:
    with pytest.raises(InvalidNotation, match="not a game"):
        next(candidates(SECRET, "2024-05-17", "klondike"))


# -- dates -------------------------------------------------------------------------------


def test_utc_date_of_an_instant() -> None:
    assert utc_date(0) == "1970-01-01"
    # 2024-02-29 23:59:59.999 UTC and one millisecond later: the day ends at midnight UTC.
    assert utc_date(1_709_251_199_999) == "2024-02-29"
    assert utc_date(1_709_251_200_000) == "2024-03-01"


@pytest.mark.parametrize(
    ("date", "after"),
    [
        ("2024-02-28", "2024-02-29"),
        ("2024-02-29", "2024-03-01"),
        ("2023-02-28", "2023-03-01"),
        ("2024-12-31", "2025-01-01"),
    ],
)
def test_next_date_crosses_months_years_and_leap_days(date: str, after: str) -> None:
    assert next_date(date) == after


# -- the pick ----------------------------------------------------------------------------


def assert_solution_wins(game: str, deal: str, solution: tuple[str, ...]) -> None:
    """The revealed solution, as a player would type it, replays through the engine to a win."""
    replayed = variant_class(game).replay(deal, DAILY_OPTIONS, solution)
    assert replayed.is_won()


@pytest.mark.parametrize(("game", "date"), [("antares", "2024-05-17"), ("scorpion", "2024-05-17")])
def test_pick_is_the_first_candidate_certified_winnable(game: str, date: str) -> None:
    daily = pick_daily(SECRET, date, game, BUDGET_SECONDS)
    assert (daily.game, daily.date) == (game, date)
    assert_solution_wins(game, daily.deal, daily.solution)
    assert daily.par == len(daily.solution) > 0
    # Every candidate before it was proven unwinnable (or not decided in the budget).
    earlier = itertools.takewhile(lambda deal: str(deal) != daily.deal, candidates(SECRET, date, game))
    for deal in earlier:
        assert not isinstance(solve(variant_class(game), deal, DAILY_OPTIONS, Budget(seconds=BUDGET_SECONDS)), Solved)


def test_scorpion_pick_skips_unwinnable_candidates() -> None:
    daily = pick_daily(SECRET, "2024-05-17", "scorpion", BUDGET_SECONDS)
    assert daily.deal == str(first(3, SECRET, "2024-05-17", "scorpion")[2])


def test_pick_is_stable_for_the_day_and_differs_the_next() -> None:
    today = pick_daily(SECRET, "2024-05-17", "antares", BUDGET_SECONDS)
    assert pick_daily(SECRET, "2024-05-17", "antares", BUDGET_SECONDS) == today
    tomorrow = pick_daily(SECRET, "2024-05-18", "antares", BUDGET_SECONDS)
    assert tomorrow.deal != today.deal
    assert tomorrow.salt != today.salt
    assert tomorrow.commitment != today.commitment


def test_commitment_reveals_only_the_picked_deal() -> None:
    daily = pick_daily(SECRET, "2024-05-17", "antares", BUDGET_SECONDS)
    assert verify("antares", daily.deal, daily.salt, daily.commitment)
    assert not verify("antares", str(int(daily.deal) + 1), daily.salt, daily.commitment)
    assert not verify("scorpion", daily.deal, daily.salt, daily.commitment)
    # The salt is 128 bits from the secret: stable for the day, unguessable without the secret.
    assert daily.salt == daily_salt(SECRET, "2024-05-17", "antares")
    assert len(bytes.fromhex(daily.salt)) == 16
    assert daily_salt(b"another secret", "2024-05-17", "antares") != daily.salt


class Verdicts:
    """A solver that answers Unwinnable, then Unknown, for the first candidates, then really solves."""

    def __init__(self, unwinnable: int, unknown: int) -> None:
        self.verdicts: list[Result] = [Unwinnable(Stats(0, 0.0))] * unwinnable
        self.verdicts += [Unknown("seconds", Stats(0, 0.0))] * unknown
        self.asked: list[Deal] = []

    def __call__(self, variant: type[Game], deal: Deal, options: Options, budget: Budget) -> Result:
        self.asked.append(deal)
        if len(self.asked) <= len(self.verdicts):
            return self.verdicts[len(self.asked) - 1]
        return solve(variant, deal, options, budget)


def test_pick_skips_unwinnable_and_undecided_candidates() -> None:
    verdicts = Verdicts(unwinnable=2, unknown=2)
    daily = pick_daily(SECRET, "2024-05-17", "antares", BUDGET_SECONDS, solve=verdicts)
    # The four refused candidates are skipped in order; the pick is the first the real solver
    # then proves winnable within the budget (on a busy machine that may be a later one).
    asked = len(verdicts.asked)
    assert asked >= 5
    assert verdicts.asked == first(asked, SECRET, "2024-05-17", "antares")
    assert daily.deal == str(verdicts.asked[-1])
    assert_solution_wins("antares", daily.deal, daily.solution)


def test_pick_gives_up_after_the_candidate_limit() -> None:
    verdicts = Verdicts(unwinnable=0, unknown=3)
    with pytest.raises(NoWinnableDeal, match="first 3 antares candidates of 2024-05-17"):
        pick_daily(SECRET, "2024-05-17", "antares", BUDGET_SECONDS, solve=verdicts, max_candidates=3)
    assert len(verdicts.asked) == 3
