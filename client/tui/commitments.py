"""The commitments of challenges and bracket rounds this client sees before their deal is
revealed, kept in the settings (as the daily screen keeps the day's), so that the inbox and a
bracket's page check a revealed deal against the commitment seen before it rather than only the
one the server sends beside it (see :mod:`client.render.commitments`).

A challenge's commitment is seen in its ``inbox`` line and in its runs' rooms (``view.commitment``
from the countdown on, which is the same value); a round's in the ``bracket`` answer and, for the
round that opens, in ``round_closed``. The first one seen is kept: a later, different one is what
the check catches.
"""

from __future__ import annotations

from collections.abc import Iterator

from client.lib.settings import Settings, challenge_key, round_key
from protocol.messages import BracketRound, BracketView, Inbox, RoomView, RoundClosed, ServerMessage


def _rounds(url: str, bracket: str, rounds: list[BracketRound]) -> Iterator[tuple[str, str]]:
    for round_ in rounds:
        if round_.commitment is not None and round_.reveal is None:
            yield round_key(url, bracket, round_.number), round_.commitment


def commitments_in(url: str, message: ServerMessage, view: RoomView | None) -> Iterator[tuple[str, str]]:
    """(settings key, commitment) of each commitment that ``message`` from the server at ``url``
    shows before its deal is revealed; ``view``: the room the message changed, if any."""
    if isinstance(message, Inbox):
        for line in message.challenges:
            if line.commitment is not None and line.reveal is None:
                yield challenge_key(url, line.id), line.commitment
    elif isinstance(message, BracketView):
        yield from _rounds(url, message.bracket.id, message.rounds)
    elif isinstance(message, RoundClosed) and message.next is not None:
        yield from _rounds(url, message.bracket.id, [message.next])
    if view is not None and view.challenge is not None and view.commitment is not None and view.reveal is None:
        yield challenge_key(url, view.challenge), view.commitment


def note(settings: Settings, url: str, message: ServerMessage, view: RoomView | None) -> None:
    """Keep (and save) the commitments ``message`` shows that ``settings`` did not hold yet."""
    fresh = [(key, value) for key, value in commitments_in(url, message, view) if key not in settings.commitments]
    if not fresh:
        return
    for key, commitment in fresh:
        settings.seen_commitment(key, commitment)
    settings.save()
