"""Words of the race screens that depend on the kind of room: the top bar (a deal, a daily
attempt, a challenge's run or an arena's race), and what a room that starts at once (practice
alone, or a race against this client's own bot) says while it waits, instead of asking for
racers to invite."""

from __future__ import annotations

from rich.markup import escape

from client.render.challenges import run_words
from client.render.describe import daily_label, variant_title, waiting_text
from protocol.messages import Racer, RoomView

#: The race screen's word for each state of a room.
STATES = {"waiting": "waiting for racers", "countdown": "get ready", "racing": "racing", "finished": "finished"}


def topbar_text(view: RoomView) -> str:
    """The race screen's top bar (Rich markup): the room, its game, what kind of race it is
    (a challenge's run says your side and whether it is rated; an arena's race names its
    arena), its state and how many watch."""
    deal = f" · deal {view.options.deal}" if view.options.deal else ""
    race = f" · race {view.race}"
    if view.daily is not None:
        deal, race = f" · {daily_label(view.daily)}", ""  # one attempt: no race number
    if view.challenge is not None:
        # One attempt too; the challenger is told the id, which the rival needs to play the same deal.
        deal, race = f" · [b]Challenge {view.challenge}[/b]{escape(run_words(view))}", ""
    if view.bracket is not None:
        # The round's one attempt, alone: its places come on the bracket's page when it closes.
        deal, race = f" · [b]Bracket {view.bracket}[/b]: your round's run, one attempt", ""
    if view.arena is not None:
        # Each arena race is a room of its own; the arena's page is one key away.
        deal, race = f" · [b]{escape(view.arena_name or 'Arena race')}[/b] (a: the arena)", ""
    if view.certified is False:
        deal += " · [yellow]random deal, not certified winnable[/yellow]"
    return (
        f"[b]Room {view.code}[/b] · {variant_title(view)}{deal}{race} · {STATES[view.state]}"
        f" · {view.spectators} watching"
    )


def starts_at_once(view: RoomView, with_bot: bool) -> bool:
    """Whether the room's races start without waiting for anyone: a practice room (one
    seat), or a room this client opened for the player and its bot (``with_bot``)."""
    return view.options.max_racers == 1 or with_bot


def ready_at_once(view: RoomView, me: Racer | None, with_bot: bool) -> bool:
    """Whether to ready the player (``me``) at once in a room waiting for its race: as its
    first race did, a rematch in a room that starts at once starts without a key."""
    return view.state == "waiting" and me is not None and not me.ready and starts_at_once(view, with_bot)


def waiting_words(view: RoomView, me: int | None, creator: bool, with_bot: bool) -> str:
    """The room before its race (see :func:`client.render.describe.waiting_text`); a room that
    starts at once has nobody to invite, so it says how it starts instead."""
    text = waiting_text(view, me, creator)
    if not starts_at_once(view, with_bot):
        return text
    how = (
        "you and a bot: the race starts once you are both ready"
        if with_bot
        else "practice: it starts once you are ready"
    )
    return f"[b]Room {view.code}[/b]: {how}." + text[text.index("\n") :]
