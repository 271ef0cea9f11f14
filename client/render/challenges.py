"""Async challenges and the inbox as text for people (PROTOCOL.md, ``challenge``, ``inbox``,
``challenge_result``, ``challenge_waiting``): where each challenge stands for you, its results
once both runs are in with the fairness check of its revealed deal, what a challenge's run says
of itself (your side, whether it is rated) and in place of the fairness check and the replays
that stay closed until then, and the notices of what the server pushes (a result; a challenge
that waits for your run).

The client knows no rule of the challenges: everything here reads the server's
:class:`~protocol.messages.ChallengeLine` (``state``, ``side``, ``played``, ``results``) and a
run's :class:`~protocol.messages.RoomView` (``challenge_side``, ``challenge_rated``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from client.render.commitments import verdict
from client.render.describe import rating_text, results_lines, time_left
from client.render.standings import RACE_RANKING
from protocol.messages import ChallengeLine, RoomView

#: The results of a challenge's run: the rival's run, the winner and the deal come later.
CHALLENGE_WAIT: Final = "Your run is in: the result comes when your rival has played (see Challenges)."

#: What a challenge is, in two sentences (both clients' Challenges screens say it).
CHALLENGE_GUIDE: Final = (
    "Race someone who is not online: you play a deal now, your rival plays the same deal later "
    "(within 24 h). Neither sees the other's run until both are in; then the better run wins."
)


def may_play(line: ChallengeLine) -> bool:
    """Whether ``line`` is an invitation you can take now (``accept_challenge``)."""
    return line.side is None and line.state == "open"


def invitations(lines: Sequence[ChallengeLine]) -> list[ChallengeLine]:
    """The challenges waiting for you: invitations you have not taken."""
    return [line for line in lines if may_play(line)]


def waiting_words(lines: Sequence[ChallengeLine]) -> str:
    """``2 challenges waiting for you`` ("" when none is)."""
    waiting = len(invitations(lines))
    if not waiting:
        return ""
    return f"{waiting} challenge{'' if waiting == 1 else 's'} waiting for you"


def rival_of(line: ChallengeLine) -> str | None:
    """The other player's name, from your side (None: nobody has taken your challenge yet)."""
    return line.opponent if line.side == 0 else line.challenger


def _my_rating(line: ChallengeLine) -> str:
    mine = next((r for r in line.results or [] if r.seat == line.side), None)
    if mine is None or mine.rating is None:
        return ""
    return f" · your rating {rating_text(mine.rating, mine.rating_change)}"


def status_text(line: ChallengeLine, now_ms: float) -> str:
    """Where ``line`` stands for you, in a few words (a table cell)."""
    rival = rival_of(line) or "a rival"
    left = time_left(line.expires - now_ms)
    if line.state == "open":
        if line.side is None:
            return f"for you: play it ({left} left)"
        return "your run is not over yet" if not line.played else f"waiting for a rival ({left} left)"
    if line.state == "playing":
        return f"waiting for {rival}'s run ({left} left)" if line.played else "your run is not over yet"
    if line.state == "expired":
        return "expired: void"
    winner = next((r for r in line.results or [] if r.place == 1), None)
    if winner is None:
        return "over"
    return ("you won" if winner.seat == line.side else f"{rival} won") + _my_rating(line)


def detail_lines(line: ChallengeLine, now_ms: float, seen: str | None = None) -> list[str]:
    """Everything the inbox says of ``line``: who challenged whom, where it stands (its second
    line: with the id to share while it waits for a rival), the results once over, and the
    revealed deal checked against its commitment (``seen``: the one this client saw before the
    reveal, if it kept it; see :func:`client.render.commitments.verdict`)."""
    kind = "rated" if line.rated else "casual"
    against = line.opponent or "anyone given the id"
    lines = [f"Challenge {line.id} · {line.variant.capitalize()} · {kind} · {line.challenger} against {against}"]
    left = time_left(line.expires - now_ms)
    if line.state == "open" and line.side is None:
        lines.append(f"{line.challenger} challenges you: play the same deal within {left}.")
    elif line.state == "open":
        lines.append(f"Waiting for a rival for {left}: give them the id {line.id}.")
    elif line.state == "playing":
        if line.played:
            lines.append(f"Your run is in; {rival_of(line)} has {left} to play the same deal.")
        else:
            lines.append("Your run is not over yet: finish it (home menu, back to your race).")
    elif line.state == "expired":
        lines.append("The window closed before both runs were in: void, no winner, no rating change.")
    else:
        lines.extend(results_lines(line.results or []))
    if line.reveal is not None:
        lines.append(verdict(line.variant, line.reveal.deal, line.reveal.salt, line.commitment, seen))
    return lines


def with_line(lines: Sequence[ChallengeLine], line: ChallengeLine) -> list[ChallengeLine]:
    """``lines`` (an inbox) with ``line`` (pushed in a ``challenge_result`` or a
    ``challenge_waiting``: what the inbox now says of its challenge) in place of its challenge's
    line, or first when it had none."""
    if any(old.id == line.id for old in lines):
        return [line if old.id == line.id else old for old in lines]
    return [line, *lines]


def result_notice(line: ChallengeLine, now_ms: float) -> str:
    """A pushed result in one sentence: ``Challenge QX7M2KDA (Antares) against Bob: you won ·
    your rating 1662 (+162).`` (or that it expired, void)."""
    head = f"Challenge {line.id} ({line.variant.capitalize()}) against {rival_of(line) or 'anyone'}"
    if line.state == "expired":
        return f"{head} expired before both runs were in: void, no rating change."
    return f"{head}: {status_text(line, now_ms)}."


def waiting_notice(line: ChallengeLine, now_ms: float) -> str:
    """A challenge that waits for your run (pushed once its challenger's run ended) in one
    sentence: ``Ann challenges you (Antares, rated): play the same deal within 23 h 00 min (Play
    or Challenges).``; where it stands instead, should you have taken it already."""
    head = f"{line.challenger} challenges you ({line.variant.capitalize()}, {'rated' if line.rated else 'casual'})"
    if may_play(line):
        return f"{head}: play the same deal within {time_left(line.expires - now_ms)} (Play or Challenges)."
    return f"{head}: {status_text(line, now_ms)}."


def run_words(view: RoomView) -> str:
    """What a challenge's run is, from its view: `` (rated) · you challenged: give this id to
    your rival`` or `` (casual) · you were challenged``; "" from a server that does not say."""
    kind = "" if view.challenge_rated is None else (" (rated)" if view.challenge_rated else " (casual)")
    if view.challenge_side == 0:
        return f"{kind} · you challenged: give this id to your rival"
    if view.challenge_side == 1:
        return f"{kind} · you were challenged"
    return kind


def replay_rooms(line: ChallengeLine) -> list[tuple[str, str]]:
    """Each run's (player's name, room) once the challenge is over, yours first; [] before."""
    if line.state != "over" or line.rooms is None or line.opponent is None or len(line.rooms) != 2:
        return []
    runs = [(line.challenger, line.rooms[0]), (line.opponent, line.rooms[1])]
    return runs[::-1] if line.side == 1 else runs


def run_notes(view: RoomView) -> list[str]:
    """What the results of a challenge's run say under the table (in place of the rating note):
    whether the ratings move, when the view says if the challenge is rated."""
    if view.challenge_rated is None:
        rating = "A rated challenge's rating change comes with the result, when both runs are in."
    elif view.challenge_rated:
        rating = "Rated: both ratings move with the result, when both runs are in."
    else:
        rating = "Casual: no rating moves."
    return [RACE_RANKING, rating]
