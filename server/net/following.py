"""Which rooms on other nodes each of this node's connections follows, and on which owner.

A connection follows a room on another node through its proxy there. When the room changes
owner (its owner died, or was fenced), that proxy is gone with it: the connection must follow
the room again on the new owner before it is served there, or it would get acks and no
updates. This table says, for a connection and a room, in which role it followed it (racer
or spectator) and on which node, so the router can tell when that is no longer the owner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from protocol.messages import ClientMessage, JoinRoom, Leave, Spectate

Role = Literal["racer", "spectator"]


@dataclass(frozen=True, slots=True)
class Followed:
    role: Role
    owner: str


class Following:
    """Link id -> room code -> :class:`Followed`, for rooms other nodes run."""

    def __init__(self) -> None:
        self._by_link: dict[int, dict[str, Followed]] = {}

    def served(self, link: int, code: str, owner: str, message: ClientMessage) -> None:
        """``owner`` served ``message`` for room ``code`` on behalf of connection ``link``."""
        rooms = self._by_link.setdefault(link, {})
        match message:
            case Spectate():
                rooms[code] = Followed("spectator", owner)
            case JoinRoom():
                rooms[code] = Followed("racer", owner)
            case Leave():
                rooms.pop(code, None)
            case _:
                known = rooms.get(code)
                if known is None:
                    rooms[code] = Followed("racer", owner)
                elif known.owner != owner:
                    rooms[code] = Followed(known.role, owner)

    def seated(self, link: int, code: str, owner: str) -> None:
        """``owner`` gave connection ``link`` its seat in room ``code`` back."""
        self._by_link.setdefault(link, {})[code] = Followed("racer", owner)

    def moved(self, link: int, code: str, owner: str | None) -> Role | None:
        """The role in which ``link`` followed ``code`` on a node that is not ``owner`` (the
        room's owner now; None: one that runs here), taken out of the table; None if it did
        not (it followed it on ``owner``, or not at all)."""
        followed = self._by_link.get(link, {}).get(code)
        if followed is None or followed.owner == owner:
            return None
        del self._by_link[link][code]
        return followed.role

    def lost(self, link: int, dead: set[str]) -> dict[str, Role]:
        """The rooms ``link`` followed on any of the ``dead`` nodes, by role, taken out."""
        rooms = self._by_link.get(link, {})
        gone = {code: followed.role for code, followed in rooms.items() if followed.owner in dead}
        for code in gone:
            del rooms[code]
        return gone

    def rooms_of(self, link: int) -> set[str]:
        """The rooms on other nodes ``link`` follows."""
        return set(self._by_link.get(link, ()))

    def put_back(self, link: int, code: str, role: Role, owner: str) -> None:
        """``link`` could not follow ``code`` again: keep it as followed on ``owner``, to try
        again at its next request."""
        self._by_link.setdefault(link, {}).setdefault(code, Followed(role, owner))

    def closed(self, link: int) -> None:
        self._by_link.pop(link, None)

    def clear(self) -> None:
        self._by_link.clear()
