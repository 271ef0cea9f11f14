"""Bracket tournaments: 4 to 16 players, rounds on one deal each, the lower half out. Pure.

Players register before the start. At the start (with at least :data:`MIN_PLAYERS`; else the
bracket is cancelled) round 1 opens: every player left plays the round's deal once, alone,
within the round's window (``round_minutes``). A player who has not started their run
:data:`SHOW_UP_MS` after the round opened forfeits it. The round closes when every player
left has a run, or when its window ends (a run's clock stops there). Its runs are ranked by
the race rule (:func:`server.competition.results.rank`: finishers by time, then progress),
forfeits last; the better half goes on (half rounded up), the rest are out. The last player
left wins. The final standings: the winner, then by the round a player went out in (later
first), then by their place in it.

Until a round closes its deal and runs are secret, as a challenge's are.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Final

import msgspec

from protocol.messages import Result, Variant
from server.competition.results import Standing, rank

MIN_PLAYERS: Final = 4
MAX_PLAYERS: Final = 16
#: Ms after a round opens within which a player must start their run, or forfeit it.
SHOW_UP_MS: Final = 120_000
#: Ms after a round's window a round closes even if a run's end was not recorded yet.
CLOSE_SLACK_MS: Final = 60_000


class BracketState(enum.Enum):
    REGISTERING = "registering"
    PLAYING = "playing"
    OVER = "over"
    CANCELLED = "cancelled"


class Run(msgspec.Struct, frozen=True):
    """A player's run of a round: ``room`` where it is played (from its start: the player
    showed up); how it ended once ``done``."""

    room: str
    finished_ms: int | None = None
    moves: int = 0
    home: int = 0
    ordered: int = 0
    done: bool = False


class Round(msgspec.Struct, frozen=True):
    deal: str
    salt: str
    opens: int
    closes: int
    players: list[str]
    runs: dict[str, Run] = msgspec.field(default_factory=dict)
    #: Once closed: the round's places, player ids best first.
    places: list[str] | None = None


class Bracket(msgspec.Struct, frozen=True):
    """A bracket as stored; ``starts`` Unix ms; ``names``: registered player id -> name."""

    id: str
    variant: Variant
    name: str
    starts: int
    size: int
    round_minutes: int
    names: dict[str, str] = msgspec.field(default_factory=dict)
    rounds: list[Round] = msgspec.field(default_factory=list)
    cancelled: bool = False
    #: Set when the last round closed: its winner, or "" when nobody played it.
    winner: str | None = None


def bracket_state(bracket: Bracket) -> BracketState:
    if bracket.cancelled:
        return BracketState.CANCELLED
    if bracket.winner is not None:
        return BracketState.OVER
    return BracketState.PLAYING if bracket.rounds else BracketState.REGISTERING


def current(bracket: Bracket) -> Round | None:
    """The open round, if one is open."""
    if bracket.rounds and bracket.rounds[-1].places is None:
        return bracket.rounds[-1]
    return None


def may_register(bracket: Bracket, player: str, now: int) -> str | None:
    """Why ``player`` may not register (a sentence), or None."""
    if bracket_state(bracket) is not BracketState.REGISTERING or now >= bracket.starts:
        return "registration is closed: the bracket has started"
    if player not in bracket.names and len(bracket.names) >= bracket.size:
        return f"the bracket is full ({bracket.size} players)"
    return None


def may_play(bracket: Bracket, player: str, now: int) -> str | None:
    """Why ``player`` may not start their run of the open round now, or None."""
    round_ = current(bracket)
    if round_ is None or player not in round_.players:
        return "you have no round to play in this bracket now"
    if player in round_.runs:
        return "you have played this round"
    if now >= round_.opens + SHOW_UP_MS or now >= round_.closes:
        return "too late: you forfeited this round"
    return None


def open_round(bracket: Bracket, players: Sequence[str], deal: str, salt: str, now: int) -> Bracket:
    """``bracket`` with a new round for ``players`` on ``deal``, open from ``now``."""
    round_ = Round(deal, salt, now, now + bracket.round_minutes * 60_000, list(players))
    return msgspec.structs.replace(bracket, rounds=[*bracket.rounds, round_])


def is_due(round_: Round, now: int) -> bool:
    """Whether ``round_`` may close: every run started is done and nobody else can start one
    (all started, or the time to show up or the window is over); or the window ended
    :data:`CLOSE_SLACK_MS` ago, whatever was recorded."""
    if now >= round_.closes + CLOSE_SLACK_MS:
        return True
    done = all(run.done for run in round_.runs.values())
    nobody_else = len(round_.runs) == len(round_.players) or now >= min(round_.opens + SHOW_UP_MS, round_.closes)
    return done and nobody_else


def round_results(round_: Round, names: dict[str, str]) -> list[Result]:
    """The places of a round's runs (``seat``: the player's index in the round), forfeits last."""
    standings = []
    for seat, player in enumerate(round_.players):
        run = round_.runs.get(player)
        if run is None or not run.room:
            continue
        standings.append(Standing(seat, names.get(player, player), run.finished_ms, run.moves, run.home, run.ordered))
    placed = rank(standings)
    shown = {r.seat for r in placed}
    forfeits = [
        Result(
            place=len(placed) + n + 1, seat=seat, name=names.get(p, p), finished=False, time_ms=None, moves=0, home=0
        )
        for n, (seat, p) in enumerate((s, p) for s, p in enumerate(round_.players) if s not in shown)
    ]
    return placed + forfeits


def close_round(bracket: Bracket) -> tuple[Bracket, list[str]]:
    """Close the open round: its places, and the players who go on to the next (the better
    half, rounded up, of those who played it: a forfeit never goes on). When one goes on, or
    none, the bracket is over (its winner: that one, or "" for none) and nobody goes on."""
    round_ = current(bracket)
    assert round_ is not None
    order = [round_.players[r.seat] for r in round_results(round_, bracket.names)]
    played = {p for p, run in round_.runs.items() if run.room}
    closed = msgspec.structs.replace(round_, places=order)
    bracket = msgspec.structs.replace(bracket, rounds=[*bracket.rounds[:-1], closed])
    survivors = [p for p in order[: (len(order) + 1) // 2] if p in played]
    if len(survivors) <= 1:
        return msgspec.structs.replace(bracket, winner=survivors[0] if survivors else ""), []
    return bracket, survivors


def final_standings(bracket: Bracket) -> list[str]:
    """Player ids, best first: the winner, then the later a player went out, the better;
    then their place in that round."""
    placed: list[str] = [bracket.winner] if bracket.winner else []
    for round_ in reversed(bracket.rounds):
        for player in round_.places or []:
            if player not in placed:
                placed.append(player)
    return placed
