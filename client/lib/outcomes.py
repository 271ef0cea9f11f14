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


class Tickets:
    """The places in quick-match lines a client holds, by the id of each request that asked
    (a request sent again adds its new id): each ticket gets the ``joined`` of its race."""

    def __init__(self) -> None:
        self._by_id: dict[int, QueueTicket] = {}

    def __bool__(self) -> bool:
        return bool(self._by_id)

    def hold(self, request_id: int, ticket: QueueTicket) -> None:
        self._by_id[request_id] = ticket

    def drop(self, ticket: QueueTicket) -> None:
        for request_id in [i for i, held in self._by_id.items() if held is ticket]:
            del self._by_id[request_id]

    def joined(self, message: Joined) -> None:
        """A race formed: the ticket of the request ``message`` answers, if any, gets it."""
        ticket = self._by_id.get(message.id)
        if ticket is not None:
            self.drop(ticket)
            if not ticket.joined.done():
                ticket.joined.set_result(message)

    def fail(self, reason: str) -> None:
        """Every place is lost (the connection that held them dropped): each ticket fails."""
        tickets, self._by_id = set(self._by_id.values()), {}
        for ticket in tickets:
            if not ticket.joined.done():
                ticket.joined.set_exception(ConnectionError(reason))
                ticket.joined.exception()  # retrieved: nobody may be waiting on it any more
