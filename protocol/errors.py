"""Every error code the server sends in an ``error`` frame: one enum, documented in PROTOCOL.md.

``tests/protocol/test_errors.py`` checks that PROTOCOL.md's error table lists exactly these
codes, so the documentation and the code cannot drift apart.
"""

from __future__ import annotations

import enum


class ErrorCode(enum.StrEnum):
    """A wire error code (the ``code`` of an ``error`` frame)."""

    # The frame itself (these count as offences).
    BAD_FRAME = "bad-frame"
    FRAME_TOO_LARGE = "frame-too-large"
    RATE_LIMITED = "rate-limited"
    INVALID_MESSAGE = "invalid-message"
    UNKNOWN_TYPE = "unknown-type"
    # The session.
    HELLO_FIRST = "hello-first"
    UNSUPPORTED_PROTOCOL = "unsupported-protocol"
    ALREADY_HELLO = "already-hello"
    INVALID_NAME = "invalid-name"
    INVALID_TOKEN = "invalid-token"
    TOO_MANY_CONNECTIONS = "too-many-connections"
    TOO_MANY_ROOMS = "too-many-rooms"
    CREATION_LIMIT = "creation-limit"
    # Accounts.
    NAME_TAKEN = "name-taken"
    WEAK_PASSWORD = "weak-password"
    LOGIN_FAILED = "login-failed"
    TOO_MANY_ATTEMPTS = "too-many-attempts"
    ADDRESS_LIMIT = "address-limit"
    INSECURE_TRANSPORT = "insecure-transport"
    ALREADY_ACCOUNT = "already-account"
    ACCOUNT_REQUIRED = "account-required"
    BANNED = "banned"
    # Rooms and races.
    NO_SUCH_ROOM = "no-such-room"
    NOT_IN_ROOM = "not-in-room"
    ROOM_FULL = "room-full"
    RACE_IN_PROGRESS = "race-in-progress"
    RACE_OVER = "race-over"
    NOT_WAITING = "not-waiting"
    NOT_RACING = "not-racing"
    NOT_FINISHED = "not-finished"
    NO_SUCH_RACE = "no-such-race"
    DAILY_SECRET = "daily-secret"
    NO_SUCH_SEAT = "no-such-seat"
    NOT_ALLOWED = "not-allowed"
    INVALID_OPTIONS = "invalid-options"
    INVALID_MOVE = "invalid-move"
    ILLEGAL_MOVE = "illegal-move"
    MOVE_LIMIT = "move-limit"
    NOTHING_TO_UNDO = "nothing-to-undo"
    UNDO_DISABLED = "undo-disabled"
    HINTS_DISABLED = "hints-disabled"
    NOT_IN_QUEUE = "not-in-queue"
    DAILY_UNAVAILABLE = "daily-unavailable"
    DAILY_CLOSED = "daily-closed"
    # The server.
    STORAGE_UNAVAILABLE = "storage-unavailable"
    INTERNAL_ERROR = "internal-error"


class CloseCode(enum.IntEnum):
    """Websocket close codes the server uses (see PROTOCOL.md, "Transport")."""

    GOING_AWAY = 1001
    POLICY_VIOLATION = 1008  # too many offences
    MESSAGE_TOO_BIG = 1009
    INTERNAL_ERROR = 1011  # no pong to a keepalive ping in time
    TRY_AGAIN_LATER = 1013  # the server is full
    SLOW_CONSUMER = 4008  # the client did not read what it was sent
    LOGGED_OUT = 4001  # logout, or the account's tokens were revoked (password change, logout everywhere)
    BANNED = 4003  # an operator banned the player
