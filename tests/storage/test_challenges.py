"""Challenges in a real Redis (server/storage/challenges.py): taken once however many ask at
once, a run recorded once per side, the inbox newest first, async matches nearest in rating."""

from __future__ import annotations

import asyncio

import pytest

from server.competition.challenges import Challenge, Run, Side, run_tag
from server.storage.challenges import ChallengeStore, Taken
from server.storage.connection import Storage

pytestmark = pytest.mark.asyncio

T0 = 1_800_000_000_000
DAY = 86_400_000


def challenge(code: str, challenger: str = "ann", invited: str | None = None, created: int = T0) -> Challenge:
    return Challenge(
        code, "antares", "617", "salt", True, created, created + DAY, Side(challenger, challenger.title()), invited
    )


async def test_an_open_challenge_is_taken_once_by_one_of_many(store: Storage) -> None:
    challenges = ChallengeStore(store)
    await challenges.create(challenge("OPEN"), T0)
    takers = [Side(name, name.title()) for name in ("bob", "cat", "dan", "eve")]
    outcomes = await asyncio.gather(*(challenges.take("OPEN", s, T0) for s in takers), return_exceptions=True)
    taken = [o for o in outcomes if isinstance(o, Challenge)]
    assert len(taken) == 1
    assert all(isinstance(o, Taken) for o in outcomes if not isinstance(o, Challenge))
    stored = await challenges.get("OPEN")
    assert stored is not None
    assert stored.opponent == taken[0].opponent


async def test_an_invitation_is_for_its_player_and_no_challenge_is_nobodys(store: Storage) -> None:
    challenges = ChallengeStore(store)
    await challenges.create(challenge("FORBOB", invited="bob"), T0)
    with pytest.raises(Taken, match="another player"):
        await challenges.take("FORBOB", Side("cat", "Cat"), T0)
    with pytest.raises(Taken, match="over"):
        await challenges.take("FORBOB", Side("bob", "Bob"), T0 + DAY)  # the window closed
    with pytest.raises(KeyError):
        await challenges.take("NONE", Side("bob", "Bob"), T0)


async def test_a_run_is_recorded_once_per_side(store: Storage) -> None:
    challenges = ChallengeStore(store)
    await challenges.create(challenge("RUNS"), T0)
    first = Run("ROOMA", 90_000, 100, 52, 0)
    after = await challenges.record_run("RUNS", 0, first)
    assert after is not None
    assert after.runs == {0: first}
    again = await challenges.record_run("RUNS", 0, Run("ROOMA", 1, 1, 52, 0))  # a retried recording
    assert again is not None
    assert again.runs == {0: first}
    await challenges.rate("RUNS", {0: (1510.0, 10.0)})
    await challenges.rate("RUNS", {0: (1.0, 1.0)})
    rated = await challenges.get("RUNS")
    assert rated is not None
    assert rated.ratings == {0: (1510.0, 10.0)}


async def test_the_inbox_holds_the_players_challenges_newest_first(store: Storage) -> None:
    challenges = ChallengeStore(store)
    await challenges.create(challenge("OLD", invited="bob", created=T0), T0)
    await challenges.create(challenge("NEW", challenger="cat", created=T0 + 5), T0)
    await challenges.take("NEW", Side("bob", "Bob"), T0 + 6)
    assert [c.id for c in await challenges.inbox("bob")] == ["NEW", "OLD"]
    assert [c.id for c in await challenges.inbox("ann")] == ["OLD"]
    assert await challenges.inbox("dan") == []


async def test_an_async_match_takes_the_nearest_waiting_rating_never_your_own(store: Storage) -> None:
    challenges = ChallengeStore(store)
    for code, challenger, rating in (("FAR", "ann", 1900.0), ("NEAR", "cat", 1560.0), ("MINE", "bob", 1500.0)):
        made = challenge(code, challenger)
        await challenges.create(made, T0)
        await challenges.offer(made, rating)
    bob = Side("bob", "Bob")
    first = await challenges.match("antares", bob, 1500.0, T0)
    assert first is not None
    assert first.id == "NEAR"
    second = await challenges.match("antares", bob, 1500.0, T0)  # none near: anyone but himself
    assert second is not None
    assert second.id == "FAR"
    assert await challenges.match("antares", bob, 1500.0, T0) is None
    assert await challenges.match("scorpion", Side("eve", "Eve"), 1500.0, T0) is None


async def test_a_closed_window_is_handed_out_once_and_a_challenge_over_before_never(store: Storage) -> None:
    challenges = ChallengeStore(store)
    for code, created in (("EARLY", T0), ("LATE", T0 + 1), ("OVER", T0)):
        await challenges.create(challenge(code, created=created), T0)
    await challenges.announced("OVER")  # its result was told when its second run ended
    assert await challenges.closed_windows(T0 + DAY - 1) == []
    callers = await asyncio.gather(*(challenges.closed_windows(T0 + DAY + 1) for _ in range(4)))
    assert sorted(code for handed in callers for code in handed) == ["EARLY", "LATE"]
    assert await challenges.closed_windows(T0 + 2 * DAY) == []


async def test_a_challenge_is_found_by_the_tag_its_runs_rooms_keep(store: Storage) -> None:
    challenges = ChallengeStore(store)
    made = challenge("TAGGED")
    await challenges.create(made, T0)
    assert await challenges.get(run_tag(made, 1)) == made  # what every node's secrecy check asks
