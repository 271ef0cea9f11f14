"""The quick-match line (server/matchmaking.py): who races whom, and when."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from server.competition.matchmaking import MatchQueue, Waiting

GATHER = MatchQueue().gather_seconds
WINDOW = MatchQueue().window
WIDEN = MatchQueue().widen_per_second


def players(races: list[list[Waiting]]) -> list[list[str]]:
    return [[waiting.player for waiting in race] for race in races]


def test_two_players_race_once_the_first_has_waited_the_gather_time() -> None:
    queue = MatchQueue()
    assert queue.join("ann", "Ann", 1500.0, now=100.0)
    assert queue.join("bob", "Bob", 1500.0, now=101.0)
    # Two are enough, but they wait a little for company first.
    assert queue.form(100.0 + GATHER - 0.01) == []
    assert len(queue) == 2
    races = queue.form(100.0 + GATHER)
    assert players(races) == [["ann", "bob"]]
    assert [(w.name, w.rating, w.since) for w in races[0]] == [("Ann", 1500.0, 100.0), ("Bob", 1500.0, 101.0)]
    # Matched players are out of the line.
    assert len(queue) == 0
    assert "ann" not in queue
    assert queue.form(200.0) == []


def test_a_player_alone_never_races() -> None:
    queue = MatchQueue()
    queue.join("ann", "Ann", 1500.0, now=0.0)
    assert queue.form(3600.0) == []
    assert "ann" in queue


def test_four_players_race_at_once_without_waiting() -> None:
    queue = MatchQueue()
    for i, name in enumerate(["ann", "bob", "cid", "dee"]):
        queue.join(name, name.title(), 1500.0 + i, now=10.0 + i / 10)
    races = queue.form(10.3)  # the first has waited 0.3 s only
    assert players(races) == [["ann", "bob", "cid", "dee"]]
    assert len(queue) == 0


def test_a_fifth_player_waits_for_the_next_race() -> None:
    queue = MatchQueue()
    for i, name in enumerate(["ann", "bob", "cid", "dee", "eve"]):
        queue.join(name, name, 1500.0, now=float(i))
    races = queue.form(4.0)
    assert players(races) == [["ann", "bob", "cid", "dee"]]
    assert "eve" in queue
    assert len(queue) == 1


def test_eight_waiting_players_make_two_races_of_four() -> None:
    queue = MatchQueue()
    for i in range(8):
        queue.join(f"p{i}", f"P{i}", 1500.0, now=float(i) / 100)
    races = queue.form(0.1)
    assert players(races) == [[f"p{i}" for i in range(4)], [f"p{i}" for i in range(4, 8)]]


def test_three_players_who_waited_the_gather_time_race_together() -> None:
    queue = MatchQueue()
    for i, name in enumerate(["ann", "bob", "cid"]):
        queue.join(name, name, 1500.0, now=float(i) / 10)
    assert queue.form(GATHER - 0.01) == []
    assert players(queue.form(GATHER)) == [["ann", "bob", "cid"]]


def test_the_longest_waiter_races_the_players_nearest_their_rating() -> None:
    queue = MatchQueue()
    queue.join("ann", "Ann", 1500.0, now=0.0)
    for name, rating in [("far", 1690.0), ("near", 1490.0), ("mid", 1580.0), ("close", 1530.0)]:
        queue.join(name, name, rating, now=1.0)
    # Five waiting, four race: Ann (the longest waiter) and the three nearest her rating.
    races = queue.form(1.0)
    assert players(races) == [["ann", "near", "close", "mid"]]
    assert "far" in queue
    assert len(queue) == 1


def test_a_partner_outside_the_rating_window_is_not_paired_until_it_widens() -> None:
    queue = MatchQueue()
    gap = WINDOW + WIDEN * 5  # reachable after 5 s of waiting, not before
    queue.join("ann", "Ann", 1500.0, now=0.0)
    queue.join("far", "Far", 1500.0 + gap, now=0.0)
    assert queue.form(GATHER) == []
    assert queue.form(4.99) == []
    assert players(queue.form(5.0)) == [["ann", "far"]]


def test_a_near_partner_is_paired_first_and_the_far_one_waits() -> None:
    queue = MatchQueue()
    queue.join("ann", "Ann", 1500.0, now=0.0)
    queue.join("far", "Far", 1500.0 + WINDOW + WIDEN * GATHER + 100, now=0.5)
    queue.join("near", "Near", 1450.0, now=1.0)
    assert players(queue.form(GATHER)) == [["ann", "near"]]
    assert "far" in queue


def test_a_player_who_leaves_is_not_paired() -> None:
    queue = MatchQueue()
    queue.join("ann", "Ann", 1500.0, now=0.0)
    queue.join("bob", "Bob", 1500.0, now=0.0)
    assert queue.leave("ann")
    assert not queue.leave("ann")  # no longer in line
    assert not queue.leave("nobody")
    assert "ann" not in queue
    assert queue.form(60.0) == []
    queue.join("cid", "Cid", 1500.0, now=60.0)
    assert players(queue.form(60.0)) == [["bob", "cid"]]


def test_joining_twice_keeps_the_first_place_in_line() -> None:
    queue = MatchQueue()
    assert queue.join("ann", "Ann", 1500.0, now=0.0)
    assert queue.join("bob", "Bob", 1500.0, now=1.0)
    assert not queue.join("ann", "Ann", 1500.0, now=2.0)
    assert len(queue) == 2
    # Ann's wait counts from her first join: the race forms when she has waited the gather time.
    assert players(queue.form(GATHER)) == [["ann", "bob"]]


def test_a_race_of_at_most_two_when_the_queue_is_set_up_for_duels() -> None:
    queue = MatchQueue(max_players=2)
    for name in ["ann", "bob", "cid"]:
        queue.join(name, name, 1500.0, now=0.0)
    # Two make a full race at once; the third waits.
    assert players(queue.form(0.0)) == [["ann", "bob"]]
    assert "cid" in queue


@settings(deadline=None, max_examples=60)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["join", "leave", "form"]),
            st.integers(0, 9),
            st.integers(1000, 2200),
            st.floats(0, 3),
        ),
        max_size=40,
    )
)
def test_every_race_is_2_to_4_distinct_players_taken_out_of_line(steps: list[tuple[str, int, int, float]]) -> None:
    queue = MatchQueue()
    now = 0.0
    waiting: set[str] = set()
    for action, number, rating, pause in steps:
        now += pause
        player = f"p{number}"
        if action == "join":
            assert queue.join(player, player, float(rating), now) == (player not in waiting)
            waiting.add(player)
        elif action == "leave":
            assert queue.leave(player) == (player in waiting)
            waiting.discard(player)
        else:
            for race in queue.form(now):
                names = [w.player for w in race]
                assert 2 <= len(names) <= 4
                assert len(set(names)) == len(names)
                assert set(names) <= waiting
                # The longest waiter leads the race.
                assert race[0].since == min(w.since for w in race)
                waiting -= set(names)
        assert len(queue) == len(waiting)
        assert all(player in queue for player in waiting)
