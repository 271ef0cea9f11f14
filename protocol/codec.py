"""Encoding and decoding of protocol frames (MessagePack), shared by server and client.

Decoding validates as it goes: a frame that is not MessagePack, or whose message
does not fit its schema, raises :class:`MalformedFrame` with a message fit to send
back to its author.
"""

from __future__ import annotations

import msgspec

from protocol.messages import ClientMessage, ServerMessage


class MalformedFrame(ValueError):
    """A frame that cannot be read as a protocol message. ``code`` is the error code to
    answer with (``bad-frame`` or ``invalid-message``); ``request_id`` is the frame's
    ``id`` if one could be read."""

    def __init__(self, code: str, message: str, request_id: int | None = None) -> None:
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


def request_id_of(frame: bytes) -> int | None:
    """The ``id`` of a frame that is a MessagePack map with an integer id, else None
    (to answer a request that will not be served, such as a rate-limited one)."""
    try:
        return _id_in(_loose_decoder.decode(frame))
    except msgspec.DecodeError:
        return None


def _invalid(frame: bytes, error: msgspec.ValidationError) -> MalformedFrame:
    """The error for a frame that is MessagePack but not a valid message, with its ``id``
    if it has a readable one, and ``unknown-type`` when its ``type`` names no message."""
    try:
        loose = _loose_decoder.decode(frame)
    except msgspec.DecodeError:
        # Broken further on than where validation stopped: not MessagePack after all.
        return MalformedFrame("bad-frame", f"not a MessagePack message: {error}")
    request_id = _id_in(loose)
    if isinstance(loose, dict):
        kind = loose.get("type")
        if isinstance(kind, str) and kind not in _CLIENT_TYPES:
            return MalformedFrame("unknown-type", f"unknown message type {kind[:40]!r}", request_id)
    return MalformedFrame("invalid-message", f"invalid message: {error}", request_id)


def decode_client(frame: bytes) -> ClientMessage:
    """A client message from ``frame``; :class:`MalformedFrame` if it is not one."""
    try:
        return _client_decoder.decode(frame)
    except msgspec.ValidationError as error:
        raise _invalid(frame, error) from None
    except msgspec.DecodeError as error:
        raise MalformedFrame("bad-frame", f"not a MessagePack message: {error}") from None


def decode_server(frame: bytes) -> ServerMessage:
    """A server message from ``frame``; :class:`MalformedFrame` if it is not one."""
    try:
        return _server_decoder.decode(frame)
    except msgspec.ValidationError as error:
        raise MalformedFrame("invalid-message", f"invalid message: {error}") from None
    except msgspec.DecodeError as error:
        raise MalformedFrame("bad-frame", f"not a MessagePack message: {error}") from None
