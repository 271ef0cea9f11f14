"""Async head-to-head challenges: two players race the same deal at different times. Pure.

The challenger plays first; the challenged player (a named one, or whoever takes the open
challenge: an async match pairs by rating) has until the window closes to play the same
deal. Neither sees the other's run, board or result, nor the deal, until the challenge is
**over** (both runs ended) or **expired** (the window closed, and no run is still being
played: a run that goes on past the close keeps the deal secret until it ends, for up to
:data:`RUN_GRACE_MS`, and then counts). Then the better run wins (the race rule:
:func:`server.competition.results.rank`) and, in a rated challenge with two runs, both ratings move
as for a two-racer race. A challenge whose window closed with one run is void: no winner,
no rating change.

States, from the stored facts alone (so every process reads the same answer at any time):

============  ==============================================================================
``open``      the window is open and nobody has taken the challenged side yet (an open link
              or an async match)
``playing``   both sides are taken and a run is still to end, the window open; or the window
              closed while a run was still being played (for up to :data:`RUN_GRACE_MS` more)
``over``      both runs ended
``expired``   the window closed before both runs ended, and no run is still being played
============  ==============================================================================
"""

from __future__ import annotations

import enum
from typing import Final, NamedTuple

import msgspec

from protocol.fairness import commitment
from protocol.messages import ChallengeLine, Result, Reveal, Variant
from server.competition.results import Standing, rank

#: Ms a run still being played when the window closes has to end before the challenge
#: expires anyway (a run has no time limit of its own).
RUN_GRACE_MS: Final = 2 * 3_600_000
#: Hours the challenged player has to play, by default and at most.
DEFAULT_WINDOW_HOURS: Final = 24
MAX_WINDOW_HOURS: Final = 72


class RunTag(NamedTuple):
    """What a run's room keeps of its challenge (``RoomRecord.challenge``, see :func:`run_tag`):
    the challenge's id, the side the run plays and whether the challenge is rated (None for
    both in a room an older server opened, which kept the id alone)."""

    challenge: str
    side: int | None
    rated: bool | None


class ChallengeState(enum.Enum):
    OPEN = "open"
    PLAYING = "playing"
    OVER = "over"
    EXPIRED = "expired"


class Run(msgspec.Struct, frozen=True):
    """How one side's run ended (what ranking needs), and where it was played."""

    room: str
    finished_ms: int | None
    moves: int
    home: int
    ordered: int


class Side(msgspec.Struct, frozen=True):
    player: str
    name: str


class Challenge(msgspec.Struct, frozen=True):
    """A challenge as stored: the deal and its salt stay on the server until it is over.
    ``created`` and ``expires`` are Unix ms; ``opponent`` None while nobody took it."""

    id: str
    variant: Variant
    deal: str
    salt: str
    rated: bool
    created: int
    expires: int
    challenger: Side
    #: Who may take the challenged side: a player id, or None for anyone with the id.
    invited: str | None = None
    #: The invited player's name when the challenge was made ("" if unknown).
    invited_name: str = ""
    opponent: Side | None = None
    runs: dict[int, Run] = msgspec.field(default_factory=dict)  # by side: 0 challenger, 1 opponent
    #: A rated challenge over: each side's new rating and its change.
    ratings: dict[int, tuple[float, float]] = msgspec.field(default_factory=dict)
    #: Offered to async matches (``async_match``) once the challenger's run ended.
    matched: bool = False


def state(challenge: Challenge, now: int) -> ChallengeState:
    """Where ``challenge`` stands at ``now`` (see the module's table)."""
    if len(challenge.runs) == 2:
        return ChallengeState.OVER
    if now >= challenge.expires:
        # A run still being played keeps the deal secret: revealed, it would show the player
        # their face-down cards.
        going = 0 not in challenge.runs or (challenge.opponent is not None and 1 not in challenge.runs)
        if going and now < challenge.expires + RUN_GRACE_MS:
            return ChallengeState.PLAYING
        return ChallengeState.EXPIRED
    return ChallengeState.OPEN if challenge.opponent is None else ChallengeState.PLAYING


def is_secret(challenge: Challenge, now: int) -> bool:
    """Whether the challenge's deal and runs are still hidden from everyone."""
    return state(challenge, now) not in (ChallengeState.OVER, ChallengeState.EXPIRED)


def side_of(challenge: Challenge, player: str) -> int | None:
    """0 for the challenger, 1 for the opponent, None for anyone else."""
    if challenge.challenger.player == player:
        return 0
    if challenge.opponent is not None and challenge.opponent.player == player:
        return 1
    return None


def run_tag(challenge: Challenge, side: int) -> str:
    """The tag a room of ``challenge``'s run played on ``side`` keeps as its challenge:
    ``<id>/<side>/rated`` or ``<id>/<side>/unrated`` (ids never hold a ``/``), so its view can
    say both without reading the challenge; :func:`read_run_tag` reads it back."""
    return f"{challenge.id}/{side}/{'rated' if challenge.rated else 'unrated'}"


def read_run_tag(tag: str) -> RunTag:
    """A run's tag (:func:`run_tag`), or a bare challenge id, read."""
    challenge, _, rest = tag.partition("/")
    side, _, rated = rest.partition("/")
    return RunTag(
        challenge,
        int(side) if side in ("0", "1") else None,
        {"rated": True, "unrated": False}.get(rated),
    )


def commitment_of(challenge: Challenge) -> str:
    """The commitment of the challenge's deal: what both runs' rooms publish."""
    return commitment(challenge.variant, challenge.deal, challenge.salt)


def may_take(challenge: Challenge, player: str, now: int) -> str | None:
    """Why ``player`` may not take the challenged side (a sentence), or None if they may."""
    if state(challenge, now) is not ChallengeState.OPEN:
        return "this challenge was taken or is over"
    if challenge.challenger.player == player:
        return "you cannot take your own challenge"
    if challenge.invited is not None and challenge.invited != player:
        return "this challenge is for another player"
    return None


def results(challenge: Challenge) -> list[Result]:
    """The places of an over challenge's two runs, seat = side (empty before both ended)."""
    if len(challenge.runs) < 2 or challenge.opponent is None:
        return []
    names = {0: challenge.challenger.name, 1: challenge.opponent.name}
    standings = [
        Standing(side, names[side], run.finished_ms, run.moves, run.home, run.ordered)
        for side, run in sorted(challenge.runs.items())
    ]
    placed = rank(standings)
    return [
        msgspec.structs.replace(r, rating=challenge.ratings[r.seat][0], rating_change=challenge.ratings[r.seat][1])
        if r.seat in challenge.ratings
        else r
        for r in placed
    ]


def line_of(challenge: Challenge, player: str, now: int) -> ChallengeLine:
    """``challenge`` as ``player`` sees it in their inbox: the rival's run, the results, the
    rooms and the deal only once it is over (an expired one reveals its deal, not the run);
    the deal's commitment from the start."""
    now_state = state(challenge, now)
    side = side_of(challenge, player)
    over = now_state is ChallengeState.OVER
    return ChallengeLine(
        id=challenge.id,
        variant=challenge.variant,
        rated=challenge.rated,
        state=now_state.value,
        created=challenge.created,
        expires=challenge.expires,
        challenger=challenge.challenger.name,
        opponent=challenge.opponent.name if challenge.opponent is not None else challenge.invited_name or None,
        side=side,
        played=side is not None and side in challenge.runs,
        results=results(challenge) if over else None,
        rooms=[challenge.runs[0].room, challenge.runs[1].room] if over else None,
        reveal=None if is_secret(challenge, now) else Reveal(deal=challenge.deal, salt=challenge.salt),
        # A hash of the deal and a 128-bit salt: it tells nothing of the deal until the reveal.
        commitment=commitment_of(challenge),
    )
