"""Brackets in words: the list in its order with where each stands, what the player can do
now (with the time left to start a run), a closed round's places with who went on (the player
found by their id, whatever the names) and its revealed deal checked against the round's
commitment, the final standings (the player and the winner found by their ids too), what a
bracket run's results say in place of the fairness check, and the notices that a bracket
started (or was cancelled) and that the player goes on to the next round."""

from __future__ import annotations

import msgspec

from client.render.brackets import (
    BRACKET_WAIT,
    SHOW_UP_MS,
    WENT_ON,
    listed,
    next_round_notice,
    round_lines,
    standings_lines,
    started_notice,
    state_text,
    you_text,
)
from client.render.commitments import FAIR, NOT_FAIR
from client.render.fairness import fairness_text, replay_open
from protocol.fairness import commitment
from protocol.messages import BracketInfo, BracketRound, BracketStarted, BracketView, Result, Reveal, RoundClosed
from tests.client.conftest import finished_run

NOW = 1_764_892_800_000  # 2025-12-05 00:00 UTC
MINUTE = 60_000

INFO = BracketInfo(
    id="W8K2QZ7M",
    variant="antares",
    name="Friday bracket",
    starts=NOW + 5 * MINUTE,
    size=8,
    round_minutes=10,
    state="registering",
    players=5,
)


def result(place: int, seat: int, name: str) -> Result:
    return Result(place=place, seat=seat, name=name, finished=False, time_ms=None, moves=3 * place, home=10 - place)


#: The player's id (the names are for display: two players may share one).
ANN = "a1"
DEAL = "73920011843650271"

FIRST = BracketRound(
    number=1,
    opens=NOW - 20 * MINUTE,
    closes=NOW - 10 * MINUTE,
    players=["Ann", "Bob", "Cat", "Dan"],
    you="played",
    results=[result(1, 2, "Cat"), result(2, 0, "Ann"), result(3, 1, "Bob"), result(4, 3, "Dan")],
    reveal=Reveal(deal=DEAL, salt="51ad"),
    player_ids=[ANN, "b2", "c3", "d4"],
    commitment=commitment("antares", DEAL, "51ad"),
)
SECOND = BracketRound(
    number=2,
    opens=NOW - MINUTE,
    closes=NOW + 9 * MINUTE,
    players=["Cat", "Ann"],
    you="to-play",
    player_ids=["c3", ANN],
    commitment="a41b",
)
PLAYING = msgspec.structs.replace(INFO, state="playing", players=4, registered=True, round=2)


def test_the_list_puts_brackets_being_played_first_then_the_soonest_to_start() -> None:
    later = msgspec.structs.replace(INFO, id="LATER", starts=NOW + 60 * MINUTE)
    over = msgspec.structs.replace(INFO, id="OVER", state="over", winner="Cat")
    playing = msgspec.structs.replace(PLAYING, id="PLAYING")
    assert [b.id for b in listed([over, later, INFO, playing])] == ["PLAYING", INFO.id, "LATER", "OVER"]
    assert state_text(INFO, NOW) == "starts 00:05 UTC (in 5 min 00 s) · 3 places left"
    assert state_text(msgspec.structs.replace(INFO, players=8), NOW).endswith("· full")
    assert state_text(PLAYING, NOW) == "round 2 being played"
    assert state_text(over, NOW) == "over · Cat won"


def test_the_player_is_told_what_to_do_now() -> None:
    registering = BracketView(id=1, bracket=INFO, rounds=[])
    assert you_text(registering, NOW).startswith("Register to play: round 1 opens at 00:05 UTC")
    mine = msgspec.structs.replace(INFO, registered=True)
    assert you_text(BracketView(id=1, bracket=mine, rounds=[]), NOW).startswith("You are registered.")

    to_play = BracketView(id=1, bracket=PLAYING, rounds=[FIRST, SECOND])
    # Two minutes to start from the round's opening, one of them gone.
    assert SHOW_UP_MS == 2 * MINUTE
    assert you_text(to_play, NOW) == "Play your round 2 now: start within 1 min 00 s."
    played = BracketView(id=1, bracket=PLAYING, rounds=[FIRST, msgspec.structs.replace(SECOND, you="played")])
    assert you_text(played, NOW) == "Your run of round 2 is in: waiting for the round to close."
    forfeited = BracketView(id=1, bracket=PLAYING, rounds=[FIRST, msgspec.structs.replace(SECOND, you="forfeited")])
    assert "forfeited" in you_text(forfeited, NOW)
    out = BracketView(id=1, bracket=PLAYING, rounds=[FIRST, msgspec.structs.replace(SECOND, you=None)])
    assert you_text(out, NOW) == "You are out: round 1 was your last."


def test_a_closed_round_marks_who_went_on_and_the_final_standings_the_winner() -> None:
    view = BracketView(id=1, bracket=PLAYING, rounds=[FIRST, SECOND])
    lines = round_lines(view, 0, ANN, NOW)
    assert lines[0] == "Round 1 · closed · 4 players"
    assert lines[1] == f"  1. Cat: 9/52 home, 3 moves · {WENT_ON}"
    assert lines[2] == f"  2. Ann (you): 8/52 home, 6 moves · {WENT_ON}"
    assert WENT_ON not in lines[3] + lines[4]
    assert lines[-1].startswith(f"  {FAIR} deal {DEAL} hashes to the commitment")
    assert round_lines(view, 1, ANN, NOW) == ["Round 2 · open until 00:09 UTC · 2 players", "  Cat, Ann (you)"]

    over = BracketView(
        id=1,
        bracket=msgspec.structs.replace(PLAYING, state="over", round=0, winner="Cat"),
        rounds=[
            FIRST,
            msgspec.structs.replace(SECOND, you="played", results=[result(1, 0, "Cat"), result(2, 1, "Ann")]),
        ],
        standings=["Cat", "Ann", "Bob", "Dan"],
    )
    assert you_text(over, NOW) == "Over: Cat won."
    assert f"1. Cat: 9/52 home, 3 moves · {WENT_ON}" in round_lines(over, 1, ANN, NOW)[1]
    assert standings_lines(over, ANN)[:2] == ["1st Cat 🏆 won the bracket", "2nd Ann (you)"]


def test_you_are_found_by_your_id_not_by_a_name_you_share() -> None:
    # Another player is called Ann too: only the player's own line says "(you)".
    results = [result(1, 2, "Cat"), result(2, 0, "Ann"), result(3, 1, "Bob"), result(4, 3, "Ann")]
    twins = msgspec.structs.replace(FIRST, players=["Ann", "Bob", "Cat", "Ann"], results=results)
    view = BracketView(id=1, bracket=PLAYING, rounds=[twins, SECOND])
    lines = round_lines(view, 0, "d4", NOW)
    assert [line for line in lines if "(you)" in line] == ["  4. Ann (you): 6/52 home, 12 moves"]
    assert round_lines(view, 1, "d4", NOW)[1] == "  Cat, Ann"  # the other Ann went on
    assert "(you)" not in "".join(round_lines(view, 0, None, NOW))


def test_the_final_standings_find_you_and_the_winner_by_id_when_names_are_shared() -> None:
    # Two players called Ann, "a1" (the player) and "d4", met in the final: "d4" won it.
    final = msgspec.structs.replace(
        SECOND,
        players=["Ann", "Ann"],
        player_ids=["d4", ANN],
        you="played",
        results=[result(1, 0, "Ann"), result(2, 1, "Ann")],
    )
    over = BracketView(
        id=1,
        bracket=msgspec.structs.replace(PLAYING, state="over", round=0, winner="Ann", winner_id="d4"),
        rounds=[msgspec.structs.replace(FIRST, players=["Ann", "Bob", "Cat", "Ann"]), final],
        standings=["Ann", "Ann", "Cat", "Bob"],
        standing_ids=["d4", ANN, "c3", "b2"],
    )
    assert standings_lines(over, ANN) == ["1st Ann 🏆 won the bracket", "2nd Ann (you)", "3rd Cat", "4th Bob"]
    assert standings_lines(over, "d4")[:2] == ["1st Ann (you) 🏆 won the bracket", "2nd Ann"]
    final_lines = round_lines(over, 1, ANN, NOW)
    assert final_lines[1] == f"  1. Ann: 9/52 home, 3 moves · {WENT_ON}"
    assert final_lines[2] == "  2. Ann (you): 8/52 home, 6 moves"
    # An older server names them only: the player is found by the name the rounds give them.
    older = msgspec.structs.replace(over, standing_ids=None, standings=["Cat", "Ann", "Bob", "Dan"])
    assert standings_lines(older, ANN)[:2] == ["1st Cat", "2nd Ann (you)"]
    named = msgspec.structs.replace(older, bracket=msgspec.structs.replace(over.bracket, winner="Cat", winner_id=None))
    assert standings_lines(named, ANN)[0] == "1st Cat 🏆 won the bracket"


def test_a_closed_rounds_deal_is_checked_against_the_commitment_seen_before_it_closed() -> None:
    view = BracketView(id=1, bracket=PLAYING, rounds=[FIRST, SECOND])
    seen_first = FIRST.commitment
    assert seen_first is not None
    checked = round_lines(view, 0, ANN, NOW, seen=seen_first)[-1]
    assert (
        checked == f"  {FAIR} deal {DEAL} hashes to the commitment {seen_first[:16]}…, which you saw before the reveal."
    )
    # The server quotes another commitment than the one it published before the round closed.
    changed = round_lines(view, 0, ANN, NOW, seen="be49" * 16)[-1]
    assert changed.startswith(f"  {NOT_FAIR} before the reveal this server committed to be49")
    forged = BracketView(id=1, bracket=PLAYING, rounds=[msgspec.structs.replace(FIRST, reveal=Reveal(DEAL, "ffff"))])
    assert round_lines(forged, 0, ANN, NOW)[-1].startswith(f"  {NOT_FAIR} deal {DEAL} with salt ffff does not hash")
    older = BracketView(id=1, bracket=PLAYING, rounds=[msgspec.structs.replace(FIRST, commitment=None)])
    assert "no commitment to check it against" in round_lines(older, 0, ANN, NOW)[-1]


def test_going_on_to_the_next_round_is_told_with_the_time_left_to_start() -> None:
    closed = RoundClosed(bracket=PLAYING, round=FIRST, next=SECOND)
    assert next_round_notice(closed, NOW) == (
        "Friday bracket: round 1 closed and you go on. Play round 2 now: start within 1 min 00 s (p on its page)."
    )
    assert (
        next_round_notice(msgspec.structs.replace(closed, next=msgspec.structs.replace(SECOND, you=None)), NOW) is None
    )
    assert next_round_notice(msgspec.structs.replace(closed, next=None), NOW) is None


def test_a_bracket_starting_is_told_with_the_way_to_play_round_1_or_its_cancellation() -> None:
    first = msgspec.structs.replace(SECOND, number=1, players=["Ann", "Bob", "Cat", "Dan"])
    started = BracketStarted(bracket=msgspec.structs.replace(PLAYING, round=1), round=first)
    assert started_notice(started, NOW) == (
        "Friday bracket started: play round 1 now: start within 1 min 00 s (Bracket tournaments, then p on its page)."
    )
    # Already started elsewhere (another connection of the player's): nothing to tell.
    elsewhere = msgspec.structs.replace(started, round=msgspec.structs.replace(first, you="playing"))
    assert started_notice(elsewhere, NOW) is None
    cancelled = BracketStarted(bracket=msgspec.structs.replace(INFO, state="cancelled", players=2, registered=True))
    assert started_notice(cancelled, NOW) == "Friday bracket was cancelled: too few players registered."


def test_a_bracket_run_says_its_results_come_when_the_round_closes() -> None:
    view = finished_run(NOW, bracket="W8K2QZ7M")
    assert fairness_text(view) == BRACKET_WAIT
    assert not replay_open(view)
