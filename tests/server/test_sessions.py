"""Resume tokens: a signed token proves its player; any other string, however odd, proves
nobody and never raises."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from server.features.sessions import new_player_id, sign, verify

SECRET = b"s" * 32


def test_a_signed_token_proves_its_player() -> None:
    player = new_player_id()
    assert verify(sign(player, SECRET), SECRET) == player
    assert verify(sign(player, SECRET), b"another secret") is None


@pytest.mark.parametrize(
    "token",
    [
        "\u0661\u0662\u0663.abc",  # Arabic-Indic digits: isalnum, not ASCII
        "\u00e9t\u00e9." + "0" * 32,
        "abc.\u0661\u0662",
        "abc.d\u00e9f",
        "\U0001f600.x",
        "",
        ".",
        "abc",
        "abc.",
        ".abc",
        "a" * 33 + ".x",
        "ab cd.ef",
        "\x00.\x00",
    ],
)
def test_garbage_tokens_prove_nobody(token: str) -> None:
    assert verify(token, SECRET) is None


@given(st.text(max_size=80))
def test_any_string_proves_nobody_without_raising(token: str) -> None:
    assert verify(token, SECRET) is None


@given(st.text(max_size=40))
def test_a_token_with_another_signature_or_anything_added_proves_nobody(text: str) -> None:
    token = sign("0123456789abcdef", SECRET)
    signature = token.partition(".")[2]
    assert verify(f"0123456789abcdef.{text}", SECRET) == ("0123456789abcdef" if text == signature else None)
    assert verify(token + text, SECRET) == ("0123456789abcdef" if not text else None)
