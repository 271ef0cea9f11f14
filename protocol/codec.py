"""Encoding and decoding of protocol frames (MessagePack), shared by server and client.

Decoding validates as it goes: a frame that is not MessagePack, or whose message
does not fit its schema, raises :class:`MalformedFrame` with a message fit to send
back to its author. :func:`decode_client` raises nothing else, whatever the bytes: a
client frame's shape (:data:`CLIENT_LIMITS`) is checked before msgspec builds any of it.
"""

from __future__ import annotations

import msgspec

from protocol.errors import ErrorCode
from protocol.messages import ClientMessage, ServerMessage
from protocol.msgpack_shape import ShapeLimits, shape_error

#: What a client frame may hold. A valid request is a map of a dozen entries at most, nested
#: two deep (``create_room`` options), some 30 values in all: these leave room to grow, and
#: keep the walk over a hostile frame no dearer than decoding one was (bench/codec_speed.py).
CLIENT_LIMITS = ShapeLimits(depth=8, length=128, values=256)


class MalformedFrame(ValueError):
    """A frame that cannot be read as a protocol message. ``code`` is the error code to
    answer with (``bad-frame``, ``invalid-message`` or ``unknown-type``); ``request_id`` is the frame's
    ``id`` if one could be read."""

    def __init__(self, code: ErrorCode, message: str, request_id: int | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.request_id = request_id


_encoder = msgspec.msgpack.Encoder()
_client_decoder = msgspec.msgpack.Decoder(ClientMessage)
_server_decoder = msgspec.msgpack.Decoder(ServerMessage)
_loose_decoder = msgspec.msgpack.Decoder()


def encode(message: ClientMessage | ServerMessage) -> bytes:
    return _encoder.encode(message)


_CLIENT_TYPES = frozenset(msgspec.inspect.type_info(kind).tag for kind in ClientMessage.__args__)  # type: ignore[attr-defined]


def _id_in(loose: object) -> int | None:
    if isinstance(loose, dict):
        value = loose.get("id")
        if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= 2**53:
            return value
    return None


def _loose(frame: bytes) -> object:
    """``frame`` decoded without a schema (only for a frame whose shape is within
    :data:`CLIENT_LIMITS`); ``msgspec.DecodeError`` if it is not MessagePack."""
    try:
        return _loose_decoder.decode(frame)
    except msgspec.DecodeError:
        raise
    except Exception as error:
        # msgspec raises DecodeError for every broken frame we know of; anything else
        # (RecursionError if called deep in a stack) still means "cannot be read".
        raise msgspec.DecodeError(f"{type(error).__name__}: {error}") from None


def request_id_of(frame: bytes) -> int | None:
    """The ``id`` of a frame that is a MessagePack map with an integer id, else None
    (to answer a request that will not be served, such as a rate-limited one)."""
    if shape_error(frame, CLIENT_LIMITS) is not None:
        return None
    try:
        return _id_in(_loose(frame))
    except msgspec.DecodeError:
        return None


def _invalid(frame: bytes, error: msgspec.ValidationError) -> MalformedFrame:
    """The error for a frame that is MessagePack but not a valid message, with its ``id``
    if it has a readable one, and ``unknown-type`` when its ``type`` names no message."""
    try:
        loose = _loose(frame)
    except msgspec.DecodeError:
        # Broken further on than where validation stopped: not MessagePack after all.
        return MalformedFrame(ErrorCode.BAD_FRAME, f"not a MessagePack message: {error}")
    request_id = _id_in(loose)
    if isinstance(loose, dict):
        kind = loose.get("type")
        if isinstance(kind, str) and kind not in _CLIENT_TYPES:
            return MalformedFrame(ErrorCode.UNKNOWN_TYPE, f"unknown message type {kind[:40]!r}", request_id)
    return MalformedFrame(ErrorCode.INVALID_MESSAGE, f"invalid message: {error}", request_id)


def decode_client(frame: bytes) -> ClientMessage:
    """A client message from ``frame``; :class:`MalformedFrame` if it is not one, and
    never another exception. A frame beyond :data:`CLIENT_LIMITS` is a ``bad-frame``
    without being decoded."""
    shape = shape_error(frame, CLIENT_LIMITS)
    if shape is not None:
        raise MalformedFrame(ErrorCode.BAD_FRAME, f"frame refused unread: {shape}")
    try:
        return _client_decoder.decode(frame)
    except msgspec.ValidationError as error:
        raise _invalid(frame, error) from None
    except msgspec.DecodeError as error:
        raise MalformedFrame(ErrorCode.BAD_FRAME, f"not a MessagePack message: {error}") from None
    except Exception as error:
        raise MalformedFrame(ErrorCode.BAD_FRAME, f"not a readable message: {type(error).__name__}") from None


def decode_server(frame: bytes) -> ServerMessage:
    """A server message from ``frame``; :class:`MalformedFrame` if it is not one, and
    never another exception. (No shape check: server frames are large and trusted more;
    a frame too deep for msgspec is still only a ``bad-frame``.)"""
    try:
        return _server_decoder.decode(frame)
    except msgspec.ValidationError as error:
        raise MalformedFrame(ErrorCode.INVALID_MESSAGE, f"invalid message: {error}") from None
    except msgspec.DecodeError as error:
        raise MalformedFrame(ErrorCode.BAD_FRAME, f"not a MessagePack message: {error}") from None
    except Exception as error:
        raise MalformedFrame(ErrorCode.BAD_FRAME, f"not a readable message: {type(error).__name__}") from None
