"""The server's exception tree: what a request is refused with, and what storage fails with.

Two roots, each caught where it means something. A :class:`Refused` is the client's to hear:
the dispatcher (:mod:`server.net.dispatch`) answers it, in one place, with an ``error``
frame carrying its :class:`~protocol.errors.ErrorCode`. A :class:`StorageError` says
storage did not do what was asked, and its subclass says what to do about it::

    Exception
    ├── Refused               server.errors           a request refused (its code, message, rule)
    │   ├── RoomError         server.rooms.errors     a room, race, quick-match or daily rule
    │   │   └── CommandRefused                        the room's state takes no such command
    │   └── AccountError      server.errors           an account or session rule
    └── StorageError          server.errors           storage did not do it
        ├── StoreUnavailable  server.storage.connection  an outage: try again later
        ├── VersionConflict   server.storage.rooms    a stale room step: resynchronise
        └── Fenced            server.storage.rooms    another node owns the room: let it go

The three storage failures are siblings, not kinds of one another: a version conflict is no
outage (Redis answered; the room must reload), and a fenced room is no retry (it belongs to
another node now). Code that treats two of them alike catches both by name. The request that
met one is answered ``storage-unavailable`` (not stored: ask again), a fenced room's after
its runner hands its clients to the new owner.

Outside the tree, exceptions that do not leave their layer as they are: the rules engine's
:class:`~server.games.errors.GameError` (turned into a :class:`RoomError` by the room),
:class:`~server.features.sessions.InvalidName` (``invalid-name``),
:class:`~protocol.codec.MalformedFrame` (the edge answers its code), and programming errors
such as :class:`~server.rooms.lifecycle.LifecycleError` (``internal-error``).

This module imports only the wire's codes, so every layer may raise from it (the pure ones
included).
"""

from __future__ import annotations

from protocol.errors import ErrorCode


class Refused(Exception):
    """A request the server refuses, answered to its client as an ``error`` frame: ``code``
    is the wire error code, the message is for people, ``rule`` names the broken rule of an
    illegal move. Raised as such for a request whose argument fails a check the schema
    cannot make (``invalid-message``: a date that is no day); the subclasses say which rules
    refused the others."""

    def __init__(self, code: ErrorCode, message: str, rule: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.rule = rule


class AccountError(Refused):
    """Raised when an account or session rule refuses a request: a resume token revoked,
    a banned player, too many new players or log-in tries, a password that is weak, wrong,
    or sent in the clear, a name taken, a request only an account may make, too many
    connections of one account."""


class StorageError(Exception):
    """Raised when storage did not do what was asked; the subclass says why and what to do,
    the message which operation it was."""
