"""Bracket tournaments as text for people (PROTOCOL.md, "Bracket tournaments", ``brackets``,
``bracket``, ``bracket_started``, ``round_closed``): the list of brackets with where each stands, a
bracket's rounds (who plays each, and once closed its places with who went on and the fairness
check of its revealed deal), what the player can do now, the final standings, and the notices that
a bracket started (or was cancelled) and that the player goes on to the next round. Both clients
say the same words: the terminal client uses these, the web client (client/web/js/brackets.js,
notices.js) repeats them. The player ("you") and the winner are found by their player ids (a
round's ``player_ids``, the standings' ``standing_ids``, the bracket's ``winner_id``), not by
name: two players may share a name.

The client knows one rule of the brackets, to say how long a player has left to start a run:
a run must start within :data:`SHOW_UP_MS` of its round's opening. Who plays, who went on, the
places and the standings are the server's :class:`~protocol.messages.BracketView`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from client.render.arenas import ordinal, utc_clock
from client.render.commitments import verdict
from client.render.describe import CARDS, count, duration, time_left
from client.render.standings import RACE_RANKING
from protocol.messages import BracketInfo, BracketRound, BracketStarted, BracketView, Result, RoundClosed

#: What a bracket is, in two sentences (both clients' bracket pages say it).
BRACKET_GUIDE: Final = (
    "A knockout for 4 to 16 players on a schedule. Each round is one deal, the same for everyone "
    "left: play it once, alone, starting within 2 minutes of the round's opening (or forfeit). "
    "The better half goes on to the next round on a new deal; the last one left wins."
)

#: The results of a bracket round's run: the others' runs, the places and the deal come later.
BRACKET_WAIT: Final = "Your run is in: the round's results come when it closes (see Brackets)."

#: Ms after a round opens within which a player must start their run (PROTOCOL.md).
SHOW_UP_MS: Final = 120_000

#: The mark of a player who went on from a closed round (or won the bracket).
WENT_ON: Final = "✓ went on"
WON: Final = "🏆 won the bracket"

#: The order of the list: brackets being played, then open to registration, then the others.
_STATE_ORDER: Final = {"playing": 0, "registering": 1, "over": 2, "cancelled": 2}


def listed(brackets: Sequence[BracketInfo]) -> list[BracketInfo]:
    """``brackets`` in the order the list shows them: those being played, then those open to
    registration starting soonest first, then those over or cancelled, the latest first."""

    def key(info: BracketInfo) -> tuple[int, int]:
        return _STATE_ORDER[info.state], -info.starts if _STATE_ORDER[info.state] == 2 else info.starts

    return sorted(brackets, key=key)


def places_left(info: BracketInfo) -> int:
    return max(0, info.size - info.players)


def state_text(info: BracketInfo, now_ms: float) -> str:
    """Where ``info`` stands, in a few words (a table cell): ``starts 21:00 UTC (in 5 min
    00 s) · 3 places left``, ``round 2 being played``, ``over · Ann won`` or ``cancelled``."""
    if info.state == "registering":
        if info.starts <= now_ms:
            return "starting…"
        left = places_left(info)
        places = f"{count(left, 'place')} left" if left else "full"
        return f"starts {utc_clock(info.starts, now_ms)} (in {time_left(info.starts - now_ms)}) · {places}"
    if info.state == "playing":
        return f"round {info.round} being played" if info.round else "between rounds"
    if info.state == "over":
        return f"over · {info.winner} won" if info.winner else "over · nobody played the last round"
    return "cancelled: fewer than 4 registered"


def heading(info: BracketInfo) -> str:
    """``Friday bracket · Antares · 9 of 16 players · 10-minute rounds``."""
    return (
        f"{info.name} · {info.variant.capitalize()} · {info.players} of {info.size} players"
        f" · {info.round_minutes}-minute rounds"
    )


def start_deadline(round_: BracketRound) -> int:
    """When the time to start a run of ``round_`` ends (Unix ms)."""
    return min(round_.opens + SHOW_UP_MS, round_.closes)


def open_round(view: BracketView) -> BracketRound | None:
    """The round being played, if one is open (the last one, with no results yet)."""
    if view.bracket.round and view.rounds and view.rounds[-1].results is None:
        return view.rounds[-1]
    return None


def my_seat(round_: BracketRound, me: str | None) -> int | None:
    """The index in ``round_``'s players of the player whose id is ``me`` (None: not in it)."""
    ids = round_.player_ids
    return ids.index(me) if me is not None and ids is not None and me in ids else None


def my_name(view: BracketView, me: str | None) -> str | None:
    """The name the player whose id is ``me`` has in the bracket (None: in none of its rounds)."""
    for round_ in view.rounds:
        seat = my_seat(round_, me)
        if seat is not None:
            return round_.players[seat]
    return None


def went_on(view: BracketView, index: int) -> set[int]:
    """The seats (indices in its players) of those who went on from closed round ``index``
    (0-based): the next round's players, or the winner after the last round (by their ids;
    by name from a server that gives none)."""
    round_ = view.rounds[index]
    if index + 1 < len(view.rounds):
        following = view.rounds[index + 1]
        if round_.player_ids is not None and following.player_ids is not None:
            ids = set(following.player_ids)
            return {seat for seat, player in enumerate(round_.player_ids) if player in ids}
        names = set(following.players)  # a server without ids: by name
        return {seat for seat, name in enumerate(round_.players) if name in names}
    info = view.bracket
    if info.winner_id is not None and round_.player_ids is not None:
        return {seat for seat, player in enumerate(round_.player_ids) if player == info.winner_id}
    winner = info.winner  # a server without ids: by name
    return {r.seat for r in round_.results or [] if winner and r.place == 1 and r.name == winner}


def you_text(view: BracketView, now_ms: float) -> str:
    """What the player can do in the bracket now, or where they stand in it (without the keys
    or buttons, which each client adds)."""
    info = view.bracket
    if info.state == "cancelled":
        return "Cancelled: fewer than 4 players had registered by the start."
    if info.state == "registering":
        starts = f"{utc_clock(info.starts, now_ms)} (in {time_left(info.starts - now_ms)})"
        if info.registered:
            return f"You are registered. Round 1 opens at {starts}: be there to play it."
        if not places_left(info):
            return "The bracket is full."
        return f"Register to play: round 1 opens at {starts}."
    open_now = open_round(view)
    if open_now is not None and open_now.you is not None:
        number = open_now.number
        if open_now.you == "to-play":
            return f"Play your round {number} now: start within {time_left(start_deadline(open_now) - now_ms)}."
        if open_now.you == "playing":
            return f"Your run of round {number} is on: finish it."
        if open_now.you == "played":
            return f"Your run of round {number} is in: waiting for the round to close."
        return f"You did not start round {number} in time: you forfeited it."
    mine = [n for n, r in enumerate(view.rounds) if r.you is not None]
    if info.state == "over":
        return "Over: " + (f"{info.winner} won." if info.winner else "nobody played the last round.")
    if not mine:
        return "You are not in this bracket." if not info.registered else "Waiting for the next round."
    last = view.rounds[mine[-1]]
    if last.results is None:
        return "Waiting for the round to close."
    return f"You are out: round {last.number} was your last."


def result_line(result: Result, on: set[int], mine: int | None) -> str:
    """A place of a closed round: ``1. Ann (you): finished in 4:10.01, 101 moves · ✓ went on``
    (``on``: the seats of those who went on; ``mine``: the player's seat)."""
    how = f"finished in {duration(result.time_ms)}" if result.finished else f"{result.home}/{CARDS} home"
    you = " (you)" if result.seat == mine else ""
    mark = f" · {WENT_ON}" if result.seat in on else ""
    return f"{result.place}. {result.name}{you}: {how}, {count(result.moves, 'move')}{mark}"


def round_title(round_: BracketRound, now_ms: float) -> str:
    """``Round 2 · open until 21:20 UTC · 4 players`` or ``Round 1 · closed · 8 players``."""
    players = count(len(round_.players), "player")
    if round_.results is None:
        return f"Round {round_.number} · open until {utc_clock(round_.closes, now_ms)} · {players}"
    return f"Round {round_.number} · closed · {players}"


def round_lines(view: BracketView, index: int, me: str | None, now_ms: float, seen: str | None = None) -> list[str]:
    """Round ``index`` (0-based) of ``view`` for the player whose id is ``me``: its title, then
    its players while it is open, or its places, those who went on marked, and its revealed
    deal checked against the round's commitment once closed (``seen``: the commitment this
    client saw before the reveal, if it kept it; see :func:`client.render.commitments.verdict`)."""
    round_ = view.rounds[index]
    mine = my_seat(round_, me)
    lines = [round_title(round_, now_ms)]
    if round_.results is None:
        names = [f"{name} (you)" if seat == mine else name for seat, name in enumerate(round_.players)]
        lines.append("  " + ", ".join(names))
        return lines
    on = went_on(view, index)
    lines += [f"  {result_line(result, on, mine)}" for result in round_.results]
    if round_.reveal is not None:
        reveal = round_.reveal
        lines.append("  " + verdict(view.bracket.variant, reveal.deal, reveal.salt, round_.commitment, seen))
    return lines


def standings_lines(view: BracketView, me: str | None) -> list[str]:
    """The final standings once the bracket is over (``1st Ann 🏆``), else none. The player (id
    ``me``) and the winner are found by their ids (``standing_ids``, ``winner_id``): two players
    may share a name. From a server that gives no ids: by name (the player's, as its rounds name
    them)."""
    if view.standings is None:
        return []
    info, ids = view.bracket, view.standing_ids
    if ids is not None and len(ids) != len(view.standings):
        ids = None  # not the same players: the names alone
    mine = my_name(view, me)
    lines = []
    for n, name in enumerate(view.standings):
        you = (me is not None and ids[n] == me) if ids is not None else (mine is not None and name == mine)
        won = ids[n] == info.winner_id if ids is not None and info.winner_id else n == 0 and name == info.winner
        lines.append(f"{ordinal(n + 1)} {name}{' (you)' if you else ''}{f' {WON}' if won else ''}")
    return lines


def next_round_notice(closed: RoundClosed, now_ms: float) -> str | None:
    """What to tell a player pushed ``closed`` (a round closed) when they go on to the next
    round: ``Friday bracket: round 1 closed and you go on. Play round 2 now: start within 1 min
    58 s (p on its page).``; None when they do not go on."""
    following = closed.next
    if following is None or following.you != "to-play":
        return None
    left = time_left(start_deadline(following) - now_ms)
    return (
        f"{closed.bracket.name}: round {closed.round.number} closed and you go on. "
        f"Play round {following.number} now: start within {left} (p on its page)."
    )


def started_notice(started: BracketStarted, now_ms: float) -> str | None:
    """What to tell a registered player pushed ``started`` (a bracket's start time came):
    ``Friday bracket started: play round 1 now: start within 1 min 58 s (Bracket tournaments,
    then p on its page).``, or ``Friday bracket was cancelled: too few players registered.``;
    None when round 1 does not wait for their run (they started it on another connection)."""
    name, first = started.bracket.name, started.round
    if first is None:
        return f"{name} was cancelled: too few players registered." if started.bracket.state == "cancelled" else None
    if first.you != "to-play":
        return None
    left = time_left(start_deadline(first) - now_ms)
    where = "Bracket tournaments, then p on its page"
    return f"{name} started: play round {first.number} now: start within {left} ({where})."


def bracket_notes() -> list[str]:
    """What the results of a bracket round's run say under the table (in place of the rating note)."""
    return [RACE_RANKING, "A bracket round ranks its runs this way; the better half goes on. Brackets are not rated."]
