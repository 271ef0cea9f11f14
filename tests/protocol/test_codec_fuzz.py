"""Whatever a client sends, decoding ends in a message or a MalformedFrame, nothing else:
any bytes, broken encodings of valid requests, and maps shaped like every request type
(built from the ClientMessage union with msgspec.inspect) whose fields hold values of any
type, missing or extra."""

from __future__ import annotations

import contextlib
import datetime
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.codec import CLIENT_LIMITS, MalformedFrame, decode_client, decode_server, encode, request_id_of
from protocol.messages import ClientMessage
from tests.protocol.test_codec import CLIENT_MESSAGES
from tests.thorough import examples

CODES = {"bad-frame", "invalid-message", "unknown-type"}
REQUEST_TYPES = [
    info
    for kind in ClientMessage.__args__
    if isinstance(info := msgspec.inspect.type_info(kind), msgspec.inspect.StructType)
]

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats()
    | st.text(max_size=40)
    | st.binary(max_size=40)
    | st.builds(msgspec.msgpack.Ext, st.integers(-128, 127), st.binary(max_size=12))
    | st.datetimes(timezones=st.just(datetime.UTC))
)
any_value = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=6) | st.dictionaries(st.text(max_size=8), inner, max_size=6),
    max_leaves=20,
)


def outcome(frame: bytes) -> ClientMessage | MalformedFrame:
    """What decoding ``frame`` gives; fails the test on any exception but MalformedFrame."""
    try:
        return decode_client(frame)
    except MalformedFrame as error:
        malformed = error
    assert malformed.code in CODES, malformed.code
    assert malformed.request_id is None or 0 <= malformed.request_id <= 2**53
    return malformed


@st.composite
def request_shaped(draw: st.DrawFn) -> dict[str, Any]:
    """A map with a request's ``type`` and (mostly) its fields, each holding either a value
    of its own type (from a valid message) or any value; some missing, some extra."""
    info = draw(st.sampled_from(REQUEST_TYPES))
    valid = draw(st.sampled_from([m for m in CLIENT_MESSAGES if msgspec.inspect.type_info(type(m)) == info]))
    fields: dict[str, Any] = {"type": info.tag} if draw(st.integers(0, 9)) else {}
    for field in info.fields:
        choice = draw(st.integers(0, 5))
        if choice == 0:
            continue  # missing
        fields[field.encode_name] = getattr(valid, field.name) if choice < 3 else draw(any_value)
    if not draw(st.integers(0, 5)):
        fields[draw(st.text(max_size=8))] = draw(any_value)
    return fields


@settings(max_examples=examples(1000))
@given(request_shaped())
def test_every_request_shape_with_any_field_values_decodes_or_is_malformed(fields: dict[str, Any]) -> None:
    frame = msgspec.msgpack.encode(fields)
    result = outcome(frame)
    if not isinstance(result, MalformedFrame):
        assert decode_client(encode(result)) == result
    request_id = fields.get("id")
    if (
        isinstance(result, MalformedFrame)
        and result.code != "bad-frame"
        and isinstance(request_id, int)
        and not isinstance(request_id, bool)
        and 0 <= request_id <= 2**53
    ):
        assert result.request_id == request_id
    assert request_id_of(frame) in (None, request_id)


@settings(max_examples=examples(1000))
@given(st.binary(max_size=300))
def test_any_bytes_decode_or_are_malformed(frame: bytes) -> None:
    outcome(frame)
    request_id_of(frame)
    with contextlib.suppress(MalformedFrame):
        decode_server(frame)


@st.composite
def broken_request(draw: st.DrawFn) -> bytes:
    """A valid request's frame with bytes flipped, inserted, deleted, cut off or spliced."""
    frame = bytearray(encode(draw(st.sampled_from(CLIENT_MESSAGES))))
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(frame)))
        action = draw(st.sampled_from(["flip", "insert", "delete", "cut", "splice", "nest"]))
        if action == "flip" and at < len(frame):
            frame[at] ^= 1 << draw(st.integers(0, 7))
        elif action == "insert":
            frame[at:at] = draw(st.binary(min_size=1, max_size=8))
        elif action == "delete":
            del frame[at : at + draw(st.integers(1, 8))]
        elif action == "cut":
            del frame[at:]
        elif action == "splice":
            other = encode(draw(st.sampled_from(CLIENT_MESSAGES)))
            frame[at:] = other[draw(st.integers(0, len(other))) :]
        elif action == "nest":
            frame[at:at] = draw(st.sampled_from([b"\x91", b"\x81\xa1a", b"\xdc\xff\xff"])) * draw(st.integers(1, 2000))
    return bytes(frame)


@settings(max_examples=examples(1000))
@given(broken_request())
def test_broken_requests_decode_or_are_malformed(frame: bytes) -> None:
    outcome(frame)
    request_id_of(frame)


@pytest.mark.parametrize("depth", [9, 100, 1_000, 16_000])
@pytest.mark.parametrize(
    ("prefix", "suffix"),
    [
        pytest.param(b"", b"", id="top-level"),
        pytest.param(b"\x83\xa4type\xa4move\xa2id\x05\xa4room", b"", id="in-a-field"),
        pytest.param(b"\x82\xa1x", b"\xa4type\xa4move", id="before-the-type"),
    ],
)
def test_a_frame_nested_too_deep_is_a_bad_frame(prefix: bytes, suffix: bytes, depth: int) -> None:
    for level in (b"\x91", b"\x81\xa1k"):
        frame = prefix + level * depth + b"\xc0" + suffix
        error = outcome(frame)
        assert isinstance(error, MalformedFrame)
        assert error.code == "bad-frame"
        assert "nest" in str(error)
        assert request_id_of(frame) is None


def test_deep_frames_within_the_limit_are_judged_by_their_content() -> None:
    frame = b"\x83\xa4type\xa4undo\xa2id\x05\xa4room" + b"\x91" * (CLIENT_LIMITS.depth - 1) + b"\xc0"
    error = outcome(frame)
    assert isinstance(error, MalformedFrame)
    assert (error.code, error.request_id) == ("invalid-message", 5)


def test_a_server_frame_too_deep_for_msgspec_is_a_bad_frame() -> None:
    with pytest.raises(MalformedFrame) as caught:
        decode_server(b"\x82\xa1x" + b"\x91" * 100_000 + b"\xc0\xa4type\xa3ack")
    assert caught.value.code == "bad-frame"


def test_every_request_type_is_shaped() -> None:
    assert len(REQUEST_TYPES) == len(ClientMessage.__args__) == 41
