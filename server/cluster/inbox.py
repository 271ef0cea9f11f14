"""What nodes send each other on their inboxes (server/net/forwarding.py): a list of these
messages per publish, MessagePack, each a tagged array.

- :class:`Request`: run a client's request (its frame as the client sent it) on the owner;
- :class:`Resume`: give a player their seat back in one room (a hello on another node);
- :class:`Done`: the request ran (or, ``moved``, the room is not here: ask its owner);
- :class:`Frames`: one frame for some of the receiving node's connections;
- :class:`Gone`: a connection closed, drop its proxy;
- :class:`Reroute`: send these connections to reconnect (their room moved).
"""

from __future__ import annotations

from typing import Final

import msgspec


class _FromClient(msgspec.Struct, array_like=True):
    """Who asks: connection ``link`` of node ``origin``, its player; ``seq`` names the answer."""

    origin: str
    link: int
    seq: int
    player: str
    name: str
    bot: bool


class Request(_FromClient, tag=1):
    frame: bytes
    #: The client's address as its node saw it (per-address limits hold for relayed requests
    #: too); "" from a node of an older version.
    address: str = ""


class Resume(_FromClient, tag=2):
    """Give the player back their seat in ``code`` (a hello on another node)."""

    request: int
    code: str
    address: str = ""  # as Request's


class Done(msgspec.Struct, tag=3, array_like=True):
    seq: int
    moved: bool  # the room is not here: nothing ran, ask its owner


class Frames(msgspec.Struct, tag=4, array_like=True):
    sender: str
    links: list[int]
    frame: bytes


class Gone(msgspec.Struct, tag=5, array_like=True):
    origin: str
    link: int


class Reroute(msgspec.Struct, tag=6, array_like=True):
    """These connections' rooms left ``sender`` (fenced, or handed over by a draining node):
    they follow them again on the new owner; with no sender, they reconnect."""

    links: list[int]
    sender: str = ""


Message = Request | Resume | Done | Frames | Gone | Reroute
ENCODER: Final = msgspec.msgpack.Encoder()
DECODER: Final = msgspec.msgpack.Decoder(list[Message])
