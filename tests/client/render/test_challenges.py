"""The inbox in words: what waits for you, where each challenge stands from your side, the
results once both runs are in (yours first for the replays) with the revealed deal checked
against the challenge's commitment, a pushed result or invitation in place of its line and told
in a sentence, what a run says of its side and rating, and the piles a run is replayed on
without its room."""

from __future__ import annotations

import msgspec

from client.render.challenges import (
    detail_lines,
    replay_rooms,
    result_notice,
    run_notes,
    run_words,
    status_text,
    waiting_notice,
    waiting_words,
    with_line,
)
from client.render.commitments import FAIR, NOT_FAIR
from client.render.fairness import fairness_text, replay_open
from client.render.replay import game_piles
from client.render.standings import GAMES
from protocol.fairness import commitment
from protocol.messages import ChallengeLine, PileInfo, Result, Reveal
from server.games import variant_class
from tests.client.conftest import finished_run

NOW = 1_764_892_800_000
HOUR = 3_600_000

#: The challenge's deal and the commitment to it, published from the start.
DEAL, SALT = "4821", "9b1c"
COMMITMENT = commitment("antares", DEAL, SALT)

OPEN = ChallengeLine(
    id="QX7M2KDA",
    variant="antares",
    rated=True,
    state="open",
    created=NOW - HOUR,
    expires=NOW + 23 * HOUR,
    challenger="Ann",
    commitment=COMMITMENT,
)


def over(side: int) -> ChallengeLine:
    results = [
        Result(
            place=1,
            seat=0,
            name="Ann",
            finished=True,
            time_ms=212_034,
            moves=97,
            home=52,
            rating=1662.2,
            rating_change=162.2,
        ),
        Result(
            place=2,
            seat=1,
            name="Bob",
            finished=False,
            time_ms=None,
            moves=40,
            home=9,
            rating=1337.8,
            rating_change=-162.2,
        ),
    ]
    return msgspec.structs.replace(
        OPEN,
        state="over",
        opponent="Bob",
        side=side,
        played=True,
        results=results,
        rooms=["K7Q2M9XD", "M3ZP8WQE"],
        reveal=Reveal(deal=DEAL, salt=SALT),
    )


def test_an_invitation_waits_for_you_and_your_own_challenge_does_not() -> None:
    yours = msgspec.structs.replace(OPEN, side=0, played=True)
    assert waiting_words([OPEN]) == "1 challenge waiting for you"
    assert waiting_words([OPEN, OPEN, yours]) == "2 challenges waiting for you"
    assert waiting_words([yours, over(1)]) == ""
    assert status_text(OPEN, NOW) == "for you: play it (23 h 00 min left)"
    assert status_text(yours, NOW) == "waiting for a rival (23 h 00 min left)"
    # Your challenge waiting for a rival says the id to give.
    assert "give them the id QX7M2KDA" in "\n".join(detail_lines(yours, NOW))


def test_the_results_come_once_both_runs_are_in_with_your_rating_change() -> None:
    playing = msgspec.structs.replace(OPEN, state="playing", opponent="Bob", side=0, played=True)
    assert status_text(playing, NOW) == "waiting for Bob's run (23 h 00 min left)"
    assert status_text(over(0), NOW) == "you won · your rating 1662 (+162)"
    assert status_text(over(1), NOW) == "Ann won · your rating 1338 (-162)"
    detail = detail_lines(over(1), NOW)
    assert detail[0] == "Challenge QX7M2KDA · Antares · rated · Ann against Bob"
    assert "1. Ann: finished in 3:32.03" in detail[1]
    assert detail[-1].startswith(f"{FAIR} deal 4821 hashes to the commitment {COMMITMENT[:16]}…")
    expired = msgspec.structs.replace(OPEN, state="expired", side=0, played=True, reveal=Reveal(deal=DEAL, salt=SALT))
    assert status_text(expired, NOW) == "expired: void"


def test_the_revealed_deal_is_checked_against_the_commitment_seen_before() -> None:
    seen = detail_lines(over(0), NOW, seen=COMMITMENT)[-1]
    assert seen == f"{FAIR} deal 4821 hashes to the commitment {COMMITMENT[:16]}…, which you saw before the reveal."
    quoted = detail_lines(over(0), NOW)[-1]
    assert quoted.endswith("as the server quotes it (this client did not see it before the reveal).")
    # Another commitment than the one published before: whatever the deal hashes to.
    changed = detail_lines(over(0), NOW, seen="be49" * 16)[-1]
    assert (
        changed
        == f"{NOT_FAIR} before the reveal this server committed to {'be49' * 4}…, but now quotes {COMMITMENT[:16]}…."
    )
    forged = msgspec.structs.replace(over(0), reveal=Reveal(deal="4822", salt=SALT))
    assert detail_lines(forged, NOW, seen=COMMITMENT)[-1].startswith(f"{NOT_FAIR} deal 4822 with salt 9b1c does not")
    assert NOT_FAIR not in "".join(detail_lines(msgspec.structs.replace(OPEN, side=0), NOW, seen=COMMITMENT))


def test_a_pushed_result_replaces_its_line_and_is_told_in_a_sentence() -> None:
    yours = msgspec.structs.replace(OPEN, side=0, played=True, opponent="Bob", state="playing")
    other = msgspec.structs.replace(OPEN, id="OTHER123")
    assert with_line([other, yours], over(0)) == [other, over(0)]
    assert with_line([other], over(0)) == [over(0), other]
    assert waiting_words(with_line([OPEN], msgspec.structs.replace(OPEN, state="expired"))) == ""
    assert result_notice(over(0), NOW) == "Challenge QX7M2KDA (Antares) against Bob: you won · your rating 1662 (+162)."
    expired = msgspec.structs.replace(OPEN, state="expired", opponent="Cat", reveal=Reveal(deal=DEAL, salt=SALT))
    assert result_notice(expired, NOW) == (
        "Challenge QX7M2KDA (Antares) against Ann expired before both runs were in: void, no rating change."
    )


def test_a_challenge_pushed_as_waiting_for_you_is_told_in_a_sentence() -> None:
    # Pushed once its challenger's run ended: what the inbox now says, an invitation.
    assert waiting_words(with_line([], OPEN)) == "1 challenge waiting for you"
    assert waiting_notice(OPEN, NOW) == (
        "Ann challenges you (Antares, rated): play the same deal within 23 h 00 min (Play or Challenges)."
    )
    casual = msgspec.structs.replace(OPEN, variant="scorpion", rated=False)
    assert waiting_notice(casual, NOW).startswith("Ann challenges you (Scorpion, casual): play the same deal")
    # Taken already (the player's run is on): where it stands, not an invitation.
    taken = msgspec.structs.replace(OPEN, state="playing", side=1, opponent="Bob")
    assert waiting_notice(taken, NOW) == "Ann challenges you (Antares, rated): your run is not over yet."


def test_a_run_says_your_side_and_whether_it_is_rated() -> None:
    run = finished_run(NOW, challenge="QX7M2KDA")
    assert run_words(msgspec.structs.replace(run, challenge_side=0, challenge_rated=True)) == (
        " (rated) · you challenged: give this id to your rival"
    )
    casual = msgspec.structs.replace(run, challenge_side=1, challenge_rated=False)
    assert run_words(casual) == " (casual) · you were challenged"
    assert run_notes(casual)[-1] == "Casual: no rating moves."
    assert run_words(run) == ""  # a server that does not say: nothing is guessed


def test_each_run_is_replayed_yours_first_once_over() -> None:
    assert replay_rooms(OPEN) == []
    assert replay_rooms(over(0)) == [("Ann", "K7Q2M9XD"), ("Bob", "M3ZP8WQE")]
    assert replay_rooms(over(1)) == [("Bob", "M3ZP8WQE"), ("Ann", "K7Q2M9XD")]


def test_a_run_replayed_from_the_inbox_has_its_games_piles() -> None:
    for variant in GAMES:
        assert game_piles(variant) == [PileInfo(spec.name, spec.kind.value) for spec in variant_class(variant).PILES]


def test_a_challenges_run_says_the_result_comes_later_and_opens_no_replay() -> None:
    view = finished_run(NOW, challenge="QX7M2KDA")
    assert "the result comes when your rival has played" in fairness_text(view)
    assert not replay_open(view)
