"""Words of the race screens that depend on the kind of room: what a room that starts at
once (practice alone, or a race against this client's own bot) says while it waits, instead
of asking for racers to invite."""

from __future__ import annotations

from client.render.describe import waiting_text
from protocol.messages import Racer, RoomView


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
