"""Messages a player is sent unasked (a challenge waiting for them or its result, a bracket
started or a round of it closed), on every node that holds one of their connections.

The process that learns the news may hold none of them: it announces the message on the
channel every server process hears (the moderation channel of
:meth:`~server.storage.accounts.AccountStore.announce`, which already reaches a player's
connections on every node for a ban or a logout), as a ``push`` action naming the player and
carrying the encoded frame; each process sends it to the player's connections it holds itself
(:func:`deliver`, from :mod:`server.features.moderation`). A push is a courtesy: the
``inbox`` and ``bracket`` answers hold the same news for a client that was away, or missed it
while storage was away.
"""

from __future__ import annotations

import base64
import binascii
import logging
from collections.abc import Iterable, Mapping
from typing import Final

from protocol.codec import encode
from protocol.messages import ServerMessage
from server.connections.link import ClientLink
from server.ops.log_limits import LogLimiter
from server.storage.accounts import AccountStore
from server.storage.connection import StoreUnavailable

logger = logging.getLogger("server.pushes")
#: Lines a client's doing (or an outage) can cause, limited: never a flood.
_log = LogLimiter(logger)

#: The action of a pushed message on the moderation channel.
PUSH: Final = "push"


def push_event(player: str, message: ServerMessage) -> dict[str, str]:
    """The announcement that sends ``message`` to ``player``'s connections."""
    return {"action": PUSH, "player": player, "frame": base64.b64encode(encode(message)).decode("ascii")}


async def push(accounts: AccountStore, player: str, message: ServerMessage) -> bool:
    """Send ``message`` to every connection ``player`` has open, on any node; False if storage
    was away (logged: nothing is retried)."""
    try:
        await accounts.announce(push_event(player, message))
    except StoreUnavailable as error:
        _log.log(logging.WARNING, "push", "%s not pushed to %s: %s", type(message).__name__, player, error)
        return False
    return True


def deliver(links: Iterable[ClientLink], event: Mapping[str, str]) -> int:
    """Send a ``push`` announcement's frame to ``links`` (the player's connections this process
    holds); how many were sent it. A stand-in for another node's connection is skipped: that
    node heard the announcement too, and delivers it itself."""
    try:
        frame = base64.b64decode(event.get("frame", ""), validate=True)
    except (binascii.Error, ValueError):
        _log.log(logging.WARNING, "push-unreadable", "an unreadable push for %s ignored", event.get("player"))
        return 0
    sent = 0
    for link in list(links):
        if link.socket is not None:
            link.send_frame(frame)
            sent += 1
    return sent
