"""The shape check: it refuses exactly the frames past its limits, compared with the depth,
lengths and value count of the Python values the frames encode; it never raises; its
one-pass shortcut never lets through a frame the walk would refuse."""

from __future__ import annotations

import datetime

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from protocol.msgpack_shape import ShapeLimits, _walk, shape_error
from tests.thorough import examples

SMALL = ShapeLimits(depth=3, length=20, values=120)

scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False)
    | st.text(max_size=300)
    | st.binary(max_size=300)
    | st.builds(msgspec.msgpack.Ext, st.integers(0, 127), st.binary(max_size=20))
    | st.datetimes(timezones=st.just(datetime.UTC))
)
keys = st.text(max_size=5) | st.integers(-5, 300)
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=25) | st.dictionaries(keys, inner, max_size=25),
    max_leaves=150,
)


def measure(value: object) -> tuple[int, int, int]:
    """(depth, longest container, values) of ``value``, as ShapeLimits counts them."""
    if isinstance(value, list):
        inner = [measure(item) for item in value]
    elif isinstance(value, dict):
        inner = [measure(item) for pair in value.items() for item in pair]
    else:
        return (0, 0, 1)
    return (
        1 + max((d for d, _, _ in inner), default=0),
        max([len(value), *(n for _, n, _ in inner)]),
        1 + sum(v for _, _, v in inner),
    )


def within(value: object, limits: ShapeLimits) -> bool:
    depth, longest, count = measure(value)
    return depth <= limits.depth and longest <= limits.length and count <= limits.values


@settings(max_examples=examples(400))
@given(values)
def test_a_frame_is_refused_exactly_when_its_value_breaks_a_limit(value: object) -> None:
    frame = msgspec.msgpack.encode(value)
    assert (shape_error(frame, SMALL) is None) == within(value, SMALL)
    assert (_walk(frame, SMALL) is None) == within(value, SMALL)


@settings(max_examples=examples(400))
@given(st.binary(max_size=400) | values.map(msgspec.msgpack.encode).flatmap(lambda f: st.just(f[: len(f) // 2])))
def test_any_bytes_get_an_answer_and_the_shortcut_agrees_with_the_walk(frame: bytes) -> None:
    error = shape_error(frame, SMALL)
    assert error is None or isinstance(error, str)
    if error is None:
        assert _walk(frame, SMALL) is None
    else:
        assert _walk(frame, SMALL) == error


@pytest.mark.parametrize("depth", [1, 2, 3])
def test_nesting_up_to_the_limit_passes(depth: int) -> None:
    assert shape_error(b"\x91" * depth + b"\xc0", SMALL) is None
    assert shape_error(b"\x81\xa1k" * depth + b"\xc0", SMALL) is None


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b"\x91" * 4 + b"\xc0", id="arrays-one-too-deep"),
        pytest.param(b"\x81\xa1k" * 4 + b"\xc0", id="maps-one-too-deep"),
        pytest.param(b"\x91" * 100_000, id="array-bomb-cut-short"),
        pytest.param(b"\xdd\x00\x00\x00\x01" * 50 + b"\xc0", id="wide-array-bomb"),
        pytest.param(b"\x92\x90" + b"\x91" * 3 + b"\xc0", id="deep-after-an-empty-array"),
        pytest.param(b"\x81\x91\x91\x91\x91\xc0\xc0", id="deep-map-key"),
    ],
)
def test_too_deep_is_refused_without_reading_on(frame: bytes) -> None:
    error = shape_error(frame, SMALL)
    assert error is not None
    assert "nest" in error


def test_empty_containers_count_as_a_level() -> None:
    assert shape_error(b"\x91\x91\x91\x90", SMALL) is not None
    assert shape_error(b"\x91\x91\x90", SMALL) is None


@pytest.mark.parametrize(
    "frame",
    [
        pytest.param(b"\xdc\x00\x15" + b"\xc0" * 21, id="array16"),
        pytest.param(b"\xdd\xff\xff\xff\xff", id="array32-claimed"),
        pytest.param(b"\xde\x00\x15", id="map16-claimed"),
        pytest.param(b"\xdf\x00\x01\x00\x00", id="map32-claimed"),
    ],
)
def test_too_long_a_container_is_refused_by_its_header(frame: bytes) -> None:
    error = shape_error(frame, SMALL)
    assert error is not None
    assert "entries" in error


def test_too_many_values_are_refused() -> None:
    many = msgspec.msgpack.encode([[0] * 20] * 5 + [[0] * 14])  # 1 + 5 * 21 + 15 = 121 values
    assert shape_error(many, SMALL) is not None
    assert shape_error(msgspec.msgpack.encode([[0] * 20] * 5 + [[0] * 13]), SMALL) is None


def test_long_strings_and_binaries_are_one_value_each() -> None:
    frame = msgspec.msgpack.encode(["\x91" * 70_000, b"\x91" * 70_000, msgspec.msgpack.Ext(1, b"\xdc" * 300)])
    assert shape_error(frame, SMALL) is None


def test_frames_cut_short_are_left_to_the_decoder() -> None:
    for frame in (b"", b"\x92\xc0", b"\xdb\xff\xff\xff\xff", b"\xdc\x00", b"\xc7"):
        assert shape_error(frame, SMALL) is None


def test_limits_too_small_for_the_shortcut_are_refused() -> None:
    with pytest.raises(ValueError):
        ShapeLimits(depth=8, length=14, values=1000)
    with pytest.raises(ValueError):
        ShapeLimits(depth=8, length=128, values=240)
