"""Glicko-2 ratings: Glickman's published example, and how races move ratings."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from server.competition.ratings import MAX_RD, SCALE, Rating, rate_race, update

ratings = st.builds(
    Rating,
    rating=st.floats(800, 2400),
    rd=st.floats(30, 350),
    volatility=st.floats(0.03, 0.1),
)
# A race: 2 to 6 racers with their places (ties allowed).
races = st.integers(2, 6).flatmap(
    lambda n: st.tuples(st.lists(ratings, min_size=n, max_size=n), st.lists(st.integers(1, n), min_size=n, max_size=n))
)
SETTINGS = settings(deadline=None, max_examples=60)


def test_glickmans_published_example() -> None:
    """ "Example of the Glicko-2 system": 1500/200/0.06 beats 1400/30, loses to 1550/100 and 1700/300."""
    player = Rating(1500, 200, 0.06)
    after = update(player, [(Rating(1400, 30), 1), (Rating(1550, 100), 0), (Rating(1700, 300), 0)], tau=0.5)
    # The paper's figures, to the precision it prints them (it rounds mu' to -0.2069 before
    # converting, hence 1464.06 where the unrounded result is 1464.0507).
    assert after.rating == pytest.approx(1464.06, abs=0.01)
    assert after.rd == pytest.approx(151.52, abs=0.01)
    assert after.volatility == pytest.approx(0.05999, abs=0.00001)
    # And on the Glicko-2 scale, where the paper gives four decimals.
    assert round((after.rating - 1500) / SCALE, 4) == -0.2069
    assert round(after.rd / SCALE, 4) == 0.8722


def test_a_period_without_games_only_widens_the_rd() -> None:
    player = Rating(1623.5, 80, 0.06)
    after = update(player, [])
    assert after.rating == player.rating
    assert after.volatility == player.volatility
    assert after.rd == pytest.approx(SCALE * ((80 / SCALE) ** 2 + 0.06**2) ** 0.5)


def test_the_rd_of_an_absent_player_stops_at_that_of_a_new_player() -> None:
    player = Rating(1700, 340, 0.09)
    for _ in range(100):
        player = update(player, [])
    assert player.rd == MAX_RD
    assert player.rating == 1700


def test_a_race_is_scored_as_games_against_every_other_racer() -> None:
    field = [Rating(1500, 200), Rating(1400, 30), Rating(1550, 100), Rating(1700, 300)]
    after = rate_race(field, [2, 1, 3, 4])
    # Racer 0 beat 2 and 3 and lost to 1: the same as those three games in one period.
    assert after[0] == update(field[0], [(field[1], 0), (field[2], 1), (field[3], 1)])
    assert after[3] == update(field[3], [(field[0], 0), (field[1], 0), (field[2], 0)])


def test_equal_places_are_draws() -> None:
    a, b = Rating(1600, 120), Rating(1450, 60)
    assert rate_race([a, b], [1, 1]) == [update(a, [(b, 0.5)]), update(b, [(a, 0.5)])]


def test_new_players_racing_each_other_become_better_known() -> None:
    first, second, third = rate_race([Rating()] * 3, [1, 2, 3])
    assert first.rating > second.rating == 1500 > third.rating
    assert first.rating - 1500 == pytest.approx(1500 - third.rating)
    assert all(r.rd < 350 for r in (first, second, third))


def test_bad_input_is_refused() -> None:
    with pytest.raises(ValueError):
        rate_race([Rating()], [1])
    with pytest.raises(ValueError):
        rate_race([Rating(), Rating()], [1])
    with pytest.raises(ValueError):
        update(Rating(), [(Rating(), 2)])
    with pytest.raises(ValueError):
        update(Rating(), [(Rating(), 1)], tau=0)
    with pytest.raises(ValueError):
        Rating(1500, 0)


@SETTINGS
@given(prior=ratings)
def test_the_winner_of_a_duel_between_equals_never_loses_rating(prior: Rating) -> None:
    winner, loser = rate_race([prior, prior], [1, 2])
    assert winner.rating > prior.rating > loser.rating
    # Symmetric: as much gained as lost, and equally well known afterwards.
    assert winner.rating - prior.rating == pytest.approx(prior.rating - loser.rating)
    assert winner.rd == pytest.approx(loser.rd)


@SETTINGS
@given(prior=ratings)
def test_a_draw_between_equals_changes_no_rating(prior: Rating) -> None:
    after = rate_race([prior, prior], [1, 1])
    assert [r.rating for r in after] == [prior.rating, prior.rating]


@SETTINGS
@given(prior=ratings, places=st.lists(st.integers(1, 6), min_size=2, max_size=6))
def test_equals_end_up_in_finishing_order(prior: Rating, places: list[int]) -> None:
    after = rate_race([prior] * len(places), places)
    for i, place in enumerate(places):
        for j, other in enumerate(places):
            if place < other:
                assert after[i].rating > after[j].rating
            elif place == other:
                assert after[i].rating == after[j].rating


@SETTINGS
@given(race=races)
def test_ratings_move_toward_the_finishing_order(race: tuple[list[Rating], list[int]]) -> None:
    field, places = race
    after = rate_race(field, places)
    best, worst = min(places), max(places)
    for before, now, place in zip(field, after, places, strict=True):
        if place == best and places.count(best) == 1:
            assert now.rating > before.rating  # beat everyone: never loses
        if place == worst and places.count(worst) == 1:
            assert now.rating < before.rating  # lost to everyone: never gains
    # Placing better, everything else the same, never gives a lower rating.
    for i, place in enumerate(places):
        if place > 1:
            better = rate_race(field, [*places[:i], place - 1, *places[i + 1 :]])
            assert better[i].rating >= after[i].rating


@SETTINGS
@given(race=races)
def test_racing_leaves_the_rd_below_sitting_the_period_out(race: tuple[list[Rating], list[int]]) -> None:
    """In Glicko-2 a game can widen an already small RD (the period first adds the
    volatility), but it always leaves it narrower than not playing would at the volatility
    the period ends with (an upset can raise the volatility itself)."""
    field, places = race
    for before, now in zip(field, rate_race(field, places), strict=True):
        idle = update(Rating(before.rating, before.rd, now.volatility), [])
        assert now.rd < idle.rd
        assert now.rd <= MAX_RD


@SETTINGS
@given(rd=st.floats(150, 350), places=st.lists(st.integers(1, 4), min_size=2, max_size=4))
def test_a_race_between_uncertain_equals_never_increases_the_rd(rd: float, places: list[int]) -> None:
    prior = Rating(1500, rd)
    for now in rate_race([prior] * len(places), places):
        assert now.rd < prior.rd
