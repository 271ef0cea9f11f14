"""The fairness checks and the daily challenge as text: whether a revealed deal and salt
hash to the commitment published before the race (or, for a daily challenge, before the
day), with what the player should know about when a deal is revealed."""

from __future__ import annotations

import datetime as dt
from typing import Final

from client.render.brackets import BRACKET_WAIT
from client.render.challenges import CHALLENGE_WAIT
from client.render.commitments import check
from client.render.describe import count, time_left
from protocol.fairness import verify
from protocol.messages import DailyInfo, DailyReveal, RoomView, Variant


def fairness_text(view: RoomView) -> str:
    """Whether the revealed deal and salt hash to the commitment published at the start
    (a daily challenge's deal stays secret until the day ends; a challenge's run says that
    the result comes when the rival has played: its deal comes in the inbox; a bracket round's
    run, that the round's results come when it closes: its deal comes on the bracket's page)."""
    reveal, commitment = view.reveal, view.commitment
    if view.challenge is not None and reveal is None:
        return CHALLENGE_WAIT
    if view.bracket is not None and reveal is None:
        return BRACKET_WAIT
    if view.daily is not None and reveal is None:
        return (
            f"Daily challenge of {view.daily.date}: everyone plays this deal all day, so it is revealed "
            "when the day ends, with the solver's solution. The daily challenge screen then checks it "
            "against the day's commitment."
        )
    if reveal is None or commitment is None:
        return "Fairness: the deal is not revealed yet."
    if verify(view.variant, reveal.deal, reveal.salt, commitment):
        return (
            f"[green]✓ Fair:[/green] deal {reveal.deal} hashes to the commitment published before the start "
            f"(sha256 {commitment[:16]}…)."
        )
    return (
        f"[red]✗ NOT FAIR:[/red] deal {reveal.deal} with salt {reveal.salt} does not hash to "
        f"the commitment {commitment[:16]}… published before the start."
    )


def replay_open(view: RoomView) -> bool:
    """Whether the server shows the race's replays: a daily attempt's only once its day has
    ended (UTC), since everyone plays that deal all day; a challenge's run not from its room
    (the view never says the challenge is over: the inbox offers its replays then), nor a
    bracket round's run (secret until its round closes, which its view never says either)."""
    if view.challenge is not None or view.bracket is not None:
        return False
    return view.daily is None or view.daily.date < dt.datetime.now(dt.UTC).date().isoformat()


#: Moves of yesterday's solution shown before "…".
SOLUTION_PREVIEW = 8


#: What today's deal is for you, by the server's ``access`` (protocol/values.py, DailyAccess).
ACCESS_TEXT: Final[dict[str, str]] = {
    "ranked": "[b]Your ranked attempt today: not used yet.[/b] Start plays it: one try, no hints, timed.",
    "used": "[b]Your ranked attempt today: used.[/b] Today's deal is played once; practise yesterday's instead.",
    "guest": "[b]Today's deal is for accounts[/b], once each, ranked: register to play it, or practise yesterday's.",
    "bot": "[b]Bots do not play today's deal[/b]: it is the players' competition.",
    "new-account": "[b]Your account is newer than today's deal:[/b] it opens for you tomorrow; practise yesterday's.",
}


def today_text(info: DailyInfo, now_ms: float, first_seen: str) -> str:
    """Today's challenge: date, par, what it is for you, time left and the commitment."""
    attempt = ACCESS_TEXT.get(info.access, ACCESS_TEXT["used"])
    lines = [
        f"[b]{info.variant.capitalize()} · {info.date}[/b] (UTC): the same deal for everyone today.",
        f"Par: {count(info.par, 'move')} (the solver's solution).",
        attempt,
        f"The day ends in {time_left(info.ends - now_ms)}; then the deal and the solver's solution are revealed.",
        f"Commitment to today's deal: sha256 {info.commitment[:16]}…",
    ]
    if first_seen != info.commitment:
        lines.append(f"[red]✗ Earlier today this server published another commitment ({first_seen[:16]}…).[/red]")
    return "\n".join(lines)


def yesterday_text(variant: Variant, reveal: DailyReveal | None, first_seen: str | None) -> str:
    """Yesterday's deal, the solver's solution and the fairness check: the deal and salt
    must hash to the commitment published yesterday (``first_seen``, when this client saw
    it; otherwise the one the server quotes)."""
    if reveal is None:
        return "Yesterday: no daily challenge to reveal."
    moves = reveal.solution
    preview = " ".join(moves[:SOLUTION_PREVIEW]) + (" …" if len(moves) > SOLUTION_PREVIEW else "")
    lines = [
        f"[b]Yesterday ({reveal.date})[/b]: deal {reveal.deal}.",
        f"The solver's solution: {count(len(moves), 'move')}: {preview}",
    ]
    published = first_seen or reveal.commitment
    commitment = f"yesterday's commitment {published[:16]}…"
    source = "which you saw yesterday" if first_seen else "as the server quotes it (this client did not see it then)"
    found = check(variant, reveal.deal, reveal.salt, reveal.commitment, first_seen)
    if found == "changed" and first_seen is not None:
        lines.append(
            f"[red]✗ NOT FAIR:[/red] yesterday this server committed to {first_seen[:16]}…, "
            f"but now quotes {reveal.commitment[:16]}…."
        )
    elif found == "fair":
        lines.append(f"[green]✓ Fair:[/green] the deal and its salt hash to {commitment}, {source}.")
    else:
        lines.append(
            f"[red]✗ NOT FAIR:[/red] deal {reveal.deal} with salt {reveal.salt} does not hash to "
            f"{commitment}, {source}."
        )
    return "\n".join(lines)
