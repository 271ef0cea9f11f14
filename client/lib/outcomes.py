"""What a client's requests and sessions come to: a server's error, the end of a session, a
place in a quick-match line (re-exported by :mod:`client.lib.connection`)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from protocol.errors import CloseCode
from protocol.messages import Error, Joined, Variant


class ServerError(Exception):
    """The server answered a request with an error: ``code`` and, for illegal moves, ``rule``."""

    def __init__(self, error: Error) -> None:
        super().__init__(error.message)
        self.code = error.code
        self.rule = error.rule


@dataclass(frozen=True)
class Ended:
    """Why the server ended the session: its close ``code`` (4001 logged out, 4003 banned)
    and the close ``reason`` it gave."""

    code: int
    reason: str

    @property
    def logged_out(self) -> bool:
        return self.code == CloseCode.LOGGED_OUT


@dataclass(eq=False)
class QueueTicket:
    """A place in the quick-match line of ``variant``. ``joined`` receives the server's
    ``joined`` when a race forms (the room's snapshot follows it; the countdown starts by
    itself); it fails with ConnectionError if the connection drops first, since the server
    drops a disconnected player from the line."""

    variant: Variant
    joined: asyncio.Future[Joined] = field(default_factory=lambda: asyncio.get_running_loop().create_future())
